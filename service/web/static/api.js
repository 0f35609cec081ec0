// The client's only way to the server: the public /v1 API, as any third-party frontend would use it.
// Tokens live in sessionStorage (one tab = one player; closing the tab forgets them).

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

/** What this tab holds for a game: {tokens: {seat: token}, admin, setup}. */
export function loadGame(id) {
  try {
    return JSON.parse(sessionStorage.getItem(PREFIX + id)) || null;
  } catch {
    return null;
  }
}

export function saveGame(id, record) {
  sessionStorage.setItem(PREFIX + id, JSON.stringify(record));
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
