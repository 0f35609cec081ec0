// The hint: the AI's candidate moves for your seat, as a player reads them. Equivalent moves (Kozel: one
// tile on two ends that show the same number) are one row; each row says what the move is worth and, where
// the move itself says why, a short reason.
//
// What the suggestion gives (GET /v1/jobs/{id}: result.stats.candidates): per move its visits,
// mean_payoff (the mean change of your payoff in the game's own unit: points this deal, columns this game,
// pips this round) and mean_reward (the same scaled to 0-1 by the bounds of that one search, which sizes
// the bar). A row shows the payoff in the game's unit and how many playouts it rests on; a candidate with
// no payoff (an engine that reports only mean_reward) says how it compares with the AI's choice instead.

import { t, num } from "./i18n.js";
import { halves } from "./tiles.js";

// the unit of a payoff change, per rule set
const UNIT = { tiengow: "points", tiengow_wall: "columns", kozel: "pips", tiuu: "points" };

/** Fish points of a Tiu U tile: big fish (8 pips or more) 2 a pip, small fish their red pips. */
export function fishPoints(tile) {
  const [a, b] = halves(tile);
  if (a + b >= 8) return 2 * (a + b);
  return [a, b].reduce((sum, x) => sum + (x === 1 ? 1 : x === 4 ? 4 : 0), 0);
}

/** A short reason that the move itself gives, or "". */
export function reasonFor(m, v) {
  switch (v.rules) {
    case "tiengow":
      if (m.action === "discard") return t("reason.tiengow.discard");
      if (v.table.trick.plays.length === 0) return t("reason.tiengow.lead", { count: m.tiles.length });
      return t("reason.tiengow.beat");
    case "tiengow_wall":
      return m.action === "lead" ? t("reason.wall.lead", { count: m.tiles.length }) : "";
    case "kozel": {
      if (m.action === "draw") return t("reason.kozel.draw");
      if (m.action === "pass") return t("reason.kozel.pass");
      if (m.action === "doubles") return t("reason.kozel.doubles");
      const [a, b] = halves(m.tiles[0]);
      return a === b ? t("reason.kozel.double") : t("reason.kozel.pips", { count: a + b });
    }
    case "tiuu":
      if (m.action === "capture") return t("reason.tiuu.catch", { count: fishPoints(m.hand) + fishPoints(m.pool) });
      if (m.action === "take") return t("reason.tiuu.catch", { count: fishPoints(m.flipped) + fishPoints(m.pool) });
      if (m.action === "triple" || m.action === "fourth") return t("reason.tiuu.stack");
      return "";
    default:
      return "";
  }
}

function weighted(cands, field) {
  let sum = 0;
  let n = 0;
  for (const c of cands) {
    if (c.visits && c[field] !== null && c[field] !== undefined) {
      sum += c[field] * c.visits;
      n += c.visits;
    }
  }
  return n ? sum / n : null;
}

/**
 * The rows of a hint, the AI's choice first: [{move, label, best, share (0-1, the bar), value, reason}].
 * @param {{best: string, candidates: {move: string, visits: number, mean_reward: number|null}[]}} h
 */
export function hintRows(h, v, R0) {
  const groups = [];
  for (const c of h.candidates) {
    const m = v.legal_moves.find((x) => x.id === c.move);
    if (!m) continue;
    const g = groups.find((x) => R0.sameMove && R0.sameMove(x.moves[0], m, v));
    if (g) {
      g.moves.push(m);
      g.cands.push(c);
    } else {
      groups.push({ moves: [m], cands: [c] });
    }
  }
  const rows = groups.map((g) => {
    const best = g.moves.some((m) => m.id === h.best);
    const move = best ? g.moves.find((m) => m.id === h.best) : g.moves[0];
    return {
      move: move.id, m: move, best, label: R0.moveLabel(move, v),
      visits: g.cands.reduce((s, c) => s + (c.visits || 0), 0),
      mean: weighted(g.cands, "mean_reward"), payoff: weighted(g.cands, "mean_payoff"),
    };
  });
  rows.sort((a, b) => (b.best - a.best) || (b.visits - a.visits));
  const top = rows.length ? rows[0].mean : null;
  const maxV = Math.max(1, ...rows.map((r) => r.visits));
  return rows.map((r) => {
    let value;
    if (r.payoff !== null) {
      value = `${t(`hint.value.${UNIT[v.rules] || "points"}`, { value: `${r.payoff > 0 ? "+" : ""}${num(r.payoff, 1)}` })} · ${t("hint.confidence", { count: r.visits })}`;
    } else if (r.mean === null || top === null) {
      value = t("hint.rating.unexplored");
    } else {
      const behind = top - r.mean;
      const rating = r.best ? "best" : behind <= 0.03 ? "close" : behind <= 0.1 ? "weaker" : "much_weaker";
      value = `${t(`hint.rating.${rating}`)} · ${t("hint.confidence", { count: r.visits })}`;
    }
    const share = r.mean !== null ? Math.max(0.04, r.mean) : r.visits / maxV;
    return { move: r.move, label: r.label, best: r.best, share, value, reason: reasonFor(r.m, v) };
  });
}
