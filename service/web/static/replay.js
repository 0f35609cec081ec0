// A finished game, move by move (#/replay/<id>): the table after each move with every hand face up, from
// GET /v1/games/{id}/replay/steps/{n}; forward, back, to either end, or played on its own.

import { api, loadGame, readToken } from "./api.js";
import { RULESETS, esc, tilesHTML, fmt } from "./games.js";
import { t, num } from "./i18n.js";
import { app, toast, problemText, gameTitle, topBar } from "./ui.js";
import { eventSentence } from "./table.js";

const POS = { 2: ["pos-bottom", "pos-top"], 3: ["pos-bottom", "pos-right", "pos-left"], 4: ["pos-bottom", "pos-right", "pos-top", "pos-left"] };

export async function showReplay(id) {
  const rec = loadGame(id);
  const token = readToken(rec);
  // the events read as they did at the table for the seat this browser played ("you lead")
  const mine = rec ? Object.keys(rec.tokens || {}).map(Number).sort((a, b) => a - b) : [];
  const you = mine.length === 1 ? mine[0] : null;
  const cache = new Map();
  const get = async (n) => {
    if (!cache.has(n)) cache.set(n, (await api("GET", `/v1/games/${id}/replay/steps/${n}`, { token })).data);
    return cache.get(n);
  };
  let step = await get(0);
  let playing = null;
  const R0 = RULESETS[step.rules];
  document.title = `${t("replay.title", { game: gameTitle(step.rules) })} · tilehouse`;

  app.innerHTML = `${topBar()}<main id="main" class="replaymain"><h1>${esc(t("replay.title", { game: gameTitle(step.rules) }))}</h1>
    <div class="replaybar" role="toolbar" aria-label="${esc(t("replay.controls"))}">
      <button id="rp-start" title="${esc(t("replay.start"))}" aria-label="${esc(t("replay.start"))}">«</button>
      <button id="rp-back" title="${esc(t("replay.back"))}" aria-label="${esc(t("replay.back"))}">◀</button>
      <button id="rp-play" class="primary">${esc(t("replay.play"))}</button>
      <button id="rp-fwd" title="${esc(t("replay.forward"))}" aria-label="${esc(t("replay.forward"))}">▶</button>
      <button id="rp-end" title="${esc(t("replay.end"))}" aria-label="${esc(t("replay.end"))}">»</button>
      <input id="rp-range" type="range" min="0" max="${step.steps}" value="0" aria-label="${esc(t("replay.step", { n: 0, total: step.steps }))}">
      <span id="rp-count" role="status"></span></div>
    <p id="rp-last" class="replaylast"></p>
    <section id="rp-table" class="table replay" aria-label="${esc(t("table.board"))}"></section>
    <section class="panel replayhands" aria-labelledby="rp-hands"><h2 id="rp-hands">${esc(t("replay.hands"))}</h2><div id="rp-handlist"></div></section></main>`;
  const $ = (s) => app.querySelector(s);

  function render() {
    const n = step.seats.length;
    const v = { rules: step.rules, seats: step.seats, table: step.table, you: null, status: step.to_move === null ? "finished" : "active", legal_moves: [] };
    const names = { name: (s) => (s === null || s === undefined ? "—" : step.seats[s].name), you };
    const pos = (s) => (POS[n] || [])[s] || "pos-top";
    const ctx = { pos, piece: (key, i, svg) => `<span class="piece">${svg}</span>`, endTargets: [], you: null };
    const seats = step.seats.map((s) => `<div class="seat ${pos(s.seat)}${step.to_move === s.seat ? " turn" : ""}"><div class="seathead"><span class="name">${esc(s.name)}</span>${s.kind === "ai" ? `<span class="chip ai">${esc(s.engine || "AI")}</span>` : ""}</div>
      <div class="stats"><span class="score" title="${esc(t("table.score"))}">${fmt(s.score)}</span>${R0.seatStats(v, s)}</div>${R0.seatExtra ? R0.seatExtra(v, s) : ""}</div>`).join("");
    $("#rp-table").className = `table replay n${n} rules-${step.rules}`;
    $("#rp-table").innerHTML = `${seats}<div class="board">${R0.board(v, ctx)}</div>`;
    $("#rp-handlist").innerHTML = step.hands.map((h) => `<div class="replayhand"><span class="name">${esc(step.seats[h.seat].name)}</span><span class="tiles">${h.hand.length ? tilesHTML(R0.groups(h.hand).flatMap((g) => g.tiles), R0.set) : esc(t("result.out"))}</span>${h.discards && h.discards.length ? `<span class="muted">${esc(t("table.my_discards"))}: </span>${h.discards.map((d) => `<span class="group">${tilesHTML(d, R0.set)}</span>`).join("")}` : ""}</div>`).join("");
    const said = step.events.map((e) => eventSentence(R0, e, names)).filter(Boolean);
    $("#rp-last").textContent = step.step === 0 ? t("replay.nothing") : t("replay.event", { text: said.join(" · ") || step.move.move });
    $("#rp-count").textContent = t("replay.step", { n: num(step.step), total: num(step.steps) });
    $("#rp-range").value = String(step.step);
    $("#rp-range").setAttribute("aria-valuetext", $("#rp-count").textContent);
    $("#rp-back").disabled = $("#rp-start").disabled = step.step === 0;
    $("#rp-fwd").disabled = $("#rp-end").disabled = step.step === step.steps;
    $("#rp-play").textContent = t(playing ? "replay.pause" : "replay.play");
  }

  let busy = Promise.resolve();
  const go = (n) => {
    busy = busy.then(async () => {
      const target = Math.max(0, Math.min(step.steps, n));
      if (target === step.step) return;
      try {
        step = await get(target);
        render();
      } catch (err) {
        toast(problemText(err));
      }
    });
    return busy;
  };
  const stopPlaying = () => {
    if (playing) clearInterval(playing);
    playing = null;
  };
  $("#rp-start").onclick = () => { stopPlaying(); go(0); };
  $("#rp-back").onclick = () => { stopPlaying(); go(step.step - 1); };
  $("#rp-fwd").onclick = () => { stopPlaying(); go(step.step + 1); };
  $("#rp-end").onclick = () => { stopPlaying(); go(step.steps); };
  $("#rp-range").oninput = (ev) => { stopPlaying(); go(Number(ev.target.value)); };
  $("#rp-play").onclick = () => {
    if (playing) {
      stopPlaying();
      render();
      return;
    }
    playing = setInterval(() => {
      if (step.step >= step.steps) {
        stopPlaying();
        render();
      } else {
        go(step.step + 1);
      }
    }, 900);
    render();
  };
  const onKey = (ev) => {
    if (ev.target && /INPUT|SELECT|TEXTAREA/.test(ev.target.tagName)) return;
    if (ev.key === "ArrowRight") $("#rp-fwd").click();
    else if (ev.key === "ArrowLeft") $("#rp-back").click();
  };
  document.addEventListener("keydown", onKey);
  render();
  return {
    stop() {
      stopPlaying();
      document.removeEventListener("keydown", onKey);
    },
  };
}
