// tilehouse web client: the screens, on the public /v1 API only.
//
// Routes (in the URL fragment, so the server serves one static page; /rules and /rules/<id> are also
// paths of their own, the same page):
//   #/                      new game
//   #/games                 my games: the games this browser created or joined
//   #/game/<id>             the table, as the seats this browser holds tokens for (or as a spectator)
//   #/join/<id>/<seat>      take an open seat someone sent you a link to
//   #/rules, #/rules/<id>   the rules
//   #/replay/<id>           a finished game, move by move, every hand face up

import { api, loadGame, saveGame, serverFeatures } from "./api.js";
import { esc } from "./games.js";
import { tileSVG, svgDefs } from "./tiles.js";
import { t, setLang, preferredLang } from "./i18n.js";
import { app, toast, problemText, gameTitle, topBar, loadCatalog, createGame } from "./ui.js";
import { showTable } from "./table.js";
import { showMyGames } from "./mygames.js";
import { showRules } from "./rules.js";
import { showReplay } from "./replay.js";

let current = null; // the screen that runs something (a table, a replay): {stop()}

// ---------------------------------------------------------------------------------------- routing

function where() {
  const hash = location.hash.replace(/^#\/?/, "");
  if (hash) return hash.split("/").filter(Boolean);
  // the paths of their own: /rules and /rules/<id>
  const path = location.pathname.split("/").filter(Boolean);
  return path[0] === "rules" ? path : [];
}

async function route() {
  if (current) current.stop();
  current = null;
  const parts = where();
  window.scrollTo(0, 0);
  try {
    if (parts[0] === "game" && parts[1]) current = await showTable(parts[1]);
    else if (parts[0] === "join" && parts[1] && parts[2] !== undefined) await joinSeat(parts[1], Number(parts[2]));
    else if (parts[0] === "games") await showMyGames();
    else if (parts[0] === "rules") await showRules(parts[1] || null);
    else if (parts[0] === "replay" && parts[1]) current = await showReplay(parts[1]);
    else await showNewGame();
  } catch (err) {
    app.innerHTML = `${topBar()}<main id="main" class="panel center"><h1>${esc(t("app.error_title"))}</h1><p>${esc(problemText(err))}</p><p><a href="/#/">${esc(t("app.start_new"))}</a></p></main>`;
  }
}

window.addEventListener("hashchange", route);

// the language switcher is on every screen: a new language draws the screen again
document.addEventListener("change", async (ev) => {
  if (ev.target && ev.target.id === "lang") {
    await setLang(ev.target.value, true);
    route();
  }
});

// -------------------------------------------------------------------------------------- new game

/** Strength presets of an engine: the server's own list when it gives one, else its defaults. */
function presetsOf(engine) {
  if (Array.isArray(engine.presets) && engine.presets.length) return engine.presets;
  return [{ name: "default", label: "default", params: {} }];
}

function presetLabel(p) {
  if (p.params && p.params.iterations) return t(`preset.${p.name}`, { iterations: p.params.iterations.toLocaleString() });
  return t(`preset.${p.name}`);
}

function defaultAiSeat(engines) {
  const e = engines.find((x) => x.id === "ismcts") || engines[0];
  const presets = presetsOf(e);
  const p = presets.find((x) => x.default) || presets[Math.floor((presets.length - 1) / 2)];
  return { kind: "ai", engine: e.id, preset: p.name };
}

// time controls offered at creation: "<initial s>+<increment s>"
const CLOCKS = ["", "60+2", "300+3", "900+10"];

// default names by the seat's place at the table, seen from seat 0
const PLACES = { 2: ["south", "north"], 3: ["south", "east", "west"], 4: ["south", "east", "north", "west"] };

function seatBody(seat, engines, i, players) {
  const key = (PLACES[players] || [])[i];
  const place = key ? t(`seat.place.${key}`) : t("seat.number", { n: i + 1 });
  if (seat.kind === "human") return { kind: "human", name: seat.name || (i === 0 ? t("seat.you") : place) };
  if (seat.kind === "open") return { kind: "open", name: seat.name || place };
  const e = engines.find((x) => x.id === seat.engine);
  const preset = presetsOf(e).find((p) => p.name === seat.preset) || presetsOf(e)[0];
  const body = { kind: "ai", engine: seat.engine, name: seat.name || place };
  if (preset.params && Object.keys(preset.params).length) body.params = preset.params;
  return body;
}

async function quickStart() {
  const { engines } = await loadCatalog();
  const ai = defaultAiSeat(engines);
  const seats = [{ kind: "human", name: t("seat.you") }];
  for (let i = 1; i < 4; i++) seats.push(seatBody(ai, engines, i, 4));
  await createGame({ rules: "tiengow", seats });
}

/** An all-AI table of a rule set, watched as a spectator (this browser keeps the admin token). */
async function watchAi(rulesId, players) {
  const { engines } = await loadCatalog();
  const e = engines.find((x) => x.id === "ismcts") || engines[0];
  const quick = presetsOf(e).find((p) => p.name === "quick") || presetsOf(e)[0];
  const seats = [];
  for (let i = 0; i < players; i++) {
    const key = (PLACES[players] || [])[i];
    const body = { kind: "ai", engine: e.id, name: key ? t(`seat.place.${key}`) : t("seat.number", { n: i + 1 }) };
    if (quick.params && Object.keys(quick.params).length) body.params = quick.params;
    seats.push(body);
  }
  await createGame({ rules: rulesId, seats }, { spectator: true });
}

const optionName = (rid, o) => t(`option.${rid}.${o.name}`) === `option.${rid}.${o.name}` ? o.name.replace(/_/g, " ") : t(`option.${rid}.${o.name}`);
const optionHelp = (rid, o) => t(`option.${rid}.${o.name}.help`) === `option.${rid}.${o.name}.help` ? o.description : t(`option.${rid}.${o.name}.help`);
const optionValue = (rid, o, x) => {
  const key = `option.${rid}.${o.name}.${x}`;
  return t(key) === key ? String(x) : t(key);
};

async function showNewGame() {
  document.title = t("app.title");
  app.innerHTML = `${topBar("new")}<main id="main"><section class="panel center"><h1>${esc(t("nav.new_game"))}</h1><p class="muted">${esc(t("new.loading_rules"))}</p></section></main>`;
  const { rules, engines } = await loadCatalog();
  const features = await serverFeatures();
  const state = { rules: "tiengow", players: 4, seats: [], options: {}, clock: "" };

  const ruleOf = () => rules.find((r) => r.id === state.rules);
  const resetSeats = () => {
    const r = ruleOf();
    const old = state.seats;
    state.seats = Array.from({ length: state.players }, (_, i) => old[i] || (i === 0 ? { kind: "human", name: "" } : { ...defaultAiSeat(engines), name: "" }));
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
        input = `<select id="${id}" data-opt="${o.name}">${o.enum.map((x) => `<option value="${esc(x)}" ${x === val ? "selected" : ""}>${esc(optionValue(r.id, o, x))}${x === o.default ? ` ${esc(t("new.default_mark"))}` : ""}</option>`).join("")}</select>`;
      } else if (o.type === "integer" || o.type === "number") {
        input = `<input type="number" id="${id}" data-opt="${o.name}" value="${val}" ${o.minimum !== undefined ? `min="${o.minimum}"` : ""} ${o.maximum !== undefined ? `max="${o.maximum}"` : ""} step="${o.type === "integer" ? 1 : "any"}">`;
      } else {
        input = `<input type="text" id="${id}" data-opt="${o.name}" value="${esc(val)}">`;
      }
      const shownDefault = o.type === "boolean" ? t(o.default ? "option.yes" : "option.no") : optionValue(r.id, o, o.default);
      const bounds = o.minimum !== undefined ? t("new.bounds", { min: o.minimum, max: o.maximum, default: shownDefault }) : t("new.default_value", { default: shownDefault });
      return `<div class="field ${o.type === "boolean" ? "check" : ""}"><label for="${id}">${esc(optionName(r.id, o))}</label>${input}<small>${esc(optionHelp(r.id, o))} ${esc(bounds)}</small></div>`;
    };
    const seatRow = (s, i) => {
      const kinds = [["human", t("new.kind.human")], ["ai", t("new.kind.ai")]];
      if (features.openSeats) kinds.push(["open", t("new.kind.open")]);
      const engine = engines.find((e) => e.id === s.engine) || engines[0];
      const ai = s.kind === "ai"
        ? `<select data-seat="${i}" data-k="engine" aria-label="${esc(t("new.seat_engine", { n: i + 1 }))}">${engines.map((e) => `<option value="${e.id}" ${e.id === s.engine ? "selected" : ""}>${esc(e.id)}</option>`).join("")}</select>
           <select data-seat="${i}" data-k="preset" aria-label="${esc(t("new.seat_strength", { n: i + 1 }))}">${presetsOf(engine).map((p) => `<option value="${esc(p.name)}" ${p.name === s.preset ? "selected" : ""}>${esc(presetLabel(p))}</option>`).join("")}</select>`
        : "";
      return `<div class="seatrow"><span class="seatno" aria-hidden="true">${i + 1}</span>
        <select data-seat="${i}" data-k="kind" aria-label="${esc(t("new.seat_player", { n: i + 1 }))}">${kinds.map(([k, l]) => `<option value="${k}" ${k === s.kind ? "selected" : ""}>${esc(l)}</option>`).join("")}</select>
        <input data-seat="${i}" data-k="name" placeholder="${esc(s.kind === "ai" ? t("new.name_optional") : t("new.name"))}" value="${esc(s.name || "")}" aria-label="${esc(t("new.seat_name", { n: i + 1 }))}" maxlength="40">${ai}</div>`;
    };
    const clockField = features.clock ? `<div class="field"><label for="clock">${esc(t("new.clock"))}</label><select id="clock">${CLOCKS.map((v) => `<option value="${v}" ${v === state.clock ? "selected" : ""}>${esc(t(`new.clock.${v || "none"}`))}</option>`).join("")}</select><small>${esc(t("new.clock_help"))}</small></div>` : "";
    app.innerHTML = `${topBar("new")}<main id="main">
      <section class="hero" aria-labelledby="hero-title">
        <div class="hero-text"><h1 id="hero-title">${esc(t("new.hero_title"))}</h1>
          <p>${esc(t("new.hero_text"))}</p>
          <button id="quick" class="primary big">${esc(t("new.quick"))}</button></div>
        <div class="hero-tiles" aria-hidden="true">${["6-6", "1-1", "4-4", "4-2", "2-1"].map((x) => tileSVG(x)).join("")}</div>
      </section>
      <section class="panel" aria-labelledby="ng-title">
        <h2 id="ng-title">${esc(t("new.title"))}</h2>
        <form id="newgame">
          <div class="field"><label for="rules">${esc(t("new.game"))}</label><select id="rules">${rules.map((x) => `<option value="${x.id}" ${x.id === state.rules ? "selected" : ""}>${esc(gameTitle(x.id))}</option>`).join("")}</select>
            <p class="summary" id="rules-summary">${esc(t(`rules.${r.id}.summary`))}</p>
            <p class="rulelinks"><a href="/#/rules/${r.id}" id="readrules">${esc(t("new.read_rules", { game: gameTitle(r.id) }))}</a> · <button type="button" class="linkish" id="watch">${esc(t("new.watch", { game: gameTitle(r.id) }))}</button></p></div>
          <div class="field"><label for="players">${esc(t("new.players"))}</label><select id="players">${counts.map((n) => `<option ${n === state.players ? "selected" : ""}>${n}</option>`).join("")}</select></div>
          <fieldset><legend>${esc(t("new.seats"))}</legend>${state.seats.map(seatRow).join("")}</fieldset>
          <fieldset><legend>${esc(t("new.options"))}</legend>${r.options.map(optionField).join("") || `<p class="muted">${esc(t("new.none"))}</p>`}${clockField}</fieldset>
          <button type="submit" class="primary" id="create">${esc(t("new.start"))}</button>
        </form>
      </section></main>`;
    document.getElementById("quick").onclick = () => quickStart().catch((e) => toast(problemText(e)));
    document.getElementById("watch").onclick = () => watchAi(state.rules, state.players).catch((e) => toast(problemText(e)));
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
  if (rec.tokens && rec.tokens[seat]) {
    location.hash = `#/game/${id}`;
    return;
  }
  const { data: v } = await api("GET", `/v1/games/${id}`);
  const others = v.seats.filter((s) => s.seat !== seat).map((s) => s.name).join(", ");
  app.innerHTML = `${topBar()}<main id="main"><section class="panel center"><h1>${esc(t("join.title", { game: gameTitle(v.rules) }))}</h1>
    <p>${esc(t("join.text", { n: seat + 1, others }))}</p>
    <p class="summary">${esc(t(`rules.${v.rules}.summary`))}</p>
    <form id="joinform"><div class="field"><label for="joinname">${esc(t("join.name"))}</label><input id="joinname" maxlength="40" value="" placeholder="${esc(t("new.name"))}"></div>
    <button class="primary" type="submit" id="joinbtn">${esc(t("join.take"))}</button> <a class="button ghost" href="/#/">${esc(t("join.no"))}</a></form></section></main>`;
  const input = document.getElementById("joinname");
  input.focus();
  document.getElementById("joinform").onsubmit = async (ev) => {
    ev.preventDefault();
    try {
      const body = input.value.trim() ? { name: input.value.trim() } : {};
      const r = await api("POST", `/v1/games/${id}/seats/${seat}/join`, { body });
      const tokens = { ...(rec.tokens || {}), [seat]: r.data.token };
      saveGame(id, { ...rec, tokens, rules: v.rules });
      location.hash = `#/game/${id}`;
    } catch (err) {
      toast(problemText(err));
    }
  };
}

// ------------------------------------------------------------------------------------------- start

document.body.insertAdjacentHTML("afterbegin", svgDefs());
setLang(preferredLang()).catch(() => null).then(route);
