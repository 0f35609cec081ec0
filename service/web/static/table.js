// The table (#/game/<id>): the seats, the board, your hand and your moves, the hint, the log, the
// summaries and the result, each drawn by its own renderer from the view of GET /v1/games/{id}.
//
// Views are handled one at a time, in order. The events since the last view shown are played on the
// table one by one (a tile lands in its slot, a bubble over the seat), the last one straight onto the
// new view, so the table is never behind by more than the pace of the events it still has to show; a
// view that arrives meanwhile is never lost (the watcher looks again at once) and views that pile up are
// read as the newest one only.

import { api, ApiError, loadGame, saveGame, serverFeatures } from "./api.js";
import { Watcher } from "./transport.js";
import { esc, tilesHTML, signed, fmt } from "./games.js";
import { t, num } from "./i18n.js";
import { app, sleep, toast, problemText, langSelect, createGame } from "./ui.js";
import {
  reducedMotion, clockText, legal as legalMoves, selKeys as selectedKeys, movesWith as movesMadeWith, complete, canAdd,
  R as rulesOf, seatName, renderTitle, renderStatus, renderTableArea, renderHand, renderActions, renderDiscards,
  renderHint, renderToolbar,
} from "./table_view.js";

// how long an event stays on its own before the next one is shown, in ms (hurry: a newer view is known),
// and what the pauses of one batch of events may take together
const PACE = { normal: 420, trick: 560, hurry: 160, batch: 600 };

// the service's own events (open seats, clocks, resigning), the same in every rule set
function serviceEventText(e, c) {
  const d = e.data || {};
  switch (e.type) {
    case "join": return t("event.join", { name: d.name || c.name(e.seat), n: e.seat + 1 });
    case "start": return t("event.start");
    case "timeout": return d.action === "forfeit" ? t("event.timeout_forfeit", { name: c.name(e.seat) })
      : t("event.timeout_ai", { name: c.name(e.seat), engine: d.engine || t("event.the_ai") });
    case "resign": return e.seat === c.you ? t("event.you_resign") : t("event.resign", { name: c.name(e.seat) });
    case "rematch": return t("event.rematch");
    default: return null;
  }
}

/** The sentence of any event: the rule set's, else the service's. */
export function eventSentence(R0, e, c) {
  return R0.eventText(e, c) || serviceEventText(e, c);
}

/** The result's reason in words (the engine's is English: "1 deal(s) played", "all 3 games played"). */
function reasonText(res, c) {
  const r = res.reason || "";
  const deals = (res.deals || []).length;
  if (r === "resigned") return t("result.reason.resigned", { name: c.name(res.resigned) });
  if (r === "goat") return t("result.reason.goat");
  if (/deal/.test(r)) return t("result.reason.deals", { count: deals || Number.parseInt(r, 10) || 1 });
  if (/games? played/.test(r)) return t("result.reason.games", { count: deals || Number.parseInt(r.replace(/\D+/g, " "), 10) || 1 });
  return r;
}

export async function showTable(id) {
  const rec = loadGame(id) || { tokens: {} };
  const mySeats = Object.keys(rec.tokens || {}).map(Number).sort((a, b) => a - b);
  const T = {
    id, rec, view: null, lastN: 0, sel: [], busy: false, hint: null, hintMove: null,
    stopped: false, watcher: null, resultShown: false, chain: Promise.resolve(), features: null,
  };
  // the seat whose eyes we look through: the one to move among ours (hot seat), else our first
  const seatToUse = () => {
    if (!mySeats.length) return null;
    const v = T.view;
    if (v && v.to_move !== null && mySeats.includes(v.to_move)) return v.to_move;
    return T.seat ?? mySeats[0];
  };
  T.seat = mySeats.length ? mySeats[0] : null;
  // a spectator reads with the admin token when this browser created the game (its stream needs one)
  const token = () => (T.seat === null ? rec.admin || null : rec.tokens[T.seat]);

  app.innerHTML = `<div class="tablewrap"><header class="bar">
      <a href="/#/" class="brand" title="${esc(t("nav.new_game"))}">${esc(t("app.brand"))}</a><h1 id="title" class="title"></h1>
      <span class="spacer"></span>
      <button id="hintbtn" class="ghost" disabled title="${esc(t("table.hint_title"))}">${esc(t("table.hint"))}</button>
      <button id="logbtn" class="ghost" aria-expanded="false" aria-controls="log" title="${esc(t("table.log_title"))}">${esc(t("table.log"))}</button>
      <button id="resignbtn" class="ghost" hidden title="${esc(t("table.resign_title"))}">${esc(t("table.resign"))}</button>
      <nav class="tablenav" aria-label="${esc(t("nav.main"))}"><a href="/#/games" class="ghost button">${esc(t("nav.my_games"))}</a><a href="/#/" class="ghost button" id="newbtn">${esc(t("nav.new_game"))}</a></nav>
      ${langSelect()}</header>
    <main id="main" class="tablemain">
      <div id="statusline" class="statusline" role="status" aria-live="polite"></div>
      <section id="table" class="table" aria-label="${esc(t("table.board"))}"></section>
      <section id="handarea" class="handarea" aria-label="${esc(t("table.your_hand"))}">
        <div id="hand" class="hand"></div><div id="actions" class="actions"></div><div id="discards"></div><div id="hintbox"></div>
      </section>
      <div id="overlay" class="overlay" hidden></div>
    </main>
    <aside id="log" class="log" aria-labelledby="logtitle"><h2 id="logtitle">${esc(t("table.log_heading"))}</h2><ol id="logitems" tabindex="0" aria-label="${esc(t("table.log_heading"))}"></ol></aside></div>`;
  const $ = (s) => app.querySelector(s);

  const name = (s) => seatName(T, s);
  const words = () => ({ name, you: T.view ? T.view.you : null });

  // ---------------------------------------------------------------- legal moves and the selection
  const R = () => rulesOf(T);
  const legal = () => legalMoves(T);
  const selKeys = () => selectedKeys(T);
  const movesWith = (sel) => movesMadeWith(T, sel);

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
      if (!canAdd(T, key)) return;
      T.sel.push({ key, idx });
      const done = complete(T, selKeys());
      const more = movesWith(selKeys()).length > movesWith(selKeys()).filter((m) => R().pieces(m).keys.length === selKeys().length).length;
      if (done.length === 1 && !more) {
        play(done[0]);
        return;
      }
    }
    renderAll();
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

  function renderAll({ hint = true } = {}) {
    if (!T.view) return;
    const focused = focusKey();
    renderTitle(T);
    renderStatus(T);
    renderTableArea(T);
    renderHand(T);
    renderActions(T);
    renderDiscards(T);
    if (hint) renderHint(T);
    renderToolbar(T);
    if (focused) {
      // keep the keyboard where it was; a piece that is gone hands the focus to the first move button
      const el = app.querySelector(focused) || app.querySelector("button.move") || app.querySelector("button.piece.live");
      if (el) el.focus();
    }
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
        const m = movesWith(selKeys()).find((x) => x.end === b.dataset.end && R().pieces(x).keys.length === selKeys().length);
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
        renderAll({ hint: false });
      };
    });
    app.querySelectorAll("button.copy").forEach((b) => {
      b.onclick = async () => {
        const input = b.previousElementSibling;
        input.select();
        try {
          await navigator.clipboard.writeText(b.dataset.copy);
          b.textContent = t("app.copied");
        } catch {
          b.textContent = t("app.copy_selected");
        }
      };
    });
    const clear = $("#clearsel");
    if (clear) clear.onclick = () => { T.sel = []; renderAll({ hint: false }); };
  }

  // ---------------------------------------------------------------- events: the log and the animation
  function logEvent(e) {
    const text = eventSentence(R(), e, words());
    if (!text) return;
    const li = document.createElement("li");
    li.className = `ev ev-${e.type}`;
    li.dataset.n = String(e.n);
    li.textContent = text;
    const ol = $("#logitems");
    ol.appendChild(li);
    while (ol.children.length > 300) ol.removeChild(ol.firstChild);
    ol.scrollTop = ol.scrollHeight;
  }

  /** Show an event on the table as it is now: the rule set's drawing, else a bubble over the seat. */
  function showEvent(e) {
    if (e.seat === null || e.seat === undefined || e.seat === T.view?.you) return false;
    const R0 = R();
    if (R0.animate && R0.animate(e, { root: $("#table") })) return true;
    const text = eventSentence(R0, e, words());
    const b = app.querySelector(`[data-bubble="${e.seat}"]`);
    if (!text || !b) return false;
    const d = e.data || {};
    const shown = d.tile ? [d.tile] : d.tiles || (d.pool ? [d.hand || d.flipped, d.pool].filter(Boolean) : []);
    b.innerHTML = `${shown.length ? `<span class="bt">${tilesHTML(shown, R0.set)}</span>` : ""}<span>${esc(text.replace(`${name(e.seat)} `, ""))}</span>`;
    b.classList.add("show");
    setTimeout(() => b.classList.remove("show"), 1400);
    return true;
  }

  /** The last event of a batch, drawn on the new view: the tile that just landed, or the bubble. */
  function markLast(e) {
    if (e.seat === null || e.seat === undefined || e.seat === T.view.you) return;
    const slot = app.querySelector(`[data-slot="${e.seat}"]`);
    if (slot && (e.type === "lead" || e.type === "beat" || e.type === "discard")) {
      slot.classList.add("fresh");
      return;
    }
    if (e.type !== "trick_won") showEvent(e);
  }

  /** Wait while an event is on show; a newer view arriving meanwhile cuts the wait to the hurried pace. */
  function pause(ms) {
    return new Promise((resolve) => {
      const start = Date.now();
      let timer = setTimeout(resolve, ms);
      T.watcher.onPoke = () => {
        clearTimeout(timer);
        timer = setTimeout(resolve, Math.max(0, Math.min(ms, PACE.hurry) - (Date.now() - start)));
      };
    }).finally(() => { T.watcher.onPoke = null; });
  }

  /** The events since the last one shown, up to `upto`: from the stream when it delivered them all. */
  async function fetchEvents(upto = null) {
    const streamed = upto === null ? null : T.watcher.take(T.lastN, upto, token());
    const evs = streamed || (await api("GET", `/v1/games/${id}/events?after=${T.lastN}`, { token: token() })).data || [];
    if (evs.length) T.lastN = evs[evs.length - 1].n;
    return evs;
  }

  function summaryFor(e) {
    // the summary is the dialog's own heading (h2, after the page's h1); in the result it is a section (h3)
    const html = R().roundSummary ? R().roundSummary(e, words(), T.view, 2) : null;
    if (!html || T.view.status === "finished") return;
    const box = $("#overlay");
    box.hidden = false;
    box.innerHTML = `<div class="dialog" role="dialog" aria-modal="true" aria-label="${esc(t("table.summary"))}">${html}<div class="dialogbtns"><button class="primary" id="continue">${esc(t("table.continue"))}</button></div></div>`;
    box.scrollTop = 0;
    const btn = $("#continue");
    btn.focus({ preventScroll: true });
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
    const newer = view.last_event && view.last_event.n > T.lastN;
    let last = null;
    if (first) {
      T.view = view;
      (await fetchEvents()).forEach(logEvent);
    } else if (newer) {
      document.body.dataset.animating = "1";
      try {
        const evs = await fetchEvents(view.last_event.n);
        for (let i = 0; i < evs.length; i++) {
          const e = evs[i];
          logEvent(e);
          summaryFor(e);
          if (i === evs.length - 1) {
            last = e;  // drawn on the new view below, at once
          } else if (!own && showEvent(e)) {
            // the pauses of one batch share a budget, so its last event is never shown late
            const share = PACE.batch / (evs.length - 1);
            const hurry = reducedMotion || T.watcher.behind;
            await pause(Math.min(hurry ? PACE.hurry : e.type === "trick_won" ? PACE.trick : PACE.normal, Math.max(share, 60)));
          }
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
    renderAll({ hint: view.version !== prevVersion || first });
    if (last && !own) markLast(last);
  }

  // ---------------------------------------------------------------- hint
  async function askHint() {
    if (!T.view || T.view.to_move !== T.view.you || T.view.status !== "active") return;
    T.hint = { pending: true };
    T.hintMove = null;
    renderHint(T);
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
      if (job.status !== "finished") throw new Error(job.problem ? job.problem.detail : t("hint.not_finished"));
      const res = job.result;
      const cands = (res.stats && res.stats.candidates) || [{ move: res.move.id, visits: 1, mean_reward: null }];
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
    const c = words();
    const order = res.ranking || v.seats.map((s) => s.seat);
    const rows = order.map((s, i) => {
      const seat = v.seats[s];
      return `<tr class="${s === v.you ? "me" : ""}"><td>${num(i + 1)}</td><td>${esc(seat.name)}</td><td class="num">${fmt((res.scores || [])[s] ?? seat.score)}</td><td class="num">${signed((res.payoffs || [])[s] ?? 0)}</td></tr>`;
    }).join("");
    const R0 = R();
    const rev = R0.revealed ? R0.revealed(res) : null;
    const revHtml = rev ? `<h3>${esc(rev.title)}</h3><table class="results"><tbody>${v.seats.map((s) => `<tr><td>${esc(s.name)}</td><td class="reveal">${rev.hands[s.seat].length ? tilesHTML(rev.hands[s.seat], R0.set) : esc(t("result.out"))}</td></tr>`).join("")}</tbody></table>` : "";
    const endType = { kozel: "round_end", tiengow: "deal_end" }[v.rules] || "game_end";
    const deals = (res.deals || []).map((d) => (R0.roundSummary ? R0.roundSummary({ type: endType, data: d }, c, v, 3) || "" : "")).join("");
    const byKey = { kozel: "result.by_round", tiengow: "result.by_deal" }[v.rules] || "result.by_game";
    const winner = order.length ? v.seats[order[0]].name : "";
    const box = $("#overlay");
    box.hidden = false;
    box.innerHTML = `<div class="dialog result" role="dialog" aria-modal="true" aria-labelledby="res-title">
      <h2 id="res-title" tabindex="-1">${esc(order[0] === v.you ? t("result.you_win") : t("result.wins", { name: winner }))}</h2><p class="muted">${esc(reasonText(res, c))}</p>
      <table class="results"><thead><tr><th>${esc(t("result.rank"))}</th><th>${esc(t("result.player"))}</th><th class="num">${esc(t("result.score"))}</th><th class="num">${esc(t("result.payoff"))}</th></tr></thead><tbody>${rows}</tbody></table>
      ${revHtml}${deals ? `<details open><summary>${esc(t(byKey))}</summary>${deals}</details>` : ""}
      <div class="dialogbtns"><button class="primary" id="rematch">${esc(t("result.rematch"))}</button><a class="button" href="/#/replay/${esc(id)}" id="replaybtn">${esc(t("result.replay"))}</a><a class="button" href="/#/">${esc(t("nav.new_game"))}</a><button class="ghost" id="closeres">${esc(t("result.look"))}</button></div></div>`;
    // a tall result opens at its top, with the keyboard on its heading
    box.scrollTop = 0;
    $("#res-title").focus({ preventScroll: true });
    $("#rematch").onclick = () => rematch().catch((e) => toast(problemText(e)));
    $("#closeres").onclick = () => { box.hidden = true; };
  }

  async function rematch() {
    // the server's rematch when it has one; else the same setup as a new game from this browser
    if ((await serverFeatures()).rematch && mySeats.length) {
      // every human seat this browser holds asks (each gets its own token); the other players' browsers
      // ask for theirs, and the new game starts when all have
      const tokens = {};
      let next = null;
      for (const seat of mySeats) {
        const r = await api("POST", `/v1/games/${id}/rematch`, { token: rec.tokens[seat] });
        tokens[r.data.seat] = r.data.token;
        next = typeof r.data.game === "string" ? r.data.game : r.data.game.id;
      }
      saveGame(next, { tokens, admin: rec.admin, setup: rec.setup, rules: T.view.rules, created: Date.now() });
      location.hash = `#/game/${next}`;
      return;
    }
    if (!rec.setup) throw new Error(t("result.no_setup"));
    await createGame(rec.setup);
  }

  // ---------------------------------------------------------------- keyboard and the toolbar
  const onKey = (ev) => {
    if (ev.target && /INPUT|SELECT|TEXTAREA/.test(ev.target.tagName)) return;
    if (!T.view) return;
    if (ev.key === "Escape") {
      if (!$("#overlay").hidden && T.view.status !== "finished") { $("#overlay").hidden = true; return; }
      T.sel = [];
      renderAll({ hint: false });
    } else if ((ev.key === "h" || ev.key === "H") && !$("#hintbtn").disabled) {
      askHint();
    } else if (ev.key === "l" || ev.key === "L") {
      $("#logbtn").click();
    }
  };
  document.addEventListener("keydown", onKey);
  $("#hintbtn").onclick = askHint;
  $("#resignbtn").onclick = async () => {
    if (!window.confirm(t("table.resign_confirm"))) return;
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
      $("#table").innerHTML = `<div class="panel center"><h2>${esc(t("table.not_available"))}</h2><p>${esc(problemText(err))}</p><p><a href="/#/games">${esc(t("nav.my_games"))}</a> · <a href="/#/">${esc(t("app.start_new"))}</a></p></div>`;
    } else {
      toast(problemText(err));
    }
  });
  T.watcher.start();
  return {
    stop() {
      T.stopped = true;
      clearInterval(ticker);
      T.watcher.stop();
      document.removeEventListener("keydown", onKey);
    },
  };
}
