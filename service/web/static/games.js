// What differs between the rule sets: how a hand is sorted and grouped, which pieces a move uses, how the
// middle of the table looks, and how each event reads in words. Every field read here is one the view
// or the event log of the API has (docs/rules/*.md, docs/api.md); nothing is invented.

import { tileSVG, backSVG, chineseRank, westernRank, isCivil, tileName } from "./tiles.js";
import { t, has, num, list } from "./i18n.js";

export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

const tiles = (list, set, o = {}) => list.map((t) => tileSVG(t, { set, ...o })).join("");
const backs = (n, set, o = {}) => Array.from({ length: n }, () => backSVG({ set, ...o })).join("");
const fmt = (x) => (Number.isInteger(x) ? num(x) : num(x, 1));
const signed = (x) => (x > 0 ? `+${fmt(x)}` : fmt(x));
const joinTiles = (list) => list.join(" ");

/**
 * An event's sentence: the catalog's "<area>.ev.<what>" with {name} the mover's name, or its
 * "<area>.ev.you_<what>" form when the mover is the player reading (no "You leads").
 * @param {{name: (seat: number) => string, you: number|null}} c
 */
function say(c, key, seat, params = {}) {
  const at = key.lastIndexOf(".");
  const mine = `${key.slice(0, at)}.you_${key.slice(at + 1)}`;
  if (seat !== null && seat !== undefined && seat === c.you && (has(mine) || has(`${mine}.other`))) return t(mine, params);
  return t(key, { name: c.name(seat), ...params });
}

/** The pieces a move uses: hand tiles "h:6-6", pool tiles "p:5-1"; ordered when their order matters. */
function handPieces(move) {
  return { keys: move.tiles.map((t) => `h:${t}`), ordered: false };
}

/** A group's name with its Chinese character beside, unless the name is already that character. */
const withHan = (label, han) => (label.includes(han) ? label : `${label} ${han}`);

function chineseGroups(hand) {
  const sorted = [...hand].sort((a, b) => chineseRank(a) - chineseRank(b));
  return [
    { label: withHan(t("tiengow.civil"), "文"), cls: "civil", tiles: sorted.filter(isCivil) },
    { label: withHan(t("tiengow.military"), "武"), cls: "military", tiles: sorted.filter((x) => !isCivil(x)) },
  ];
}

// ------------------------------------------------------------------------------------------ Tien Gow

const groupWords = (g) => (has(`tiengow.group.${g}`) ? t(`tiengow.group.${g}`) : String(g).replace(/_/g, " "));
const payReason = (r) => (has(`tiengow.reason.${r}`) ? t(`tiengow.reason.${r}`) : String(r).replace(/_/g, " "));

function trickPlay(play, set) {
  if (play.face_up) return tiles(play.tiles, set);
  const own = play.tiles ? ` title="${esc(t("tiengow.own_discard", { tiles: joinTiles(play.tiles) }))}"` : "";
  return `<span class="facedown"${own}>${backs(play.count, set)}</span>`;
}

const tiengow = {
  set: "chinese",
  groups: chineseGroups,
  pieces: handPieces,
  moveLabel(m) {
    return t(m.action === "discard" ? "tiengow.move.discard" : "tiengow.move.play", { tiles: joinTiles(m.tiles) });
  },
  status(v) {
    const tb = v.table;
    const banker = v.seats[tb.banker];
    const out = [t("tiengow.status.deal", { deal: tb.deal, deals: tb.deals })];
    if (v.status !== "finished") out.push(t("tiengow.status.trick", { trick: tb.trick_no }));
    out.push(t("tiengow.status.banker", { name: banker ? banker.name : "-", factor: tb.banker_factor }));
    return out;
  },
  seatStats(v, s) {
    const chips = [`<span class="chip" title="${esc(t("tiengow.columns_title"))}">${esc(t("tiengow.columns_chip", { count: s.columns }))}</span>`];
    if (s.banker) chips.unshift(`<span class="chip banker" title="${esc(t("tiengow.banker_title", { factor: v.table.banker_factor }))}">${esc(t("tiengow.banker"))}</span>`);
    if (s.discarded) chips.push(`<span class="chip muted" title="${esc(t("tiengow.down_title"))}">${esc(t("tiengow.down_chip", { count: s.discarded }))}</span>`);
    return chips.join("");
  },
  /** the middle: the current trick, one slot per seat, and the last finished trick */
  board(v, ctx) {
    const tb = v.table;
    const slots = v.seats.map((s) => {
      const play = tb.trick.plays.find((p) => p.seat === s.seat);
      const high = play && tb.trick.high_seat === s.seat ? " high" : "";
      return `<div class="slot ${ctx.pos(s.seat)}${high}" data-slot="${s.seat}">${play ? trickPlay(play, "chinese") : ""}</div>`;
    }).join("");
    const last = tb.tricks.length ? tb.tricks[tb.tricks.length - 1] : null;
    const lastHtml = last
      ? `<div class="lasttrick"><span class="label">${esc(t("tiengow.last_trick", { name: v.seats[last.winner].name }))}</span>${last.plays.map((p) => `<span class="mini">${trickPlay(p, "chinese")}</span>`).join("")}</div>`
      : "";
    const lead = tb.trick.plays.length === 0 && v.status === "active"
      ? `<div class="hintline">${esc(tb.leader === v.you ? t("tiengow.you_lead", { trick: tb.trick_no }) : t("tiengow.leads_trick", { name: v.seats[tb.leader].name, trick: tb.trick_no }))}</div>` : "";
    return `<div class="trick">${slots}${lead}</div>${lastHtml}`;
  },
  eventText(e, c) {
    const d = e.data;
    switch (e.type) {
      case "lead": return say(c, "tiengow.ev.lead", e.seat, { group: groupWords(d.group), tiles: joinTiles(d.tiles) });
      case "beat": return say(c, "tiengow.ev.beat", e.seat, { tiles: joinTiles(d.tiles) });
      case "discard": return d.tiles ? say(c, "tiengow.ev.discard_tiles", e.seat, { count: d.count, tiles: joinTiles(d.tiles) })
        : say(c, "tiengow.ev.discard", e.seat, { count: d.count });
      case "trick_won": return say(c, "tiengow.ev.trick_won", e.seat, { trick: d.trick, tiles: joinTiles(d.tiles), count: d.columns });
      case "payment": return t(d.from === c.you ? "tiengow.ev.you_pay" : "tiengow.ev.payment", { from: c.name(d.from), to: c.name(d.to), amount: d.amount, reason: payReason(d.reason) });
      case "deal_end": return t("tiengow.ev.deal_end", { deal: d.deal, name: c.name(d.last_trick_winner) });
      case "deal": return t(d.banker === c.you ? "tiengow.ev.deal_you" : "tiengow.ev.deal", { deal: d.deal, name: c.name(d.banker) });
      case "match_end": return t("event.match_end");
      default: return null;
    }
  },
  /** an event drawn as it happens: a play lands in the seat's slot, a won trick lights up */
  animate(e, ctx) {
    const d = e.data;
    if (e.type === "lead" || e.type === "beat" || e.type === "discard") {
      const slot = ctx.root.querySelector(`[data-slot="${e.seat}"]`);
      if (slot) {
        if (e.type === "lead") ctx.root.querySelectorAll("[data-slot]").forEach((el) => { el.innerHTML = ""; el.classList.remove("high"); });
        if (e.type === "beat") ctx.root.querySelectorAll("[data-slot]").forEach((el) => el.classList.remove("high"));
        slot.innerHTML = `<span class="landing">${trickPlay({ face_up: d.face_up, tiles: d.tiles, count: d.count }, "chinese")}</span>`;
        if (e.type !== "discard") slot.classList.add("high");
        return true;
      }
    }
    if (e.type === "trick_won") {
      const slot = ctx.root.querySelector(`[data-slot="${e.seat}"]`);
      if (slot) slot.classList.add("won");
      return true;
    }
    return false;
  },
  roundSummary(e, c, v, level = 2) {
    if (e.type !== "deal_end") return null;
    const d = e.data;
    if (!d.columns) return null;  // a resigned deal: the result tells it
    const rows = v.seats.map((s) => `<tr><td>${esc(s.name)}${d.banker === s.seat ? ` <span class="chip banker">${esc(t("tiengow.banker"))}</span>` : ""}</td><td class="num">${num(d.columns[s.seat])}</td><td class="num">${signed(d.net[s.seat])}</td></tr>`).join("");
    const pays = [...(d.immediate || []), ...(d.settlement || [])].map((p) => `<li>${esc(c.name(p.from))} → ${esc(c.name(p.to))}: ${num(p.amount)} <span class="muted">(${esc(payReason(p.reason))})</span></li>`).join("");
    const extra = [d.multiplier > 1 ? t("tiengow.summary.multiplier", { factor: d.multiplier }) : "", d.capture ? t("tiengow.summary.capture") : ""].filter(Boolean).map((x) => ` — ${esc(x)}`).join("");
    return `<h${level} class="sumtitle">${esc(t("tiengow.summary.deal", { deal: d.deal }))}</h${level}><p>${t("tiengow.summary.last", { name: esc(c.name(d.last_trick_winner)), tiles: tiles(d.last_group, "chinese", {}) })}${extra}.</p>
      <table class="results"><thead><tr><th>${esc(t("result.player"))}</th><th class="num">${esc(t("tiengow.summary.columns"))}</th><th class="num">${esc(t("tiengow.summary.net"))}</th></tr></thead><tbody>${rows}</tbody></table>${pays ? `<ul class="payments">${pays}</ul>` : ""}`;
  },
};

// ------------------------------------------------------------------------------ Tien Gow, wall and dice

const dicePurpose = (p) => (has(`wall.dice.${String(p).replace(/ /g, "_")}`) ? t(`wall.dice.${String(p).replace(/ /g, "_")}`) : p);

const tiengowWall = {
  set: "chinese",
  groups: chineseGroups,
  pieces(m) {
    if (m.action !== "place") return handPieces(m);
    const keys = [];
    m.columns.forEach((c, i) => { keys[c] = `h:${m.tiles[i]}`; });
    return { keys, ordered: true };
  },
  moveLabel(m) {
    if (m.action === "lead") return t("wall.move.lead", { tiles: joinTiles(m.tiles) });
    return t("wall.move.place", { placements: m.columns.map((c, i) => `${m.tiles[i]}→${c + 1}`).join(" ") });
  },
  selectionNote(v, sel) {
    if (!v.table.columns.length || v.table.leader === v.you) return null;
    return t("wall.note", { n: sel.length, total: v.table.columns.length });
  },
  status(v) {
    const tb = v.table;
    const out = [t("wall.status.game", { game: tb.game, games: tb.games })];
    if (v.status !== "finished") out.push(t("wall.status.round", { round: tb.round }), t("wall.status.leader", { name: v.seats[tb.leader].name }));
    return out;
  },
  seatStats(v, s) {
    return `<span class="chip" title="${esc(t("wall.columns_title"))}">${esc(t("tiengow.columns_chip", { count: s.columns }))}</span>`;
  },
  board(v) {
    const tb = v.table;
    const col = (c, i) => `<div class="wallcol"><span class="label">${esc(t("wall.column", { n: i + 1 }))}</span>
      <div class="stack">${c.tiles.map((x) => `<span class="placed" title="${esc(v.seats[x.seat].name)}">${tileSVG(x.tile, { set: "chinese" })}<small>${esc(v.seats[x.seat].name)}</small></span>`).join("")}</div>
      <span class="owner">${c.owner !== null && c.owner !== undefined ? esc(t("wall.top", { name: v.seats[c.owner].name })) : ""}</span></div>`;
    const leads = tb.leader === v.you ? t("wall.you_lead_round", { round: tb.round }) : t("wall.leads_round", { name: v.seats[tb.leader].name, round: tb.round });
    const cols = tb.columns.length ? tb.columns.map(col).join("") : v.status === "finished" ? "" : `<div class="hintline">${esc(leads)}</div>`;
    const throws = tb.dice ? tb.dice.throws.map((round) => round.map(([s, a, b]) => `${v.seats[s].name} ${a}+${b}`).join(", ")).join(" / ") : "";
    const dice = tb.dice ? `<div class="dice" title="${esc(t("wall.dice_title"))}">${esc(t("wall.dice", { purpose: dicePurpose(tb.dice.purpose), throws, name: v.seats[tb.dice.winner].name }))}</div>` : "";
    const last = tb.last_round ? `<div class="lasttrick"><span class="label">${esc(t("wall.last_round"))}</span>${tb.last_round.columns.map((c) => `<span class="mini">${tiles(c.tiles.map((x) => x.tile), "chinese")}</span>`).join("")}</div>` : "";
    const stand = tb.standing_pair ? `<div class="hintline">${esc(t("wall.standing_pair", { tiles: `${joinTiles(tb.standing_pair.tiles)} (${v.seats[tb.standing_pair.seat].name})` }))}</div>` : "";
    return `<div class="wall">${cols}</div>${stand}${dice}${last}`;
  },
  eventText(e, c) {
    const d = e.data;
    switch (e.type) {
      case "lead": return say(c, d.pair ? "wall.ev.lead_pair" : "wall.ev.lead", e.seat, { tiles: joinTiles(d.tiles) });
      case "place": {
        const placements = d.placements.map((p) => t(p.on_top ? "wall.ev.on_top" : "wall.ev.under", { tile: p.tile, n: p.column + 1 })).join(", ");
        return `${say(c, "wall.ev.place", e.seat, { placements })}${d.by_pair ? ` ${t("wall.ev.by_pair")}` : ""}`;
      }
      case "round": return t(d.next_leader === c.you ? "wall.ev.round_you" : "wall.ev.round", { round: d.round, game: d.game, won: d.won.map((w, s) => (w ? `${c.name(s)} ${w}` : null)).filter(Boolean).join(", ") || t("wall.ev.none"), name: c.name(d.next_leader) });
      case "game_end": return t("wall.ev.game_end", { game: d.game, points: (d.points || []).join("/") });
      case "deal": return t(d.opener === c.you ? "wall.ev.deal_you" : "wall.ev.deal", { game: d.game, name: c.name(d.opener) });
      case "match_end": return t("event.match_end");
      default: return null;
    }
  },
  roundSummary(e, c, v, level = 2) {
    if (e.type !== "game_end") return null;
    const d = e.data;
    if (!d.columns) return null;
    // the game_end event carries the running points; the result's deals name the last round's winner
    const points = Array.isArray(d.points);
    return `<h${level} class="sumtitle">${esc(t("wall.summary.game", { game: d.game }))}</h${level}>${d.last_round_winner !== undefined && d.last_round_winner !== null ? `<p>${esc(t("wall.summary.last", { name: c.name(d.last_round_winner) }))}</p>` : ""}
      <table class="results"><thead><tr><th>${esc(t("result.player"))}</th><th class="num">${esc(t("tiengow.summary.columns"))}</th>${points ? `<th class="num">${esc(t("wall.summary.points"))}</th>` : ""}</tr></thead><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td><td class="num">${num(d.columns[s.seat])}</td>${points ? `<td class="num">${num(d.points[s.seat])}</td>` : ""}</tr>`).join("")}</tbody></table>`;
  },
};

// -------------------------------------------------------------------------------------------- Kozel

const endWord = (end) => t(`kozel.ev.end.${end}`);

const kozel = {
  set: "western",
  groups(hand) {
    return [{ label: "", cls: "", tiles: [...hand].sort((a, b) => westernRank(a) - westernRank(b)) }];
  },
  pieces: handPieces,
  moveLabel(m, v) {
    if (m.action === "draw") return t("kozel.move.draw", { count: v.table.bazaar_size });
    if (m.action === "pass") return t("kozel.move.pass");
    if (m.action === "doubles") return t("kozel.move.doubles", { left: m.left, right: m.right });
    if (m.end === "left") return t("kozel.move.left", { tile: m.tiles[0], end: v.table.ends[0] });
    if (m.end === "right") return t("kozel.move.right", { tile: m.tiles[0], end: v.table.ends[1] });
    return t("kozel.move.open", { tile: m.tiles[0] });
  },
  /** Moves that are the same play: one tile on two ends that show the same number. */
  sameMove(a, b, v) {
    return a.action === "play" && b.action === "play" && a.tiles[0] === b.tiles[0] && a.end !== b.end
      && v.table.ends && v.table.ends[0] === v.table.ends[1];
  },
  status(v) {
    const tb = v.table;
    const s = [t("kozel.status.round", { round: tb.round }), t("kozel.status.bazaar", { count: tb.bazaar_size }), t("kozel.status.goat", { target: tb.target })];
    if (tb.ends) s.push(t("kozel.status.ends", { left: tb.ends[0], right: tb.ends[1] }));
    return s;
  },
  seatStats(v, s) {
    const chips = [`<span class="chip" title="${esc(t("kozel.total_title", { target: v.table.target }))}">${num(s.score)} / ${num(v.table.target)}</span>`];
    chips.push(s.opened ? `<span class="chip muted" title="${esc(t("kozel.open_title"))}">${esc(t("kozel.open"))}</span>` : `<span class="chip muted" title="${esc(t("kozel.not_open_title", { threshold: v.table.opening_threshold }))}">${esc(t("kozel.not_open"))}</span>`);
    if (s.drawn) chips.push(`<span class="chip muted" title="${esc(t("kozel.drew_title"))}">${esc(t("kozel.drew", { count: s.drawn }))}</span>`);
    return chips.join("");
  },
  board(v, ctx) {
    const tb = v.table;
    const line = tb.line.map((x, i) => {
      const dbl = x.halves[0] === x.halves[1];
      return `<span class="linetile${dbl ? " double" : ""}" data-line="${i}">${tileSVG(x.tile, { set: "western", horizontal: !dbl, first: x.halves[0] })}</span>`;
    }).join("");
    const endBtn = (side, i) => {
      const live = ctx.endTargets.includes(side);
      const val = tb.ends ? tb.ends[i] : "";
      return `<button class="end ${side}${live ? " live" : ""}" data-end="${side}" ${live ? "" : "disabled"} aria-label="${esc(t(`kozel.end.${side}`, { value: val }))}">${side === "left" ? "◀" : ""} ${val} ${side === "right" ? "▶" : ""}</button>`;
    };
    const bazaar = tb.bazaar_size ? `<div class="bazaar" title="${esc(t("kozel.bazaar_title", { count: tb.bazaar_size }))}">${backs(Math.min(tb.bazaar_size, 14), "western", { horizontal: true })}<span class="count">${tb.bazaar_size}</span></div>` : "";
    return `<div class="kline">${tb.line.length ? endBtn("left", 0) : ""}<div class="linetiles">${line || `<span class="hintline">${esc(t("kozel.empty_line"))}</span>`}</div>${tb.line.length ? endBtn("right", 1) : ""}</div>${bazaar}`;
  },
  eventText(e, c) {
    const d = e.data;
    switch (e.type) {
      case "deal": return t(d.lead ? "kozel.ev.deal_lead" : "kozel.ev.deal", { round: d.round, size: d.hand_sizes[0], bazaar: d.bazaar_size, tile: d.lead });
      case "play": return d.end === "first" ? say(c, "kozel.ev.open", e.seat, { tile: d.tile })
        : say(c, "kozel.ev.play", e.seat, { tile: d.tile, end: endWord(d.end), left: d.ends[0], right: d.ends[1] });
      case "doubles": return say(c, "kozel.ev.doubles", e.seat, { left: d.left, right: d.right });
      case "draw": return say(c, "kozel.ev.draw", e.seat, { tile: d.tile || "", count: d.bazaar_size });
      case "pass": return say(c, "kozel.ev.pass", e.seat);
      case "round_end": {
        const points = d.points.join("/");
        if (d.reason === "fish") return t("kozel.ev.round_end_fish", { round: d.round, points });
        if (d.reason === "resign") return t("kozel.ev.round_end_resign", { round: d.round, name: c.name(d.out) });
        return d.out === c.you ? t("kozel.ev.round_end_you_out", { round: d.round, points }) : t("kozel.ev.round_end_out", { round: d.round, name: c.name(d.out), points });
      }
      case "match_end":
        if (!d.goats) return t("event.match_end");
        if (d.goats.length === 1 && d.goats[0] === c.you) return t("kozel.ev.match_end_you");
        return t("kozel.ev.match_end", { count: d.goats.length, names: list(d.goats.map(c.name)) });
      default: return null;
    }
  },
  roundSummary(e, c, v, level = 2) {
    if (e.type !== "round_end") return null;
    const d = e.data;
    let how;
    if (d.reason === "fish") how = t("kozel.summary.fish");
    else if (d.reason === "resign") how = d.out === c.you ? t("kozel.summary.you_resigned") : t("kozel.summary.resigned", { name: c.name(d.out) });
    else how = d.out === c.you ? t("kozel.summary.you_out") : t("kozel.summary.out", { name: c.name(d.out) });
    return `<h${level} class="sumtitle">${esc(t("kozel.summary.round", { round: d.round }))}</h${level}><p>${esc(how)}</p>
      <table class="results"><thead><tr><th>${esc(t("result.player"))}</th><th>${esc(t("kozel.summary.hand"))}</th><th class="num">${esc(t("kozel.summary.points"))}</th><th class="num">${esc(t("kozel.summary.total"))}</th></tr></thead><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td><td class="reveal">${d.hands[s.seat].length ? tiles(d.hands[s.seat], "western") : "—"}</td><td class="num">${num(d.points[s.seat])}</td><td class="num">${num(d.totals[s.seat])}</td></tr>`).join("")}</tbody></table>`;
  },
  revealed(result) {
    const last = result.deals && result.deals[result.deals.length - 1];
    return last && last.hands ? { title: t("result.hands_left", { round: last.round }), hands: last.hands } : null;
  },
};

// -------------------------------------------------------------------------------------------- Tiu U

const tiuu = {
  set: "chinese",
  groups: chineseGroups,
  pieces(m) {
    if (m.action === "capture") return { keys: [`h:${m.hand}`, `p:${m.pool}`], ordered: false };
    if (m.action === "take") return { keys: [`p:${m.pool}`], ordered: false };
    if (m.action === "triple" || m.action === "fourth") return { keys: [`h:${m.tiles[0]}`], ordered: false };
    return { keys: [], ordered: false };
  },
  moveLabel(m) {
    switch (m.action) {
      case "capture": return t("tiuu.move.capture", { pool: m.pool, hand: m.hand });
      case "take": return t("tiuu.move.take", { pool: m.pool, flipped: m.flipped });
      case "triple": return t("tiuu.move.triple", { tile: m.tiles[0] });
      case "fourth": return t("tiuu.move.fourth", { tile: m.tiles[0] });
      case "flip": return t("tiuu.move.flip");
      default: return m.id;
    }
  },
  status(v) {
    const tb = v.table;
    const out = [t("tiuu.status.game", { game: tb.game, games: tb.games })];
    if (v.status !== "finished") out.push(t("tiuu.status.part", { part: tb.part }));
    out.push(t("tiuu.status.stock", { count: tb.stock_size }));
    return out;
  },
  seatStats(v, s) {
    const chips = [`<span class="chip" title="${esc(t("tiuu.fish_title"))}">${num(s.catch_points)} → ${num(s.catch_rounded)}</span>`];
    if (s.score) chips.push(`<span class="chip muted" title="${esc(t("tiuu.points_title"))}">${esc(t("tiuu.points_chip", { points: signed(s.score) }))}</span>`);
    return chips.join("");
  },
  seatExtra(v, s) {
    const known = s.known_hand && s.known_hand.length && s.seat !== v.you
      ? `<div class="known"><span class="label">${esc(t("tiuu.known"))}</span>${tiles(s.known_hand, "chinese")}</div>` : "";
    const c = s.catch.length ? `<div class="catch"><span class="label">${esc(t("tiuu.catch"))}</span><div class="mini">${tiles(s.catch, "chinese")}</div></div>` : "";
    return c + known;
  },
  board(v, ctx) {
    const tb = v.table;
    const pool = tb.pool.map((x, i) => ctx.piece(`p:${x}`, i, tileSVG(x, { set: "chinese" }))).join("");
    const flipped = tb.flipped ? `<div class="flipped"><span class="label">${esc(t("tiuu.flipped"))}</span>${tileSVG(tb.flipped, { set: "chinese" })}</div>` : "";
    // the stock: face-down stacks of 4, with the face-up stacks at their place from the left end
    const parts = [];
    let left = 0;
    const faceDownStacks = (n) => {
      const out = [];
      for (let k = 0; k < n; k += 4) out.push(`<span class="stockstack" title="${esc(t("tiuu.face_down", { count: Math.min(4, n - k) }))}">${backs(1, "chinese")}<small>${Math.min(4, n - k)}</small></span>`);
      return out.join("");
    };
    for (const s of tb.stacks) {
      if (s.from_left > left) parts.push(faceDownStacks(s.from_left - left));
      parts.push(`<span class="stockstack up" title="${esc(t("tiuu.face_up_stack", { count: s.count }))}">${tileSVG(s.tile, { set: "chinese" })}<small>×${s.count}</small></span>`);
      left = s.from_left + s.count;
    }
    if (tb.stock_size > left) parts.push(faceDownStacks(tb.stock_size - left));
    return `<div class="stock"><span class="label">${esc(t("tiuu.stock", { count: tb.stock_size }))}</span><div class="stockrow">${parts.join("") || esc(t("tiuu.empty"))}</div></div>
      ${flipped}<div class="pool"><span class="label">${esc(t("tiuu.pool"))}</span><div class="pooltiles">${pool || `<span class="muted">${esc(t("tiuu.empty"))}</span>`}</div></div>`;
  },
  eventText(e, c) {
    const d = e.data;
    switch (e.type) {
      case "deal": return t(d.first === c.you ? "tiuu.ev.deal_you" : "tiuu.ev.deal", { game: d.game, name: c.name(d.first), pool: d.pool.length, stock: d.stock });
      case "six_six_pairs": return say(c, "tiuu.ev.six_six_pairs", e.seat, { count: d.tiles.length / 2 });
      case "capture": return say(c, "tiuu.ev.capture", e.seat, { pool: d.pool, hand: d.hand });
      case "take": return say(c, "tiuu.ev.take", e.seat, { pool: d.pool, flipped: d.flipped });
      case "flip": return say(c, d.was_face_up ? "tiuu.ev.flip_up" : "tiuu.ev.flip", e.seat, { tile: d.tile });
      case "triple": return say(c, "tiuu.ev.triple", e.seat, { tile: d.tile });
      case "fourth": return say(c, d.captured ? "tiuu.ev.fourth_caught" : "tiuu.ev.fourth", e.seat, { tile: d.tile });
      case "draw": return say(c, "tiuu.ev.draw", e.seat, { count: d.count, tiles: d.tiles ? joinTiles(d.tiles) : "" });
      case "no_hand_play": return say(c, "tiuu.ev.no_hand_play", e.seat);
      case "game_end": return t("tiuu.ev.game_end", { game: d.game || "" });
      case "match_end": return t("event.match_end");
      default: return null;
    }
  },
  roundSummary(e, c, v, level = 2) {
    if (e.type !== "game_end") return null;
    const d = e.data;
    const pays = (d.payments || []).map((p) => `<li>${esc(c.name(p.from))} → ${esc(c.name(p.to))}: ${num(p.amount)}</li>`).join("");
    return `<h${level} class="sumtitle">${esc(t("tiuu.summary.game", { game: d.game }))}</h${level}><p class="muted">${esc(t("tiuu.summary.note"))}</p>${genericDealTable(d, v)}${pays ? `<ul class="payments">${pays}</ul>` : ""}`;
  },
};

function genericDealTable(d, v) {
  const cols = ["raw", "rounded", "net", "points"].filter((k) => Array.isArray(d[k]));
  return `<table class="results"><thead><tr><th>${esc(t("result.player"))}</th>${cols.map((c) => `<th class="num">${esc(t(`tiuu.head.${c}`))}</th>`).join("")}</tr></thead><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td>${cols.map((c) => `<td class="num">${fmt(d[c][s.seat])}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
}

export const RULESETS = { tiengow, tiengow_wall: tiengowWall, kozel, tiuu };

export { tiles as tilesHTML, backs as backsHTML, signed, fmt, tileName, esc as escape };
