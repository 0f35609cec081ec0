// How the client learns that a game changed: the server's push stream where it has one
// (POST /v1/games/{id}/stream-tickets, then EventSource on /v1/games/{id}/stream?ticket=...), else polling
// GET /v1/games/{id} with If-None-Match, which answers 304 while nothing changed.

import { api, serverFeatures } from "./api.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// every event type of the four rule sets (docs/rules/*.md) and of the table's life (clocks, seats, resign)
const EVENT_TYPES = [
  "deal", "lead", "beat", "discard", "trick_won", "payment", "deal_end", "match_end",   // tiengow
  "place", "round", "game_end",                                                       // tiengow_wall
  "play", "doubles", "draw", "pass", "round_end",                                     // kozel
  "capture", "take", "flip", "triple", "fourth", "no_hand_play", "six_six_pairs",     // tiuu
  "timeout", "resign", "join", "abandon", "forfeit",                                  // live tables
];

export class Watcher {
  /**
   * @param {string} gameId
   * @param {() => string|null} token  the token to read the view with (it may change: hot seat)
   * @param {(view: object) => Promise<void>} onView  awaited: no new view is delivered meanwhile
   * @param {(err: Error) => void} onError
   */
  constructor(gameId, token, onView, onError) {
    this.gameId = gameId;
    this.token = token;
    this.onView = onView;
    this.onError = onError;
    this.etag = null;
    this.usedToken = null;
    this.view = null;
    this.stopped = false;
    this.wake = null;
    this.dirty = false;
    this.stream = null;
    this.streamToken = null;
    this.buffer = new Map(); // n -> event, as the stream delivered it (projected for streamToken's seat)
  }

  /** Keep an event the stream delivered, so the page need not ask for it again. */
  remember(message) {
    try {
      const ev = JSON.parse(message.data);
      if (ev && Number.isInteger(ev.n)) this.buffer.set(ev.n, ev);
    } catch {
      return;
    }
    while (this.buffer.size > 400) this.buffer.delete(this.buffer.keys().next().value);
  }

  /** The events after..upto as the stream delivered them for `token`'s seat, or null when one is missing
   * (or the stream shows another seat's view: hot seat). */
  take(after, upto, token) {
    if (!this.stream || token !== this.streamToken || upto <= after) return null;
    const out = [];
    for (let n = after + 1; n <= upto; n++) {
      if (!this.buffer.has(n)) return null;
      out.push(this.buffer.get(n));
    }
    return out;
  }

  start() {
    this.openStream();
    this.loop();
  }

  stop() {
    this.stopped = true;
    if (this.stream) this.stream.close();
    this.poke();
  }

  /** Look now (after our own move, or when the stream says something happened). A poke that comes while
   * a view is being shown is kept, not lost: the loop looks again as soon as that view is done, and reads
   * only the newest view however many pokes came meanwhile. */
  poke() {
    this.dirty = true;
    if (this.wake) this.wake();
    if (this.onPoke) this.onPoke();
  }

  /** Whether something happened that the page has not read yet (it may then hurry its animations). */
  get behind() {
    return this.dirty;
  }

  delay() {
    const v = this.view;
    if (!v) return 500;
    if (this.stream) return 5000;  // the stream pokes; this is only a safety net
    if (v.ai && v.ai.pending) return 300;
    if (v.to_move !== null && v.to_move === v.you) return 3000;
    return 900;
  }

  async openStream() {
    if (typeof EventSource === "undefined" || !(await serverFeatures()).stream) return;
    try {
      const token = this.token();
      const r = await api("POST", `/v1/games/${this.gameId}/stream-tickets`, { body: {}, token });
      const ticket = r.data && r.data.ticket;
      if (!ticket || this.stopped) return;
      const es = new EventSource(`/v1/games/${this.gameId}/stream?ticket=${encodeURIComponent(ticket)}`);
      es.onmessage = (m) => { this.remember(m); this.poke(); };
      // the stream names each message by the event's type: any of them means "look again"
      for (const name of EVENT_TYPES) es.addEventListener(name, (m) => { this.remember(m); this.poke(); });
      es.addEventListener("error", () => {
        // the game ended (the server closes the stream) or the connection dropped: poll, and open a new
        // stream with a fresh ticket (a ticket is short-lived) while the game goes on
        es.close();
        if (this.stream === es) this.stream = null;
        this.poke();
        this.reopened = (this.reopened || 0) + 1;
        if (this.reopened <= 20 && !this.stopped && !(this.view && this.view.status === "finished")) {
          setTimeout(() => this.openStream(), 2000);
        }
      });
      this.stream = es;
      this.streamToken = token;
    } catch {
      // no stream on this server: polling it is
    }
  }

  async loop() {
    while (!this.stopped) {
      const token = this.token();
      if (token !== this.usedToken) {
        this.etag = null;
        this.usedToken = token;
      }
      this.dirty = false;
      try {
        const r = await api("GET", `/v1/games/${this.gameId}`, { token, etag: this.etag });
        if (r.status === 200) {
          this.etag = r.etag;
          this.view = r.data;
          await this.onView(r.data);
        }
      } catch (err) {
        this.onError(err);
        await sleep(2000);
      }
      if (this.stopped || (this.view && this.view.status === "finished")) break;
      if (this.dirty) continue;  // poked while the view was shown: look again at once
      await new Promise((resolve) => {
        const t = setTimeout(resolve, this.delay());
        this.wake = () => { clearTimeout(t); this.wake = null; resolve(); };
      });
    }
  }
}
