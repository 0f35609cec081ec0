// My games (#/games): every game this browser created or joined (localStorage: id, seat tokens, admin
// token), with its state read from the server, to resume, resign, replay or delete.

import { api, ApiError, listGames, forgetGame, readToken, serverFeatures } from "./api.js";
import { esc } from "./games.js";
import { t } from "./i18n.js";
import { app, toast, problemText, gameTitle, topBar } from "./ui.js";

/** The state of one remembered game: its view, or {gone: true} when the server no longer has it. */
async function stateOf(g) {
  try {
    return (await api("GET", `/v1/games/${g.id}`, { token: readToken(g) })).data;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 401 || err.status === 403)) return { gone: true };
    throw err;
  }
}

function stateText(v) {
  if (!v) return t("mygames.state.unknown");
  if (v.gone) return t("mygames.state.gone");
  if (v.status === "finished") return t("mygames.state.finished");
  if (v.status === "waiting") return t("mygames.state.waiting");
  if (v.you !== null && v.to_move === v.you) return t("mygames.state.your_turn");
  const seat = v.seats[v.to_move];
  return t("mygames.state.their_turn", { name: seat ? seat.name : "—" });
}

export async function showMyGames() {
  document.title = `${t("mygames.title")} · tilehouse`;
  const games = listGames();
  const features = await serverFeatures();
  const views = {};
  const row = (g) => {
    const v = views[g.id];
    const mine = Object.keys(g.tokens || {}).length > 0;
    const live = v && !v.gone && v.status !== "finished";
    const when = g.created ? new Date(g.created).toLocaleString(document.documentElement.lang || undefined, { dateStyle: "short", timeStyle: "short" }) : "";
    const rules = (v && v.rules) || g.rules;
    const actions = [
      v && !v.gone ? `<a class="button small" href="/#/game/${esc(g.id)}">${esc(t(mine ? "mygames.resume" : "mygames.watch"))}</a>` : "",
      v && v.status === "finished" ? `<a class="button small" href="/#/replay/${esc(g.id)}">${esc(t("mygames.replay"))}</a>` : "",
      live && mine && features.resign ? `<button class="small" data-resign="${esc(g.id)}">${esc(t("mygames.resign"))}</button>` : "",
      `<button class="small ghost" data-delete="${esc(g.id)}" title="${esc(t("mygames.delete_title"))}">${esc(t("mygames.delete"))}</button>`,
    ].join("");
    return `<tr data-game="${esc(g.id)}"><td>${esc(rules ? gameTitle(rules) : "—")}${mine ? "" : ` <span class="chip muted">${esc(t("mygames.spectator"))}</span>`}</td>
      <td class="state" data-state="${esc(v ? (v.gone ? "gone" : v.status) : "")}">${esc(stateText(v))}</td><td>${esc(when)}</td><td class="acts">${actions}</td></tr>`;
  };
  const render = () => {
    app.innerHTML = `${topBar("games")}<main id="main"><section class="panel"><h1 id="mg-title">${esc(t("mygames.title"))}</h1>
      ${games.length ? `<div class="scrollx" tabindex="0" role="region" aria-label="${esc(t("mygames.title"))}"><table class="results mygames"><thead><tr><th>${esc(t("mygames.game"))}</th><th>${esc(t("mygames.state"))}</th><th>${esc(t("mygames.started"))}</th><th>${esc(t("mygames.actions"))}</th></tr></thead>
      <tbody>${games.map(row).join("")}</tbody></table></div>` : `<p class="muted">${esc(t("mygames.empty"))}</p>`}</section></main>`;
    app.querySelectorAll("[data-resign]").forEach((b) => {
      b.onclick = async () => {
        if (!window.confirm(t("mygames.resign_confirm"))) return;
        const g = games.find((x) => x.id === b.dataset.resign);
        try {
          const seat = Object.keys(g.tokens).map(Number).sort((a, c) => a - c)[0];
          views[g.id] = (await api("POST", `/v1/games/${g.id}/resign`, { token: g.tokens[seat] })).data;
        } catch (err) {
          toast(problemText(err));
        }
        render();
      };
    });
    app.querySelectorAll("[data-delete]").forEach((b) => {
      b.onclick = async () => {
        const g = games.find((x) => x.id === b.dataset.delete);
        // the game's creator deletes it on the server too (its admin token); anyone else forgets it here
        if (g.admin && views[g.id] && !views[g.id].gone) {
          try {
            await api("DELETE", `/v1/games/${g.id}`, { token: g.admin });
          } catch (err) {
            if (!(err instanceof ApiError && err.status === 404)) {
              toast(problemText(err));
              return;
            }
          }
        }
        forgetGame(g.id);
        games.splice(games.indexOf(g), 1);
        render();
      };
    });
  };
  render();
  // the states come in as the server answers, a few at a time
  const queue = [...games];
  const worker = async () => {
    while (queue.length) {
      const g = queue.shift();
      try {
        views[g.id] = await stateOf(g);
      } catch (err) {
        toast(problemText(err));
      }
      const tr = app.querySelector(`tr[data-game="${CSS.escape(g.id)}"]`);
      if (tr) render();
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}
