// The table's areas, each drawn by its own renderer from the table's state `T` (the view of
// GET /v1/games/{id} as `T.view`, the selection `T.sel`, the hint `T.hint`...): the title, the status line,
// the seats and the board, your hand, your moves, your discards, the hint and the toolbar. table.js holds
// the state and the flow (views, events, clicks); what a player sees of a view is drawn here. Also the
// selection's rules: which legal moves the selected tiles make or can still make.

import { RULESETS, esc, tilesHTML, fmt } from "./games.js";
import { tileSVG, tileNames } from "./tiles.js";
import { t } from "./i18n.js";
import { app, gameTitle } from "./ui.js";
import { hintRows } from "./hints.js";

export const reducedMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

const $ = (s) => app.querySelector(s);

export function clockText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** A link that takes someone to the join screen of one open seat. */
export function joinLink(id, seat) {
  return `${location.origin}/#/join/${id}/${seat}`;
}


/** The rule set of the table. */
export const R = (T) => RULESETS[T.view.rules];
/** Your legal moves: none unless it is your turn. */
export const legal = (T) => (T.view && T.view.status === "active" && T.view.to_move === T.view.you ? T.view.legal_moves : []);
export const selKeys = (T) => T.sel.map((x) => x.key);
/** A seat's name as the view has it. */
export const seatName = (T, s) => (s === null || s === undefined || !T.view ? "—" : (T.view.seats[s] && T.view.seats[s].name) || t("seat.unknown", { n: s + 1 }));

/** Where a seat sits on the screen: you at the bottom, the others clockwise. */
export function position(T, seat) {
  const v = T.view;
  const n = v.seats.length;
  const me = v.you ?? T.seat ?? 0;
  const rel = (seat - me + n) % n;
  if (rel === 0) return "pos-bottom";
  if (n === 2) return "pos-top";
  if (n === 3) return rel === 1 ? "pos-right" : "pos-left";
  return ["pos-bottom", "pos-right", "pos-top", "pos-left"][rel];
}

// ---------------------------------------------------------------- the selection
function covers(keys, sel, ordered) {
  if (ordered) return sel.every((k, i) => keys[i] === k);
  const left = [...keys];
  for (const k of sel) {
    const i = left.indexOf(k);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}
export function movesWith(T, sel) {
  return legal(T).filter((m) => {
    const p = R(T).pieces(m);
    return p.keys.length >= sel.length && p.keys.length > 0 && covers(p.keys, sel, p.ordered);
  });
}
/** The moves the selection makes, equivalent ones (Kozel: one tile on two equal ends) once. */
export function complete(T, sel) {
  const out = [];
  for (const m of movesWith(T, sel).filter((x) => R(T).pieces(x).keys.length === sel.length)) {
    if (!out.some((o) => R(T).sameMove && R(T).sameMove(o, m, T.view))) out.push(m);
  }
  return out;
}
export const canAdd = (T, key) => movesWith(T, [...selKeys(T), key]).length > 0;

// ---------------------------------------------------------------- the renderers, one per area
function piece(T, key, idx, svg, extraCls = "", under = "") {
  const selected = T.sel.some((x) => x.key === key && x.idx === idx);
  const order = selected && T.view.rules === "tiengow_wall" ? T.sel.findIndex((x) => x.key === key && x.idx === idx) + 1 : 0;
  const live = selected || canAdd(T, key);
  const hinted = T.hintMove && R(T).pieces(T.hintMove).keys.includes(key) ? " hinted" : "";
  const orderBadge = order ? `<span class="order" aria-label="${esc(t("wall.order", { n: order }))}">→${order}</span>` : "";
  return `<button class="piece${selected ? " selected" : ""}${live ? " live" : ""}${hinted} ${extraCls}" data-key="${esc(key)}" data-idx="${idx}" ${live ? "" : 'aria-disabled="true" tabindex="-1"'} aria-pressed="${selected}">${svg}${orderBadge}${under}</button>`;
}

/** The tile's names under it in the hand: the chosen language's and the Chinese. */
function caption(T, tile) {
  if (R(T).set !== "chinese") return "";
  const [nm, zh] = tileNames(tile);
  return `<span class="tname" aria-hidden="true">${zh ? `<b lang="zh-Hant">${esc(zh)}</b>` : ""}<span>${esc(nm)}</span></span>`;
}

function seatPanel(T, s) {
  const v = T.view;
  const R0 = R(T);
  const turn = v.status === "active" && v.to_move === s.seat;
  const kind = s.kind === "ai" ? `<span class="chip ai" title="${esc(t("table.ai_engine"))}">${esc(s.engine || "AI")}</span>` : s.kind === "open" ? `<span class="chip open">${esc(t("table.open_seat"))}</span>` : "";
  const hand = s.seat === v.you ? "" : `<div class="handbacks" title="${esc(t("table.tiles_in_hand", { count: s.hand_size }))}">${"<i></i>".repeat(Math.min(s.hand_size, 16))}<small>${s.hand_size}</small></div>`;
  const thinking = turn && v.ai.pending && s.kind === "ai" ? `<span class="thinking" role="img" aria-label="${esc(t("table.thinking_label"))}">…</span>` : "";
  const clock = v.clock && s.clock_ms !== null && s.clock_ms !== undefined
    ? `<span class="clock${v.clock.running === s.seat ? " running" : ""}" data-clock="${s.seat}" title="${esc(t("table.time_left"))}">${clockText(s.clock_ms)}</span>` : "";
  return `<div class="seat ${position(T, s.seat)}${turn ? " turn" : ""}${s.seat === v.you ? " me" : ""}" data-seat="${s.seat}">
    <div class="seathead"><span class="avatar" style="--hue:${(s.seat * 83 + 20) % 360}" aria-hidden="true">${esc((s.name || "?").trim().charAt(0).toUpperCase())}</span><span class="name">${esc(s.name)}</span>${kind}${thinking}</div>
    <div class="stats"><span class="score" title="${esc(t("table.score"))}">${fmt(s.score)}</span>${clock}${R0.seatStats(v, s)}</div>${hand}
    ${R0.seatExtra ? R0.seatExtra(v, s) : ""}<div class="bubble" data-bubble="${s.seat}" aria-hidden="true"></div></div>`;
}

export function renderTitle(T) {
  const v = T.view;
  $("#title").textContent = gameTitle(v.rules);
  const mine = v.status === "active" && v.to_move === v.you;
  document.title = mine ? t("table.title_your_turn", { game: gameTitle(v.rules) }) : t("table.title", { game: gameTitle(v.rules) });
}

export function renderStatus(T) {
  const v = T.view;
  const open = v.seats.filter((s) => s.kind === "open");
  const missing = v.seats.filter((s) => s.kind === "open" || s.taken === false);
  let turnText;
  if (v.status === "finished") turnText = t("table.game_over");
  else if (v.status === "waiting") {
    turnText = open.length ? t("table.waiting_join", { count: missing.length })
      : t("table.waiting_rematch", { names: missing.map((s) => s.name).join(", ") });
  } else if (v.to_move === v.you) turnText = t("table.your_turn");
  else turnText = t(v.ai.pending ? "table.thinking" : "table.to_play", { name: seatName(T, v.to_move) });
  const mine = v.to_move === v.you && v.status === "active";
  const watching = v.you === null ? `<span class="watching">${esc(t("table.watching"))}</span>` : "";
  $("#statusline").innerHTML = `<span class="turn ${mine ? "yours" : ""}">${esc(turnText)}</span>${R(T).status(v).map((x) => `<span>${esc(x)}</span>`).join("")}${watching}`;
}

function renderSeats(T) {
  return T.view.seats.map((s) => seatPanel(T, s)).join("");
}

function renderInvites(T) {
  const v = T.view;
  const open = v.seats.filter((s) => s.kind === "open");
  if (v.status !== "waiting" || !open.length) return "";
  return `<div class="invite" role="region" aria-label="${esc(t("table.invites"))}"><h2>${esc(t("table.invite_heading"))}</h2>${open.map((s) => `<div class="invrow"><span>${esc(t("table.invite_seat", { n: s.seat + 1 }))}</span><input readonly value="${esc(joinLink(T.id, s.seat))}" aria-label="${esc(t("table.invite_link", { n: s.seat + 1 }))}"><button class="copy" data-copy="${esc(joinLink(T.id, s.seat))}">${esc(t("app.copy"))}</button></div>`).join("")}<small>${esc(t("table.invite_note"))}</small></div>`;
}

function renderBoard(T) {
  const v = T.view;
  const ends = complete(T, selKeys(T)).filter((m) => m.end === "left" || m.end === "right").map((m) => m.end);
  const ctx = { pos: (s) => position(T, s), piece: (...a) => piece(T, ...a), endTargets: ends, you: v.you };
  return `<div class="board" id="board">${renderInvites(T)}${R(T).board(v, ctx)}</div>`;
}

export function renderTableArea(T) {
  const v = T.view;
  $("#table").className = `table n${v.seats.length} rules-${v.rules}`;
  $("#table").innerHTML = renderSeats(T) + renderBoard(T);
}

export function renderHand(T) {
  const v = T.view;
  const R0 = R(T);
  if (v.you === null || v.you === undefined) {
    $("#hand").innerHTML = `<p class="muted">${esc(t("table.watching"))}</p>`;
    return;
  }
  const counts = {};
  const groups = R0.groups(v.hand).filter((g) => g.tiles.length).map((g) => {
    const tiles = g.tiles.map((x) => {
      counts[x] = (counts[x] || 0) + 1;
      return piece(T, `h:${x}`, counts[x] - 1, tileSVG(x, { set: R0.set }), g.cls, caption(T, x));
    }).join("");
    return `<div class="handgroup ${g.cls}">${g.label ? `<span class="label">${esc(g.label)}</span>` : ""}<div class="tiles">${tiles}</div></div>`;
  }).join("");
  $("#hand").innerHTML = groups || `<span class="muted">${esc(t("table.no_tiles"))}</span>`;
}

export function renderActions(T) {
  const v = T.view;
  const R0 = R(T);
  if (v.you === null || v.you === undefined) {
    $("#actions").innerHTML = "";
    return;
  }
  const mine = v.status === "active" && v.to_move === v.you;
  $("#handarea").classList.toggle("myturn", mine);
  const done = mine ? complete(T, selKeys(T)) : [];
  const free = mine ? legal(T).filter((m) => R0.pieces(m).keys.length === 0) : [];
  const buttons = [...done, ...free].map((m, i) => `<button class="${i === 0 ? "primary" : ""} move" data-move="${esc(m.id)}">${esc(R0.moveLabel(m, v))}</button>`).join("");
  const note = mine && R0.selectionNote ? R0.selectionNote(v, T.sel) : null;
  let prompt = "";
  if (!mine) prompt = v.status === "finished" ? "" : t("table.waiting_for", { name: seatName(T, v.to_move) });
  else if (T.sel.length) prompt = t(done.length ? "table.confirm" : "table.select_more");
  else prompt = t("table.pick");
  $("#actions").innerHTML = `<span class="prompt">${esc(prompt)}${note ? ` <small>${esc(note)}</small>` : ""}</span>${buttons}${T.sel.length ? `<button class="ghost" id="clearsel">${esc(t("table.clear"))}</button>` : ""}`;
}

export function renderDiscards(T) {
  const v = T.view;
  $("#discards").innerHTML = v.discards && v.discards.length
    ? `<div class="mydiscards"><span class="label">${esc(t("table.my_discards"))}</span>${v.discards.map((d) => `<span class="group">${tilesHTML(d, "chinese")}</span>`).join("")}</div>` : "";
}

export function renderHint(T) {
  const h = T.hint;
  const box = $("#hintbox");
  if (!h) {
    box.innerHTML = "";
    return;
  }
  if (h.pending) box.innerHTML = `<div class="hint" role="status"><span class="label">${esc(t("hint.label"))}</span> ${esc(t("hint.thinking"))}</div>`;
  else if (h.error) box.innerHTML = `<div class="hint" role="alert"><span class="label">${esc(t("hint.label"))}</span> ${esc(h.error)}</div>`;
  else {
    const rows = hintRows(h, T.view, R(T)).slice(0, 6).map((c) => `<button class="hintrow${c.best ? " best" : ""}" data-hint="${esc(c.move)}" title="${esc(t("hint.select"))}">
      <span class="hl">${esc(c.label)}${c.best ? ` <b class="chip">${esc(t("hint.best"))}</b>` : ""}</span><span class="barbox" aria-hidden="true"><span class="bar" style="width:${(100 * c.share).toFixed(1)}%"></span></span>
      <span class="hv">${esc(c.value)}${c.reason ? ` · <i>${esc(c.reason)}</i>` : ""}</span></button>`).join("");
    box.innerHTML = `<section class="hint" aria-labelledby="hinthead"><h2 id="hinthead" class="label">${esc(t("hint.heading"))}</h2>${rows}</section>`;
  }
  // the hint opens where the player looks, not below the fold
  const el = box.firstElementChild;
  if (el && el.scrollIntoView) el.scrollIntoView({ block: "nearest", behavior: reducedMotion ? "auto" : "smooth" });
}

export function renderToolbar(T) {
  const v = T.view;
  $("#hintbtn").disabled = !(v.status === "active" && v.to_move === v.you && !T.busy);
  $("#resignbtn").hidden = !(T.features && T.features.resign && v.status !== "finished" && v.you !== null);
}
