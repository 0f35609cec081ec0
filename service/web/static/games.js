// What differs between the rule sets: how a hand is sorted and grouped, which pieces a move uses, how the
// middle of the table looks, and how each event reads in words. Every field read here is one the view
// or the event log of the API has (docs/rules/*.md, docs/api.md); nothing is invented.

import { tileSVG, backSVG, chineseRank, westernRank, isCivil, tileName } from "./tiles.js";

export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

const tiles = (list, set, o = {}) => list.map((t) => tileSVG(t, { set, ...o })).join("");
const backs = (n, set, o = {}) => Array.from({ length: n }, () => backSVG({ set, ...o })).join("");
const fmt = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
const signed = (x) => (x > 0 ? `+${fmt(x)}` : fmt(x));

/** The pieces a move uses: hand tiles "h:6-6", pool tiles "p:5-1"; ordered when their order matters. */
function handPieces(move) {
  return { keys: move.tiles.map((t) => `h:${t}`), ordered: false };
}

function chineseGroups(hand) {
  const sorted = [...hand].sort((a, b) => chineseRank(a) - chineseRank(b));
  return [
    { label: "Civil 文", cls: "civil", tiles: sorted.filter(isCivil) },
    { label: "Military 武", cls: "military", tiles: sorted.filter((t) => !isCivil(t)) },
  ];
}

// ------------------------------------------------------------------------------------------ Tien Gow

const GROUP_WORDS = {
  civil_single: "a civil single", military_single: "a military single", civil_pair: "a civil pair",
  military_pair: "a military pair", supreme: "the Supreme pair", mixed_pair: "a mixed pair",
  triple_2c1m: "a mixed triple", triple_1c2m: "a mixed triple", quartet: "a quartet",
};

function trickPlay(play, set) {
  if (play.face_up) return tiles(play.tiles, set);
  const own = play.tiles ? ` title="your face-down discard: ${esc(play.tiles.join(" "))}"` : "";
  return `<span class="facedown"${own}>${backs(play.count, set)}</span>`;
}

const tiengow = {
  set: "chinese",
  groups: chineseGroups,
  pieces: handPieces,
  moveLabel(m) {
    return m.action === "discard" ? `Discard ${m.tiles.join(" ")} face down` : `Play ${m.tiles.join(" ")}`;
  },
  status(v) {
    const t = v.table;
    const banker = v.seats[t.banker];
    return [`Deal ${t.deal} of ${t.deals}`, `Trick ${t.trick_no}`, `Banker: ${banker ? banker.name : "-"} (×${t.banker_factor})`];
  },
  seatStats(v, s) {
    const chips = [`<span class="chip" title="columns won this deal">${s.columns} col</span>`];
    if (s.banker) chips.unshift(`<span class="chip banker" title="the banker: payments ×${v.table.banker_factor}">Banker</span>`);
    if (s.discarded) chips.push(`<span class="chip muted" title="tiles discarded face down">${s.discarded} down</span>`);
    return chips.join("");
  },
  /** the middle: the current trick, one slot per seat, and the last finished trick */
  board(v, ctx) {
    const t = v.table;
    const slots = v.seats.map((s) => {
      const play = t.trick.plays.find((p) => p.seat === s.seat);
      const high = play && t.trick.high_seat === s.seat ? " high" : "";
      return `<div class="slot ${ctx.pos(s.seat)}${high}" data-slot="${s.seat}">${play ? trickPlay(play, "chinese") : ""}</div>`;
    }).join("");
    const last = t.tricks.length ? t.tricks[t.tricks.length - 1] : null;
    const lastHtml = last
      ? `<div class="lasttrick"><span class="label">Last trick → ${esc(v.seats[last.winner].name)}</span>${last.plays.map((p) => `<span class="mini">${trickPlay(p, "chinese")}</span>`).join("")}</div>`
      : "";
    const lead = t.trick.plays.length === 0 && v.status === "active"
      ? `<div class="hintline">${t.leader === v.you ? "You lead" : `${esc(v.seats[t.leader].name)} leads`} trick ${t.trick_no}</div>` : "";
    return `<div class="trick">${slots}${lead}</div>${lastHtml}`;
  },
  eventText(e, name) {
    const d = e.data;
    switch (e.type) {
      case "lead": return `${name(e.seat)} leads ${GROUP_WORDS[d.group] || String(d.group).replace(/_/g, " ")}: ${d.tiles.join(" ")}`;
      case "beat": return `${name(e.seat)} beats with ${d.tiles.join(" ")}`;
      case "discard": return `${name(e.seat)} discards ${d.count} face down${d.tiles ? ` (${d.tiles.join(" ")})` : ""}`;
      case "trick_won": return `${name(e.seat)} wins trick ${d.trick} with ${d.tiles.join(" ")}: ${d.columns} column${d.columns > 1 ? "s" : ""}`;
      case "payment": return `${name(d.from)} pays ${name(d.to)} ${d.amount} (${String(d.reason).replace(/_/g, " ")})`;
      case "deal_end": return `Deal ${d.deal} ends: ${name(d.last_trick_winner)} won the last trick`;
      case "deal": return `Deal ${d.deal}: ${name(d.banker)} is the banker`;
      case "match_end": return "The match is over";
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
        return 650;
      }
    }
    if (e.type === "trick_won") {
      const slot = ctx.root.querySelector(`[data-slot="${e.seat}"]`);
      if (slot) slot.classList.add("won");
      return 900;
    }
    return null;
  },
  roundSummary(e, name, v) {
    if (e.type !== "deal_end") return null;
    const d = e.data;
    const rows = v.seats.map((s) => `<tr><td>${esc(s.name)}${d.banker === s.seat ? ' <span class="chip banker">Banker</span>' : ""}</td><td class="num">${d.columns[s.seat]}</td><td class="num">${signed(d.net[s.seat])}</td></tr>`).join("");
    const pays = [...d.immediate, ...d.settlement].map((p) => `<li>${esc(name(p.from))} → ${esc(name(p.to))}: ${p.amount} <span class="muted">(${esc(String(p.reason).replace(/_/g, " "))})</span></li>`).join("");
    return `<h3>Deal ${d.deal}</h3><p>${esc(name(d.last_trick_winner))} won the last trick with ${tiles(d.last_group, "chinese", {})}${d.multiplier > 1 ? ` — payments ×${d.multiplier}` : ""}${d.capture ? " — the Little Three leader was captured" : ""}.</p>
      <table class="results"><thead><tr><th>Player</th><th class="num">Columns</th><th class="num">Net</th></tr></thead><tbody>${rows}</tbody></table>${pays ? `<ul class="payments">${pays}</ul>` : ""}`;
  },
};

// ------------------------------------------------------------------------------ Tien Gow, wall and dice

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
    if (m.action === "lead") return `Lead ${m.tiles.join(" ")}`;
    return `Place ${m.columns.map((c, i) => `${m.tiles[i]}→${c + 1}`).join(" ")}`;
  },
  selectionNote(v, sel) {
    if (!v.table.columns.length || v.table.leader === v.you) return null;
    return `Pick one tile per column, in column order: ${sel.length} of ${v.table.columns.length}`;
  },
  status(v) {
    const t = v.table;
    return [`Game ${t.game} of ${t.games}`, `Round ${t.round}`, `Leader: ${v.seats[t.leader].name}`];
  },
  seatStats(v, s) {
    return `<span class="chip" title="columns won this game">${s.columns} col</span>`;
  },
  board(v) {
    const t = v.table;
    const col = (c, i) => `<div class="wallcol${c.owner !== null && c.owner !== undefined ? "" : ""}"><span class="label">Column ${i + 1}</span>
      <div class="stack">${c.tiles.map((x) => `<span class="placed" title="${esc(v.seats[x.seat].name)}">${tileSVG(x.tile, { set: "chinese" })}<small>${esc(v.seats[x.seat].name)}</small></span>`).join("")}</div>
      <span class="owner">${c.owner !== null && c.owner !== undefined ? `top: ${esc(v.seats[c.owner].name)}` : ""}</span></div>`;
    const cols = t.columns.length ? t.columns.map(col).join("") : `<div class="hintline">${esc(v.seats[t.leader].name)} leads round ${t.round}</div>`;
    const dice = t.dice ? `<div class="dice" title="the latest throw of the dice">Dice for the ${esc(t.dice.purpose)}: ${t.dice.throws.map((round) => round.map(([s, a, b]) => `${esc(v.seats[s].name)} ${a}+${b}`).join(", ")).join(" / ")} → ${esc(v.seats[t.dice.winner].name)}</div>` : "";
    const last = t.last_round ? `<div class="lasttrick"><span class="label">Last round</span>${t.last_round.columns.map((c) => `<span class="mini">${tiles(c.tiles.map((x) => x.tile), "chinese")}</span>`).join("")}</div>` : "";
    const stand = t.standing_pair ? `<div class="hintline">Standing pair: ${esc(JSON.stringify(t.standing_pair))}</div>` : "";
    return `<div class="wall">${cols}</div>${stand}${dice}${last}`;
  },
  eventText(e, name) {
    const d = e.data;
    switch (e.type) {
      case "lead": return `${name(e.seat)} leads ${d.tiles.join(" ")}${d.pair ? " (a standing pair)" : ""}`;
      case "place": return `${name(e.seat)} places ${d.placements.map((p) => `${p.tile} ${p.on_top ? "on top of" : "under"} column ${p.column + 1}`).join(", ")}${d.by_pair ? " (a higher pair)" : ""}`;
      case "round": return `Round ${d.round} of game ${d.game}, columns: ${d.won.map((w, s) => (w ? `${name(s)} ${w}` : null)).filter(Boolean).join(", ") || "none"}. ${name(d.next_leader)} leads next`;
      case "game_end": return `Game ${d.game} ends: points ${d.points.join("/")}`;
      case "deal": return `Game ${d.game}: ${name(d.opener)} opens`;
      case "match_end": return "The match is over";
      default: return null;
    }
  },
  roundSummary(e, name, v) {
    if (e.type !== "game_end") return null;
    const d = e.data;
    // the game_end event carries the running points; the result's deals name the last round's winner
    const points = Array.isArray(d.points);
    return `<h3>Game ${d.game}</h3>${d.last_round_winner !== undefined && d.last_round_winner !== null ? `<p>${esc(name(d.last_round_winner))} won the last round.</p>` : ""}
      <table class="results"><thead><tr><th>Player</th><th class="num">Columns</th>${points ? '<th class="num">Points</th>' : ""}</tr></thead><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td><td class="num">${d.columns[s.seat]}</td>${points ? `<td class="num">${d.points[s.seat]}</td>` : ""}</tr>`).join("")}</tbody></table>`;
  },
};

// -------------------------------------------------------------------------------------------- Kozel

const kozel = {
  set: "western",
  groups(hand) {
    return [{ label: "", cls: "", tiles: [...hand].sort((a, b) => westernRank(a) - westernRank(b)) }];
  },
  pieces: handPieces,
  moveLabel(m, v) {
    if (m.action === "draw") return `Draw from the bazaar (${v.table.bazaar_size} left)`;
    if (m.action === "pass") return "Pass";
    if (m.action === "doubles") return `Lay ${m.left} left and ${m.right} right`;
    if (m.end === "left") return `${m.tiles[0]} on the left end (${v.table.ends[0]})`;
    if (m.end === "right") return `${m.tiles[0]} on the right end (${v.table.ends[1]})`;
    return `Open with ${m.tiles[0]}`;
  },
  status(v) {
    const t = v.table;
    const s = [`Round ${t.round}`, `Bazaar: ${t.bazaar_size}`, `Goat at ${t.target}`];
    if (t.ends) s.push(`Ends: ${t.ends[0]} · ${t.ends[1]}`);
    return s;
  },
  seatStats(v, s) {
    const chips = [`<span class="chip" title="recorded total: ${v.table.target} makes the goat">${s.score} / ${v.table.target}</span>`];
    chips.push(s.opened ? '<span class="chip muted" title="the record is opened">open</span>' : `<span class="chip muted" title="the record opens with ${v.table.opening_threshold} or more">not open</span>`);
    if (s.drawn) chips.push(`<span class="chip muted" title="drawn from the bazaar this round">drew ${s.drawn}</span>`);
    return chips.join("");
  },
  board(v, ctx) {
    const t = v.table;
    const line = t.line.map((x, i) => {
      const dbl = x.halves[0] === x.halves[1];
      return `<span class="linetile${dbl ? " double" : ""}" data-line="${i}">${tileSVG(x.tile, { set: "western", horizontal: !dbl, first: x.halves[0] })}</span>`;
    }).join("");
    const endBtn = (side, i) => {
      const live = ctx.endTargets.includes(side);
      const val = t.ends ? t.ends[i] : "";
      return `<button class="end ${side}${live ? " live" : ""}" data-end="${side}" ${live ? "" : "disabled"} aria-label="${side} end: ${val}">${side === "left" ? "◀" : ""} ${val} ${side === "right" ? "▶" : ""}</button>`;
    };
    const bazaar = t.bazaar_size ? `<div class="bazaar" title="the bazaar: ${t.bazaar_size} face-down tiles">${backs(Math.min(t.bazaar_size, 14), "western", { horizontal: true })}<span class="count">${t.bazaar_size}</span></div>` : "";
    return `<div class="kline">${t.line.length ? endBtn("left", 0) : ""}<div class="linetiles">${line || '<span class="hintline">The line is empty: the opener lays the first tile</span>'}</div>${t.line.length ? endBtn("right", 1) : ""}</div>${bazaar}`;
  },
  eventText(e, name) {
    const d = e.data;
    switch (e.type) {
      case "deal": return `Round ${d.round}: ${d.hand_sizes[0]} tiles each, ${d.bazaar_size} in the bazaar${d.lead ? `; ${d.lead} opens` : ""}`;
      case "play": return d.end === "first" ? `${name(e.seat)} opens with ${d.tile}` : `${name(e.seat)} plays ${d.tile} on the ${d.end} end (ends ${d.ends[0]}·${d.ends[1]})`;
      case "doubles": return `${name(e.seat)} lays two doubles: ${d.left} left, ${d.right} right`;
      case "draw": return `${name(e.seat)} draws from the bazaar${d.tile ? ` (${d.tile})` : ""}, ${d.bazaar_size} left`;
      case "pass": return `${name(e.seat)} passes`;
      case "round_end": return `Round ${d.round} ends (${d.reason === "fish" ? "fish: the line is blocked" : `${name(d.out)} is out`}): points ${d.points.join("/")}`;
      case "match_end": return `The match is over: ${d.goats.map(name).join(" and ")} ${d.goats.length > 1 ? "are goats" : "is the goat"}`;
      default: return null;
    }
  },
  roundSummary(e, name, v) {
    if (e.type !== "round_end") return null;
    const d = e.data;
    return `<h3>Round ${d.round}</h3><p>${d.reason === "fish" ? "Fish: the line is blocked." : `${esc(name(d.out))} went out.`}</p>
      <table class="results"><thead><tr><th>Player</th><th>Hand left</th><th class="num">Points</th><th class="num">Total</th></tr></thead><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td><td class="reveal">${d.hands[s.seat].length ? tiles(d.hands[s.seat], "western") : "—"}</td><td class="num">${d.points[s.seat]}</td><td class="num">${d.totals[s.seat]}</td></tr>`).join("")}</tbody></table>`;
  },
  revealed(result) {
    const last = result.deals && result.deals[result.deals.length - 1];
    return last && last.hands ? { title: `Hands left in round ${last.round}`, hands: last.hands } : null;
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
      case "capture": return `Catch ${m.pool} with ${m.hand}`;
      case "take": return `Take ${m.pool} with the flipped ${m.flipped}`;
      case "triple": return `Triple ${m.tiles[0]} (stack it, draw 3)`;
      case "fourth": return `Play the fourth ${m.tiles[0]}`;
      case "flip": return "Flip from the stock";
      default: return m.id;
    }
  },
  status(v) {
    const t = v.table;
    return [`Game ${t.game} of ${t.games}`, `Part ${t.part} of the turn`, `Stock: ${t.stock_size}`];
  },
  seatStats(v, s) {
    const chips = [`<span class="chip" title="fish points (rounded up to ten)">${s.catch_points} → ${s.catch_rounded}</span>`];
    if (s.score) chips.push(`<span class="chip muted" title="match points">${signed(s.score)} pts</span>`);
    return chips.join("");
  },
  seatExtra(v, s) {
    const known = s.known_hand && s.known_hand.length && s.seat !== v.you
      ? `<div class="known"><span class="label">Known in hand</span>${tiles(s.known_hand, "chinese")}</div>` : "";
    const c = s.catch.length ? `<div class="catch"><span class="label">Catch</span><div class="mini">${tiles(s.catch, "chinese")}</div></div>` : "";
    return c + known;
  },
  board(v, ctx) {
    const t = v.table;
    const pool = t.pool.map((x, i) => ctx.piece(`p:${x}`, i, tileSVG(x, { set: "chinese" }))).join("");
    const flipped = t.flipped ? `<div class="flipped"><span class="label">Flipped, waiting for a take</span>${tileSVG(t.flipped, { set: "chinese" })}</div>` : "";
    // the stock: face-down stacks of 4, with the face-up stacks at their place from the left end
    const parts = [];
    let left = 0;
    const faceDownStacks = (n) => {
      const out = [];
      for (let k = 0; k < n; k += 4) out.push(`<span class="stockstack" title="${Math.min(4, n - k)} face down">${backs(1, "chinese")}<small>${Math.min(4, n - k)}</small></span>`);
      return out.join("");
    };
    for (const s of t.stacks) {
      if (s.from_left > left) parts.push(faceDownStacks(s.from_left - left));
      parts.push(`<span class="stockstack up" title="a face-up stack of ${s.count}">${tileSVG(s.tile, { set: "chinese" })}<small>×${s.count}</small></span>`);
      left = s.from_left + s.count;
    }
    if (t.stock_size > left) parts.push(faceDownStacks(t.stock_size - left));
    return `<div class="stock"><span class="label">Stock (${t.stock_size}, drawn from the right)</span><div class="stockrow">${parts.join("") || "empty"}</div></div>
      ${flipped}<div class="pool"><span class="label">Pool</span><div class="pooltiles">${pool || '<span class="muted">empty</span>'}</div></div>`;
  },
  eventText(e, name) {
    const d = e.data;
    switch (e.type) {
      case "deal": return `Game ${d.game}: ${name(d.first)} plays first; ${d.pool.length} tiles in the pool, ${d.stock} in the stock`;
      case "six_six_pairs": return `${name(e.seat)} lays out ${d.tiles.length / 2} pair(s) of 6-6`;
      case "capture": return `${name(e.seat)} catches ${d.pool} with ${d.hand}`;
      case "take": return `${name(e.seat)} catches ${d.pool} with the flipped ${d.flipped}`;
      case "flip": return `${name(e.seat)} flips ${d.tile}${d.was_face_up ? " (from a face-up stack)" : ""}`;
      case "triple": return `${name(e.seat)} triples ${d.tile}: three go face up on the stock`;
      case "fourth": return d.captured ? `${name(e.seat)} plays the fourth ${d.tile} and catches the face-up three` : `${name(e.seat)} puts the fourth ${d.tile} on its stack`;
      case "draw": return `${name(e.seat)} draws ${d.count} from the stock${d.tiles ? ` (${d.tiles.join(" ")})` : ""}`;
      case "no_hand_play": return `${name(e.seat)} cannot catch from hand and flips`;
      case "game_end": return `Game ${d.game || ""} ends`;
      case "match_end": return "The match is over";
      default: return null;
    }
  },
  roundSummary(e, name, v) {
    if (e.type !== "game_end") return null;
    const d = e.data;
    const pays = (d.payments || []).map((p) => `<li>${esc(name(p.from))} → ${esc(name(p.to))}: ${p.amount}</li>`).join("");
    return `<h3>Game ${d.game}</h3><p class="muted">Fish points, each total rounded up to ten; the others pay the winner the difference.</p>${genericDealTable(d, v)}${pays ? `<ul class="payments">${pays}</ul>` : ""}`;
  },
};

function genericDealTable(d, v) {
  const heads = { raw: "Fish points", rounded: "Rounded", net: "Net", points: "Match points" };
  const cols = Object.keys(heads).filter((k) => Array.isArray(d[k]));
  return `<table class="results"><thead><tr><th>Player</th>${cols.map((c) => `<th class="num">${heads[c]}</th>`).join("")}</tr></thead><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td>${cols.map((c) => `<td class="num">${fmt(d[c][s.seat])}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
}

export const RULESETS = { tiengow, tiengow_wall: tiengowWall, kozel, tiuu };

export { tiles as tilesHTML, backs as backsHTML, signed, fmt, tileName };
