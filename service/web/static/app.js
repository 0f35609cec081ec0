// tilehouse web client: the new-game screen and the table, on the public /v1 API only.
//
// Routes (in the URL fragment, so the server serves one static page):
//   #/                      new game
//   #/game/<id>             the table, as the seats this tab holds tokens for (sessionStorage)
//   #/join/<id>/<seat>      take an open seat someone sent you a link to

import { api, ApiError, loadGame, saveGame, serverFeatures } from "./api.js";
import { Watcher } from "./transport.js";
import { RULESETS, esc, tilesHTML, signed, fmt } from "./games.js";
import { tileSVG, svgDefs, tileName } from "./tiles.js";

const app = document.getElementById("app");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const reducedMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

let current = null; // the table on screen: {stop()}

function toast(msg, kind = "error") {
  const el = document.createElement("div");
  el.className = `toast ${kind}`;
  el.setAttribute("role", kind === "error" ? "alert" : "status");
  el.textContent = msg;
  document.body.appendChild(el);
  setTimeout(() => el.remove(), 5000);
}

function problemText(err) {
  if (err instanceof ApiError) {
    const errors = err.problem.errors ? Object.entries(err.problem.errors).map(([k, v]) => `${k}: ${[].concat(v).join(", ")}`).join("; ") : "";
    return `${err.problem.title || "Error"}: ${err.message}${errors ? ` (${errors})` : ""}`;
  }
  return String(err && err.message ? err.message : err);
}

// "You leads" -> "You lead": the event sentences are written for the third person
const SECOND_PERSON = { leads: "lead", beats: "beat", discards: "discard", wins: "win", pays: "pay", plays: "play",
  opens: "open", draws: "draw", passes: "pass", lays: "lay", catches: "catch", flips: "flip", triples: "triple",
  places: "place", cannot: "cannot", puts: "put", is: "are", has: "have", takes: "take", resigns: "resign" };
function words(text) {
  if (!text) return text;
  return text.replace(/\bYou (\w+)/g, (all, verb) => `You ${SECOND_PERSON[verb] || verb}`);
}

// ---------------------------------------------------------------------------------------- routing

async function route() {
  if (current) current.stop();
  current = null;
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  try {
    if (parts[0] === "game" && parts[1]) await showTable(parts[1]);
    else if (parts[0] === "join" && parts[1] && parts[2] !== undefined) await joinSeat(parts[1], Number(parts[2]));
    else await showNewGame();
  } catch (err) {
    app.innerHTML = `<section class="panel center"><h2>Something went wrong</h2><p>${esc(problemText(err))}</p><p><a href="#/">Start a new game</a></p></section>`;
  }
}

window.addEventListener("hashchange", route);

// -------------------------------------------------------------------------------------- new game

let catalog = null;

async function loadCatalog() {
  if (!catalog) {
    const [rules, engines] = await Promise.all([api("GET", "/v1/rules"), api("GET", "/v1/engines")]);
    catalog = { rules: rules.data, engines: engines.data };
  }
  return catalog;
}

/** Strength presets of an engine: the server's own list when it gives one, else its defaults. */
function presetsOf(engine) {
  if (Array.isArray(engine.presets) && engine.presets.length) return engine.presets;
  return [{ name: "default", label: "default", params: {} }];
}

function defaultAiSeat(engines) {
  const e = engines.find((x) => x.id === "ismcts") || engines[0];
  const presets = presetsOf(e);
  const p = presets.find((x) => x.default) || presets[Math.floor((presets.length - 1) / 2)];
  return { kind: "ai", engine: e.id, preset: p.name };
}

// time controls offered at creation: "<initial s>+<increment s>"
const CLOCKS = [["", "no clock"], ["60+2", "1 min + 2 s a move"], ["300+3", "5 min + 3 s a move"], ["900+10", "15 min + 10 s a move"]];

function clockText(ms) {
  const t = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, "0")}`;
}

// default names by the seat's place at the table, seen from seat 0
const PLACES = { 2: ["South", "North"], 3: ["South", "East", "West"], 4: ["South", "East", "North", "West"] };

function seatBody(seat, engines, i, players) {
  const place = (PLACES[players] || [])[i] || `Seat ${i + 1}`;
  if (seat.kind === "human") return { kind: "human", name: seat.name || (i === 0 ? "You" : place) };
  if (seat.kind === "open") return { kind: "open", name: seat.name || place };
  const e = engines.find((x) => x.id === seat.engine);
  const preset = presetsOf(e).find((p) => p.name === seat.preset) || presetsOf(e)[0];
  const body = { kind: "ai", engine: seat.engine, name: seat.name || place };
  if (preset.params && Object.keys(preset.params).length) body.params = preset.params;
  return body;
}

async function createGame(body) {
  const r = await api("POST", "/v1/games", { body });
  const created = r.data;
  const tokens = {};
  for (const s of created.seats) tokens[s.seat] = s.token;
  saveGame(created.game.id, { tokens, admin: created.admin_token, setup: body, join: created.join || [] });
  location.hash = `#/game/${created.game.id}`;
}

async function quickStart() {
  const { engines } = await loadCatalog();
  const ai = defaultAiSeat(engines);
  const seats = [{ kind: "human", name: "You" }];
  for (let i = 1; i < 4; i++) seats.push(seatBody(ai, engines, i, 4));
  await createGame({ rules: "tiengow", seats });
}

async function showNewGame() {
  document.title = "tilehouse — Tien Gow, Tiu U and Kozel";
  app.innerHTML = '<section class="panel center"><p class="muted">Loading the rule sets…</p></section>';
  const { rules, engines } = await loadCatalog();
  const features = await serverFeatures();
  const state = { rules: "tiengow", players: 4, seats: [], options: {}, clock: "" };

  const ruleOf = () => rules.find((r) => r.id === state.rules);
  const resetSeats = () => {
    const r = ruleOf();
    const old = state.seats;
    state.seats = Array.from({ length: state.players }, (_, i) => old[i] || (i === 0 ? { kind: "human", name: "You" } : { ...defaultAiSeat(engines), name: "" }));
    if (state.players > r.players.max || state.players < r.players.min) state.players = r.default_players;
  };
  const resetOptions = () => {
    state.options = {};
    for (const o of ruleOf().options) state.options[o.name] = o.default;
  };
  state.players = ruleOf().default_players;
  resetSeats();
  resetOptions();

  const render = () => {
    const r = ruleOf();
    const counts = [];
    for (let n = r.players.min; n <= r.players.max; n++) counts.push(n);
    const optionField = (o) => {
      const id = `opt-${o.name}`;
      const val = state.options[o.name];
      let input;
      if (o.type === "boolean") {
        input = `<input type="checkbox" id="${id}" data-opt="${o.name}" ${val ? "checked" : ""}>`;
      } else if (o.enum) {
        input = `<select id="${id}" data-opt="${o.name}">${o.enum.map((x) => `<option value="${esc(x)}" ${x === val ? "selected" : ""}>${esc(x)}${x === o.default ? " (default)" : ""}</option>`).join("")}</select>`;
      } else if (o.type === "integer" || o.type === "number") {
        input = `<input type="number" id="${id}" data-opt="${o.name}" value="${val}" ${o.minimum !== undefined ? `min="${o.minimum}"` : ""} ${o.maximum !== undefined ? `max="${o.maximum}"` : ""} step="${o.type === "integer" ? 1 : "any"}">`;
      } else {
        input = `<input type="text" id="${id}" data-opt="${o.name}" value="${esc(val)}">`;
      }
      const bounds = o.minimum !== undefined ? ` (${o.minimum}–${o.maximum}, default ${o.default})` : ` (default ${o.default})`;
      return `<div class="field ${o.type === "boolean" ? "check" : ""}"><label for="${id}">${esc(o.name.replace(/_/g, " "))}</label>${input}<small>${esc(o.description)}${esc(bounds)}</small></div>`;
    };
    const seatRow = (s, i) => {
      const kinds = [["human", "Human (this browser)"], ["ai", "AI"]];
      if (features.openSeats) kinds.push(["open", "Open seat (send a link)"]);
      const engine = engines.find((e) => e.id === s.engine) || engines[0];
      const ai = s.kind === "ai"
        ? `<select data-seat="${i}" data-k="engine" aria-label="seat ${i + 1} engine">${engines.map((e) => `<option value="${e.id}" ${e.id === s.engine ? "selected" : ""}>${esc(e.id)}</option>`).join("")}</select>
           <select data-seat="${i}" data-k="preset" aria-label="seat ${i + 1} strength">${presetsOf(engine).map((p) => `<option value="${esc(p.name)}" ${p.name === s.preset ? "selected" : ""}>${esc(p.label || p.name)}</option>`).join("")}</select>`
        : "";
      return `<div class="seatrow"><span class="seatno">${i + 1}</span>
        <select data-seat="${i}" data-k="kind" aria-label="seat ${i + 1} player">${kinds.map(([k, l]) => `<option value="${k}" ${k === s.kind ? "selected" : ""}>${l}</option>`).join("")}</select>
        <input data-seat="${i}" data-k="name" placeholder="${s.kind === "ai" ? "name (optional)" : "name"}" value="${esc(s.name || "")}" aria-label="seat ${i + 1} name" maxlength="40">${ai}</div>`;
    };
    app.innerHTML = `
      <section class="hero">
        <div class="hero-text"><h1>Tien Gow, Tiu U &amp; Kozel</h1>
          <p>Chinese and Russian domino games against an AI that never peeks at your tiles.</p>
          <button id="quick" class="primary big">Play Tien Gow: you vs three AI</button></div>
        <div class="hero-tiles" aria-hidden="true">${["6-6", "1-1", "4-4", "4-2", "2-1"].map((t) => tileSVG(t)).join("")}</div>
      </section>
      <section class="panel" aria-labelledby="ng-title">
        <h2 id="ng-title">New game</h2>
        <form id="newgame">
          <div class="field"><label for="rules">Game</label><select id="rules">${rules.map((x) => `<option value="${x.id}" ${x.id === state.rules ? "selected" : ""}>${esc(x.title)}</option>`).join("")}</select><small>${esc(r.description)}</small></div>
          <div class="field"><label for="players">Players</label><select id="players">${counts.map((n) => `<option ${n === state.players ? "selected" : ""}>${n}</option>`).join("")}</select></div>
          <fieldset><legend>Seats</legend>${state.seats.map(seatRow).join("")}</fieldset>
          <fieldset><legend>Options</legend>${r.options.map(optionField).join("") || '<p class="muted">none</p>'}
            ${features.clock ? `<div class="field"><label for="clock">clock</label><select id="clock">${CLOCKS.map(([v, l]) => `<option value="${v}" ${v === state.clock ? "selected" : ""}>${l}</option>`).join("")}</select><small>a Fischer time control for the human seats; out of time, the greedy AI moves for you</small></div>` : ""}</fieldset>
          <button type="submit" class="primary" id="create">Start the game</button>
        </form>
      </section>`;
    document.getElementById("quick").onclick = () => quickStart().catch((e) => toast(problemText(e)));
    document.getElementById("rules").onchange = (ev) => {
      state.rules = ev.target.value;
      state.players = ruleOf().default_players;
      resetSeats();
      resetOptions();
      render();
    };
    const clockSelect = document.getElementById("clock");
    if (clockSelect) clockSelect.onchange = () => { state.clock = clockSelect.value; };
    document.getElementById("players").onchange = (ev) => {
      state.players = Number(ev.target.value);
      resetSeats();
      render();
    };
    app.querySelectorAll("[data-opt]").forEach((el) => {
      el.onchange = () => {
        const o = ruleOf().options.find((x) => x.name === el.dataset.opt);
        if (o.type === "boolean") state.options[o.name] = el.checked;
        else if (o.type === "integer") state.options[o.name] = o.enum ? Number(el.value) : parseInt(el.value, 10);
        else if (o.type === "number") state.options[o.name] = Number(el.value);
        else state.options[o.name] = el.value;
      };
    });
    app.querySelectorAll("[data-seat]").forEach((el) => {
      el.onchange = () => {
        const s = state.seats[Number(el.dataset.seat)];
        s[el.dataset.k] = el.value;
        if (el.dataset.k === "kind" && el.value === "ai" && !s.engine) Object.assign(s, defaultAiSeat(engines), { name: s.name });
        if (el.dataset.k === "engine") s.preset = presetsOf(engines.find((e) => e.id === s.engine))[0].name;
        if (el.dataset.k !== "name") render();
      };
    });
    document.getElementById("newgame").onsubmit = (ev) => {
      ev.preventDefault();
      const body = { rules: state.rules, options: state.options, seats: state.seats.map((s, i) => seatBody(s, engines, i, state.players)) };
      if (state.clock) {
        const [initial, increment] = state.clock.split("+").map(Number);
        body.clock = { initial_ms: initial * 1000, increment_ms: increment * 1000 };
      }
      createGame(body).catch((e) => toast(problemText(e)));
    };
  };
  render();
}

// ------------------------------------------------------------------------------------------ joining

async function joinSeat(id, seat) {
  const rec = loadGame(id) || { tokens: {} };
  if (rec.tokens[seat]) {
    location.hash = `#/game/${id}`;
    return;
  }
  const { data: v } = await api("GET", `/v1/games/${id}`);
  const { rules } = await loadCatalog();
  const title = (rules.find((r) => r.id === v.rules) || {}).title || v.rules;
  const others = v.seats.filter((s) => s.seat !== seat).map((s) => esc(s.name)).join(", ");
  app.innerHTML = `<section class="panel center"><h2>Join a game of ${esc(title)}</h2>
    <p>Seat ${seat + 1} is yours if you take it. At the table: ${others}.</p>
    <form id="joinform"><div class="field"><label for="joinname">Your name</label><input id="joinname" maxlength="40" value="" placeholder="name"></div>
    <button class="primary" type="submit" id="joinbtn">Take the seat</button> <a class="button ghost" href="#/">No thanks</a></form></section>`;
  const input = document.getElementById("joinname");
  input.focus();
  document.getElementById("joinform").onsubmit = async (ev) => {
    ev.preventDefault();
    try {
      const body = input.value.trim() ? { name: input.value.trim() } : {};
      const r = await api("POST", `/v1/games/${id}/seats/${seat}/join`, { body });
      rec.tokens[seat] = r.data.token;
      saveGame(id, rec);
      location.hash = `#/game/${id}`;
    } catch (err) {
      toast(problemText(err));
    }
  };
}

/** A link that takes someone to the join screen of one open seat. */
function joinLink(id, seat) {
  return `${location.origin}${location.pathname}#/join/${id}/${seat}`;
}

// the service's own events (open seats, clocks, resigning), the same in every rule set
function serviceEventText(e, name) {
  const d = e.data || {};
  switch (e.type) {
    case "join": return `${d.name || name(e.seat)} takes seat ${e.seat + 1}`;
    case "start": return "Every seat is taken: the game starts";
    case "timeout": return d.action === "forfeit" ? `${name(e.seat)} ran out of time and forfeits` : `${name(e.seat)} ran out of time: ${d.engine || "the AI"} moves for them`;
    case "resign": return `${name(e.seat)} resigns`;
    case "rematch": return "A rematch is set up";
    default: return null;
  }
}

// --------------------------------------------------------------------------------------------- table

async function showTable(id) {
  const rec = loadGame(id) || { tokens: {} };
  const mySeats = Object.keys(rec.tokens).map(Number).sort((a, b) => a - b);
  const T = {
    id, rec, view: null, events: [], lastN: 0, sel: [], busy: false, hint: null, seenSummary: 0,
    rules: null, stopped: false, watcher: null, resultShown: false, chain: Promise.resolve(),
  };
  // the seat whose eyes we look through: the one to move among ours (hot seat), else our first
  const seatToUse = () => {
    if (!mySeats.length) return null;
    const v = T.view;
    if (v && v.to_move !== null && mySeats.includes(v.to_move)) return v.to_move;
    return T.seat ?? mySeats[0];
  };
  T.seat = mySeats.length ? mySeats[0] : null;
  const token = () => (T.seat === null ? null : rec.tokens[T.seat]);

  app.innerHTML = `<div class="tablewrap"><header class="bar">
      <a href="#/" class="brand" title="New game">tilehouse</a><span id="title" class="title"></span>
      <span class="spacer"></span>
      <button id="hintbtn" class="ghost" disabled title="Ask the AI for a suggestion (H)">Hint</button>
      <button id="logbtn" class="ghost" aria-expanded="false" title="Event log (L)">Log</button>
      <button id="resignbtn" class="ghost" hidden title="Resign: the match ends now, you rank last">Resign</button>
      <a href="#/" class="ghost button" id="newbtn">New game</a></header>
    <div id="statusline" class="statusline" aria-live="polite"></div>
    <main id="table" class="table"></main>
    <section id="handarea" class="handarea" aria-label="Your hand"></section>
    <aside id="log" class="log" aria-label="Event log"><h2>Event log</h2><ol id="logitems"></ol></aside>
    <div id="overlay" class="overlay" hidden></div></div>`;
  const $ = (s) => app.querySelector(s);

  const name = (s) => (s === null || s === undefined || !T.view ? "—" : (T.view.seats[s] && T.view.seats[s].name) || `seat ${s}`);

  function pos(seat) {
    const v = T.view;
    const n = v.seats.length;
    const me = v.you ?? T.seat ?? 0;
    const rel = (seat - me + n) % n;
    if (rel === 0) return "pos-bottom";
    if (n === 2) return "pos-top";
    if (n === 3) return rel === 1 ? "pos-right" : "pos-left";
    return ["pos-bottom", "pos-right", "pos-top", "pos-left"][rel];
  }

  // ---------------------------------------------------------------- legal moves and the selection
  const R = () => RULESETS[T.view.rules];
  const legal = () => (T.view && T.view.status === "active" && T.view.to_move === T.view.you ? T.view.legal_moves : []);
  const selKeys = () => T.sel.map((x) => x.key);

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
  function movesWith(sel) {
    return legal().filter((m) => {
      const p = R().pieces(m);
      return p.keys.length >= sel.length && p.keys.length > 0 && covers(p.keys, sel, p.ordered);
    });
  }
  function complete(sel) {
    return movesWith(sel).filter((m) => R().pieces(m).keys.length === sel.length);
  }
  function canAdd(key) {
    return movesWith([...selKeys(), key]).length > 0;
  }

  async function play(move) {
    if (T.busy) return;
    T.busy = true;
    document.body.dataset.busy = "1";
    T.sel = [];
    T.hint = null;
    T.hintMove = null;
    try {
      const r = await api("POST", `/v1/games/${id}/moves`, { body: { move: move.id, version: T.view.version }, token: token() });
      await onView(r.data, { own: true });
    } catch (err) {
      toast(problemText(err));
    } finally {
      T.busy = false;
      delete document.body.dataset.busy;
      renderAll();
      T.watcher.poke();
    }
  }

  function clickPiece(key, idx) {
    if (T.busy) return;
    const at = T.sel.findIndex((x) => x.key === key && x.idx === idx);
    if (at >= 0) {
      T.sel.splice(at, 1);
    } else {
      if (!canAdd(key)) return;
      T.sel.push({ key, idx });
      const done = complete(selKeys());
      const more = movesWith(selKeys()).length > done.length;
      if (done.length === 1 && !more) {
        play(done[0]);
        return;
      }
    }
    renderAll();
  }

  // ---------------------------------------------------------------- rendering
  function piece(key, idx, svg, extraCls = "") {
    const selected = T.sel.some((x) => x.key === key && x.idx === idx);
    const order = selected && R().pieces && T.view.rules === "tiengow_wall" ? T.sel.findIndex((x) => x.key === key && x.idx === idx) + 1 : 0;
    const live = selected || canAdd(key);
    const hinted = T.hintMove && R().pieces(T.hintMove).keys.includes(key) ? " hinted" : "";
    return `<button class="piece${selected ? " selected" : ""}${live ? " live" : ""}${hinted} ${extraCls}" data-key="${esc(key)}" data-idx="${idx}" ${live ? "" : 'aria-disabled="true" tabindex="-1"'} aria-pressed="${selected}">${svg}${order ? `<span class="order">→${order}</span>` : ""}</button>`;
  }

  function seatPanel(s) {
    const v = T.view;
    const R0 = R();
    const turn = v.status === "active" && v.to_move === s.seat;
    const kind = s.kind === "ai" ? `<span class="chip ai" title="AI engine">${esc(s.engine || "AI")}</span>` : s.kind === "open" ? '<span class="chip open">open seat</span>' : "";
    const hand = s.seat === v.you ? "" : `<div class="handbacks" title="${s.hand_size} tiles in hand">${"<i></i>".repeat(Math.min(s.hand_size, 16))}<small>${s.hand_size}</small></div>`;
    const thinking = turn && v.ai.pending && s.kind === "ai" ? '<span class="thinking" aria-label="thinking">…</span>' : "";
    const clock = v.clock && s.clock_ms !== null && s.clock_ms !== undefined
      ? `<span class="clock${v.clock.running === s.seat ? " running" : ""}" data-clock="${s.seat}" title="time left">${clockText(s.clock_ms)}</span>` : "";
    return `<div class="seat ${pos(s.seat)}${turn ? " turn" : ""}${s.seat === v.you ? " me" : ""}" data-seat="${s.seat}">
      <div class="seathead"><span class="avatar" style="--hue:${(s.seat * 83 + 20) % 360}" aria-hidden="true">${esc((s.name || "?").trim().charAt(0).toUpperCase())}</span><span class="name">${esc(s.name)}</span>${kind}${thinking}</div>
      <div class="stats"><span class="score" title="score">${fmt(s.score)}</span>${clock}${R0.seatStats(v, s)}</div>${hand}
      ${R0.seatExtra ? R0.seatExtra(v, s) : ""}<div class="bubble" data-bubble="${s.seat}"></div></div>`;
  }

  function renderTable() {
    const v = T.view;
    const R0 = R();
    const ends = complete(selKeys()).filter((m) => m.end === "left" || m.end === "right").map((m) => m.end);
    const ctx = { pos, piece, endTargets: ends, you: v.you };
    $("#title").textContent = `${(catalog && catalog.rules.find((r) => r.id === v.rules)?.title) || v.rules}`;
    const open = v.seats.filter((s) => s.kind === "open");
    const missing = v.seats.filter((s) => s.kind === "open" || s.taken === false);
    const turnText = v.status === "finished" ? "Game over"
      : v.status === "waiting" ? (open.length ? `Waiting for ${missing.length} player${missing.length === 1 ? "" : "s"} to join`
        : `Waiting for ${missing.map((s) => s.name).join(", ")} to accept the rematch`)
        : v.to_move === v.you ? "Your turn" : `${name(v.to_move)} to play${v.ai.pending ? " (thinking…)" : ""}`;
    const gameTitle = (catalog && catalog.rules.find((r) => r.id === v.rules)?.title) || v.rules;
    document.title = `${v.status === "active" && v.to_move === v.you ? "● Your turn — " : ""}${gameTitle} · tilehouse`;
    $("#statusline").innerHTML = `<span class="turn ${v.to_move === v.you && v.status === "active" ? "yours" : ""}">${esc(turnText)}</span>${R0.status(v).map((x) => `<span>${esc(x)}</span>`).join("")}`;
    $("#table").className = `table n${v.seats.length} rules-${v.rules}`;
    const invite = v.status === "waiting" && open.length
      ? `<div class="invite" role="region" aria-label="Invitations"><h3>Send a link for each open seat</h3>${open.map((s) => `<div class="invrow"><span>Seat ${s.seat + 1}</span><input readonly value="${esc(joinLink(id, s.seat))}" aria-label="join link for seat ${s.seat + 1}"><button class="copy" data-copy="${esc(joinLink(id, s.seat))}">Copy</button></div>`).join("")}<small>The game starts when every seat is taken.</small></div>`
      : "";
    $("#table").innerHTML = `${v.seats.map(seatPanel).join("")}<div class="board" id="board">${invite}${R0.board(v, ctx)}</div>`;
  }

  function renderHand() {
    const v = T.view;
    const R0 = R();
    if (v.you === null || v.you === undefined) {
      $("#handarea").innerHTML = '<p class="muted">You are watching this game.</p>';
      return;
    }
    const counts = {};
    const groups = R0.groups(v.hand).filter((g) => g.tiles.length).map((g) => {
      const tiles = g.tiles.map((t) => {
        counts[t] = (counts[t] || 0) + 1;
        return piece(`h:${t}`, counts[t] - 1, tileSVG(t, { set: R0.set }), g.cls);
      }).join("");
      return `<div class="handgroup ${g.cls}">${g.label ? `<span class="label">${esc(g.label)}</span>` : ""}<div class="tiles">${tiles}</div></div>`;
    }).join("");
    const mine = v.status === "active" && v.to_move === v.you;
    $("#handarea").classList.toggle("myturn", mine);
    const done = mine ? complete(selKeys()) : [];
    const free = mine ? legal().filter((m) => R0.pieces(m).keys.length === 0) : [];
    const buttons = [...done, ...free].map((m, i) => `<button class="${i === 0 ? "primary" : ""} move" data-move="${esc(m.id)}">${esc(R0.moveLabel(m, v))}</button>`).join("");
    const note = mine && R0.selectionNote ? R0.selectionNote(v, T.sel) : null;
    const prompt = !mine ? (v.status === "finished" ? "" : `Waiting for ${esc(name(v.to_move))}…`)
      : T.sel.length ? (done.length ? "Confirm your move:" : "Select more tiles…") : "Your turn: pick a highlighted tile";
    const discards = v.discards && v.discards.length ? `<div class="mydiscards"><span class="label">Your face-down discards</span>${v.discards.map((d) => `<span class="group">${tilesHTML(d, "chinese")}</span>`).join("")}</div>` : "";
    $("#handarea").innerHTML = `<div class="hand">${groups || '<span class="muted">no tiles in hand</span>'}</div>
      <div class="actions"><span class="prompt">${prompt}${note ? ` <small>${esc(note)}</small>` : ""}</span>${buttons}${T.sel.length ? '<button class="ghost" id="clearsel">Clear (Esc)</button>' : ""}</div>${discards}${renderHint()}`;
  }

  function renderHint() {
    const h = T.hint;
    if (!h) return "";
    if (h.pending) return '<div class="hint"><span class="label">Hint</span> the AI is thinking…</div>';
    if (h.error) return `<div class="hint"><span class="label">Hint</span> ${esc(h.error)}</div>`;
    const cands = h.candidates.slice(0, 6);
    const maxV = Math.max(1, ...cands.map((c) => c.visits));
    const rows = cands.map((c) => {
      const m = T.view.legal_moves.find((x) => x.id === c.move);
      const label = m ? R().moveLabel(m, T.view) : c.move;
      const best = c.move === h.best ? " best" : "";
      return `<button class="hintrow${best}" data-hint="${esc(c.move)}" title="select this move">
        <span class="hl">${esc(label)}</span><span class="barbox"><span class="bar" style="width:${(100 * c.visits / maxV).toFixed(1)}%"></span></span>
        <span class="hv">${c.visits} visits · mean ${c.mean_reward === null || c.mean_reward === undefined ? "—" : c.mean_reward.toFixed(2)}</span></button>`;
    }).join("");
    return `<div class="hint" aria-label="AI suggestion"><span class="label">Hint from ${esc(h.engine)} (${h.iterations} iterations): visits per move, mean reward 0–1</span>${rows}</div>`;
  }

  /** What has the keyboard focus, as a selector that finds it again after the table is redrawn. */
  function focusKey() {
    const el = document.activeElement;
    if (!el || !app.contains(el)) return null;
    if (el.dataset.key !== undefined) return `button.piece[data-key="${CSS.escape(el.dataset.key)}"][data-idx="${el.dataset.idx}"]`;
    if (el.dataset.move) return `button.move[data-move="${CSS.escape(el.dataset.move)}"]`;
    if (el.dataset.end) return `button.end[data-end="${el.dataset.end}"]`;
    if (el.dataset.hint) return `button.hintrow[data-hint="${CSS.escape(el.dataset.hint)}"]`;
    return null;
  }

  function renderAll() {
    if (!T.view) return;
    const focused = focusKey();
    renderTable();
    renderHand();
    if (focused) {
      // keep the keyboard where it was; a piece that is gone hands the focus to the first move button
      const el = app.querySelector(focused) || app.querySelector("button.move") || app.querySelector("button.piece.live");
      if (el) el.focus();
    }
    $("#hintbtn").disabled = !(T.view.status === "active" && T.view.to_move === T.view.you && !T.busy);
    $("#resignbtn").hidden = !(T.features && T.features.resign && T.view.status !== "finished" && T.view.you !== null);
    bind();
    if (T.view.status === "finished") showResult();
  }

  function bind() {
    app.querySelectorAll("button.piece").forEach((b) => {
      b.onclick = () => clickPiece(b.dataset.key, Number(b.dataset.idx));
    });
    app.querySelectorAll("button.move").forEach((b) => {
      b.onclick = () => play(legal().find((m) => m.id === b.dataset.move));
    });
    app.querySelectorAll("button.end.live").forEach((b) => {
      b.onclick = () => {
        const m = complete(selKeys()).find((x) => x.end === b.dataset.end);
        if (m) play(m);
      };
    });
    app.querySelectorAll("button.hintrow").forEach((b) => {
      b.onclick = () => {
        const m = legal().find((x) => x.id === b.dataset.hint);
        if (!m) return;
        T.sel = [];
        const used = {};
        for (const k of R().pieces(m).keys) {
          used[k] = (used[k] || 0);
          T.sel.push({ key: k, idx: used[k]++ });
        }
        renderAll();
      };
    });
    app.querySelectorAll("button.copy").forEach((b) => {
      b.onclick = async () => {
        const input = b.previousElementSibling;
        input.select();
        try {
          await navigator.clipboard.writeText(b.dataset.copy);
          b.textContent = "Copied";
        } catch {
          b.textContent = "Selected: copy it";
        }
      };
    });
    const clear = $("#clearsel");
    if (clear) clear.onclick = () => { T.sel = []; renderAll(); };
  }

  // ---------------------------------------------------------------- events: the log and the animation
  function logEvent(e) {
    const text = words(R().eventText(e, name) || serviceEventText(e, name));
    if (!text) return;
    const li = document.createElement("li");
    li.className = `ev ev-${e.type}`;
    li.textContent = text;
    const ol = $("#logitems");
    ol.appendChild(li);
    while (ol.children.length > 300) ol.removeChild(ol.firstChild);
    ol.scrollTop = ol.scrollHeight;
  }

  async function animate(e) {
    if (e.seat === null || e.seat === undefined || e.seat === T.view?.you) return;
    const R0 = R();
    const ctx = { root: $("#table") };
    let ms = R0.animate ? R0.animate(e, ctx) : null;
    if (ms === null) {
      const text = words(R0.eventText(e, name));
      const b = app.querySelector(`[data-bubble="${e.seat}"]`);
      if (!text || !b) return;
      const shown = e.data.tile ? [e.data.tile] : e.data.tiles || (e.data.pool ? [e.data.hand || e.data.flipped, e.data.pool].filter(Boolean) : []);
      b.innerHTML = `${shown.length ? `<span class="bt">${tilesHTML(shown, R0.set)}</span>` : ""}<span>${esc(text.replace(`${name(e.seat)} `, ""))}</span>`;
      b.classList.add("show");
      ms = 750;
      await sleep(reducedMotion ? 150 : ms);
      b.classList.remove("show");
      return;
    }
    await sleep(reducedMotion ? 150 : ms);
  }

  async function fetchEvents() {
    const r = await api("GET", `/v1/games/${id}/events?after=${T.lastN}`, { token: token() });
    const evs = r.data || [];
    if (evs.length) T.lastN = evs[evs.length - 1].n;
    return evs;
  }

  function summaryFor(e) {
    const html = R().roundSummary ? R().roundSummary(e, name, T.view) : null;
    if (!html || T.view.status === "finished") return;
    const box = $("#overlay");
    box.hidden = false;
    box.innerHTML = `<div class="dialog" role="dialog" aria-modal="true" aria-label="summary">${html}<div class="dialogbtns"><button class="primary" id="continue">Continue</button></div></div>`;
    const btn = $("#continue");
    btn.focus();
    btn.onclick = () => { box.hidden = true; box.innerHTML = ""; };
  }

  // views are handled one at a time, in order (the watcher's and the answer to our own move)
  function onView(view, opts = {}) {
    // the offset to the server's clock is taken when the view arrives, not after the animations
    if (view.clock) T.clockOffset = view.clock.server_time_ms - Date.now();
    T.chain = T.chain.then(() => handleView(view, opts)).catch((err) => toast(problemText(err)));
    return T.chain;
  }

  async function handleView(view, { own = false } = {}) {
    if (T.stopped || (T.view && view.version < T.view.version)) return;
    const first = T.view === null;
    const prevVersion = T.view ? T.view.version : -1;
    // render the old table, then play the new events on it one by one, then show the new view
    const newer = view.last_event && view.last_event.n > T.lastN;
    if (first) {
      T.view = view;
      const evs = await fetchEvents();
      evs.forEach(logEvent);
    } else if (newer) {
      document.body.dataset.animating = "1";
      try {
        const evs = await fetchEvents();
        for (const e of evs) {
          logEvent(e);
          if (!own) await animate(e);
          summaryFor(e);
        }
      } finally {
        delete document.body.dataset.animating;
      }
    }
    if (view.version !== prevVersion || first) T.sel = [];
    T.view = view;
    const next = seatToUse();
    if (next !== T.seat) {
      T.seat = next;  // hot seat: the next view is read with that seat's token
      T.watcher.poke();
    }
    renderAll();
  }

  // ---------------------------------------------------------------- hint
  async function askHint() {
    if (!T.view || T.view.to_move !== T.view.you || T.view.status !== "active") return;
    T.hint = { pending: true };
    T.hintMove = null;
    renderHand();
    bind();
    try {
      const version = T.view.version;
      const r = await api("POST", `/v1/games/${id}/suggestions`, { body: { engine: "ismcts", params: { iterations: 400, time_ms: 5000 }, version }, token: token() });
      let job = r.data;
      const deadline = Date.now() + 30000;
      while (job.status !== "finished" && job.status !== "failed" && Date.now() < deadline) {
        await sleep(250);
        job = (await api("GET", `/v1/jobs/${job.id}`, { token: token() })).data;
      }
      if (!T.view || T.view.version !== version) return;
      if (job.status !== "finished") throw new Error(job.problem ? job.problem.detail : "the suggestion did not finish");
      const res = job.result;
      const cands = (res.stats && res.stats.candidates) || [{ move: res.move.id, visits: 1, mean_reward: 0 }];
      T.hint = { best: res.move.id, candidates: cands, engine: res.engine, iterations: res.stats ? res.stats.iterations : 0 };
      T.hintMove = T.view.legal_moves.find((m) => m.id === res.move.id) || null;
    } catch (err) {
      T.hint = { error: problemText(err) };
    }
    renderAll();
  }

  // ---------------------------------------------------------------- end of the match
  function showResult() {
    if (T.resultShown) return;
    T.resultShown = true;
    const v = T.view;
    const res = v.result || {};
    const order = res.ranking || v.seats.map((s) => s.seat);
    const rows = order.map((s, i) => {
      const seat = v.seats[s];
      return `<tr class="${s === v.you ? "me" : ""}"><td>${i + 1}</td><td>${esc(seat.name)}</td><td class="num">${fmt((res.scores || [])[s] ?? seat.score)}</td><td class="num">${signed((res.payoffs || [])[s] ?? 0)}</td></tr>`;
    }).join("");
    const R0 = R();
    const rev = R0.revealed ? R0.revealed(res) : null;
    const revHtml = rev ? `<h3>${esc(rev.title)}</h3><table class="results"><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td><td class="reveal">${rev.hands[s.seat].length ? tilesHTML(rev.hands[s.seat], R0.set) : "— (out)"}</td></tr>`).join("")}</tbody></table>` : "";
    const deals = (res.deals || []).map((d) => (R0.roundSummary ? R0.roundSummary({ type: v.rules === "kozel" ? "round_end" : v.rules === "tiengow" ? "deal_end" : "game_end", data: d }, name, v) : "")).join("");
    const winner = order.length ? v.seats[order[0]].name : "";
    const box = $("#overlay");
    box.hidden = false;
    box.innerHTML = `<div class="dialog result" role="dialog" aria-modal="true" aria-labelledby="res-title">
      <h2 id="res-title">${order[0] === v.you ? "You win!" : `${esc(winner)} wins`}</h2><p class="muted">${esc(res.reason || "")}</p>
      <table class="results"><thead><tr><th>#</th><th>Player</th><th class="num">Score</th><th class="num">Payoff</th></tr></thead><tbody>${rows}</tbody></table>
      ${revHtml}<details open><summary>${v.rules === "kozel" ? "Round by round" : v.rules === "tiengow" ? "Deal by deal" : "Game by game"}</summary>${deals}</details>
      <div class="dialogbtns"><button class="primary" id="rematch">Rematch</button><a class="button" href="#/">New game</a><button class="ghost" id="closeres">Look at the table</button></div></div>`;
    $("#rematch").focus();
    $("#rematch").onclick = () => rematch().catch((e) => toast(problemText(e)));
    $("#closeres").onclick = () => { box.hidden = true; };
  }

  async function rematch() {
    // the server's rematch when it has one; else the same setup as a new game from this tab
    if ((await serverFeatures()).rematch && mySeats.length) {
      // every human seat this tab holds asks (each gets its own token); the other players' tabs ask for
      // theirs, and the new game starts when all have
      const tokens = {};
      let next = null;
      for (const seat of mySeats) {
        const r = await api("POST", `/v1/games/${id}/rematch`, { token: rec.tokens[seat] });
        tokens[r.data.seat] = r.data.token;
        next = typeof r.data.game === "string" ? r.data.game : r.data.game.id;
      }
      saveGame(next, { tokens, admin: rec.admin, setup: rec.setup });
      location.hash = `#/game/${next}`;
      return;
    }
    if (!rec.setup) throw new Error("this tab does not know how the game was set up: start a new game");
    await createGame(rec.setup);
  }

  // ---------------------------------------------------------------- keyboard
  const onKey = (ev) => {
    if (ev.target && /INPUT|SELECT|TEXTAREA/.test(ev.target.tagName)) return;
    if (ev.key === "Escape") {
      if (!$("#overlay").hidden && T.view.status !== "finished") { $("#overlay").hidden = true; return; }
      T.sel = [];
      renderAll();
    } else if ((ev.key === "h" || ev.key === "H") && !$("#hintbtn").disabled) {
      askHint();
    } else if (ev.key === "l" || ev.key === "L") {
      $("#logbtn").click();
    }
  };
  document.addEventListener("keydown", onKey);
  $("#hintbtn").onclick = askHint;
  $("#resignbtn").onclick = async () => {
    if (!window.confirm("Resign? The match ends now and you rank last.")) return;
    try {
      const r = await api("POST", `/v1/games/${id}/resign`, { token: token() });
      await onView(r.data, { own: true });
    } catch (err) {
      toast(problemText(err));
    }
  };
  T.features = await serverFeatures();
  $("#logbtn").onclick = () => {
    const open = !$("#log").classList.contains("open");
    $("#log").classList.toggle("open", open);
    $("#logbtn").setAttribute("aria-expanded", String(open));
  };

  const ticker = setInterval(() => {
    const v = T.view;
    if (!v || !v.clock || v.clock.running === null || v.status !== "active") return;
    const el = app.querySelector(`[data-clock="${v.clock.running}"]`);
    const seat = v.seats[v.clock.running];
    if (!el || seat.clock_ms === null) return;
    const now = Date.now() + (T.clockOffset || 0);
    const left = Math.min(seat.clock_ms, seat.clock_ms - (now - v.clock.running_since_ms));
    el.textContent = clockText(left);
    el.classList.toggle("low", left < 10000);
  }, 250);
  T.watcher = new Watcher(id, token, (v) => onView(v), (err) => {
    if (err instanceof ApiError && (err.status === 404 || err.status === 401 || err.status === 403)) {
      T.watcher.stop();
      app.querySelector("#table").innerHTML = `<section class="panel center"><h2>This game is not available</h2><p>${esc(problemText(err))}</p><p><a href="#/">Start a new game</a></p></section>`;
    } else {
      toast(problemText(err));
    }
  });
  current = {
    stop() {
      T.stopped = true;
      clearInterval(ticker);
      T.watcher.stop();
      document.removeEventListener("keydown", onKey);
    },
  };
  await loadCatalog().catch(() => null);
  T.watcher.start();
}

// ------------------------------------------------------------------------------------------- start

document.body.insertAdjacentHTML("afterbegin", svgDefs());
route();

export { tileName };
