// What every screen shares: the top bar (navigation, language switcher), messages, problem texts, the
// server's catalog of rule sets and engines, and creating a game.

import { api, ApiError, saveGame } from "./api.js";
import { t, LANGS, currentLang } from "./i18n.js";
import { esc } from "./games.js";

export const app = document.getElementById("app");
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function toast(msg, kind = "error") {
  const el = document.createElement("div");
  el.className = `toast ${kind}`;
  el.setAttribute("role", kind === "error" ? "alert" : "status");
  el.textContent = msg;
  document.body.appendChild(el);
  setTimeout(() => el.remove(), 5000);
}

export function problemText(err) {
  if (err instanceof ApiError) {
    if (err.status === 429 && err.problem.type && err.problem.type.endsWith(":live-games")) return t("error.too_many");
    const errors = err.problem.errors ? Object.entries(err.problem.errors).map(([k, v]) => `${k}: ${[].concat(v).join(", ")}`).join("; ") : "";
    return `${err.problem.title || t("app.error")}: ${err.message}${errors ? ` (${errors})` : ""}`;
  }
  return String(err && err.message ? err.message : err);
}

/** The name of a rule set in the chosen language. */
export const gameTitle = (rulesId) => t(`game.${rulesId}`);

/** The language switcher: every catalog language, named in itself. */
export function langSelect() {
  return `<label class="langpick"><span class="visually-hidden">${esc(t("lang.label"))}</span><select id="lang" aria-label="${esc(t("lang.label"))}">${LANGS.map(([code, label]) => `<option value="${code}" lang="${code}" ${code === currentLang() ? "selected" : ""}>${esc(label)}</option>`).join("")}</select></label>`;
}

/** The top bar of the screens around the table: brand, navigation, language. */
export function topBar(active = "") {
  const link = (href, key, name) => `<a href="${href}" class="${active === name ? "current" : ""}" ${active === name ? 'aria-current="page"' : ""}>${esc(t(key))}</a>`;
  return `<header class="topbar"><a href="/#/" class="brand">${esc(t("app.brand"))}</a>
    <nav aria-label="${esc(t("nav.main"))}">${link("/#/", "nav.new_game", "new")}${link("/#/games", "nav.my_games", "games")}${link("/#/rules", "nav.rules", "rules")}</nav>
    <span class="spacer"></span>${langSelect()}</header>`;
}

let catalog = null;

/** The server's rule sets and engines (GET /v1/rules, GET /v1/engines), read once. */
export async function loadCatalog() {
  if (!catalog) {
    const [rules, engines] = await Promise.all([api("GET", "/v1/rules"), api("GET", "/v1/engines")]);
    catalog = { rules: rules.data, engines: engines.data };
  }
  return catalog;
}

/** Create a game, remember its tokens in this browser and go to its table. */
export async function createGame(body, extra = {}) {
  const r = await api("POST", "/v1/games", { body });
  const created = r.data;
  const tokens = {};
  for (const s of created.seats) if (s.token) tokens[s.seat] = s.token;
  saveGame(created.game.id, { tokens, admin: created.admin_token, setup: body, join: created.join || [], ...extra });
  location.hash = `#/game/${created.game.id}`;
  return created.game.id;
}
