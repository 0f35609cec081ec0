// The client's only way to the server: the public /v1 API, as any third-party frontend would use it.
// The games this browser created or joined are remembered in localStorage (id, seat tokens, admin token,
// setup): "My games" lists them, and a closed tab loses nothing.

export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
}

/** Call the API. Answers {status, data, etag}; a 4xx/5xx throws ApiError with the problem document. */
export async function api(method, path, { body, token, etag } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  if (etag) headers["If-None-Match"] = etag;
  const resp = await fetch(path, {
    method, headers, cache: "no-store",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = resp.status === 304 || resp.status === 204 ? "" : await resp.text();
  const data = text ? JSON.parse(text) : null;
  if (resp.status >= 400) throw new ApiError(resp.status, data);
  return { status: resp.status, data, etag: resp.headers.get("ETag") };
}

const PREFIX = "tilehouse.game.";

/** What this browser holds for a game: {tokens: {seat: token}, admin, setup, rules, created (ms)}. */
export function loadGame(id) {
  try {
    return JSON.parse(localStorage.getItem(PREFIX + id)) || null;
  } catch {
    return null;
  }
}

export function saveGame(id, record) {
  const old = loadGame(id) || {};
  const rules = record.rules || (record.setup && record.setup.rules) || old.rules || null;
  localStorage.setItem(PREFIX + id, JSON.stringify({ ...record, rules, created: record.created || old.created || Date.now() }));
}

/** Forget a game in this browser (its tokens go with it). */
export function forgetGame(id) {
  localStorage.removeItem(PREFIX + id);
}

/** Every game this browser remembers, newest first: [{id, ...record}]. */
export function listGames() {
  const out = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key && key.startsWith(PREFIX)) {
      const rec = loadGame(key.slice(PREFIX.length));
      if (rec) out.push({ id: key.slice(PREFIX.length), ...rec });
    }
  }
  return out.sort((a, b) => (b.created || 0) - (a.created || 0));
}

/** The token to read a game with: a seat of ours (the first), else the admin token (a spectator). */
export function readToken(rec) {
  if (!rec) return null;
  const seats = Object.keys(rec.tokens || {}).map(Number).sort((a, b) => a - b);
  return seats.length ? rec.tokens[seats[0]] : rec.admin || null;
}

let features = null;

/** What this server can do beyond the core API, read from its own contract (GET /openapi.yaml), so that
 * the client never probes an endpoint the server does not have: {stream, rematch, openSeats, clock, resign}. */
export async function serverFeatures() {
  if (!features) {
    features = fetch("/openapi.yaml", { cache: "no-store" })
      .then((r) => (r.ok ? r.text() : ""))
      .catch(() => "")
      .then((text) => ({
        stream: text.includes("/stream-tickets:"),
        rematch: text.includes("/rematch:"),
        openSeats: text.includes("/join:"),
        clock: text.includes("ClockSettings:"),
        resign: text.includes("/resign:"),
      }));
  }
  return features;
}
