// A small client of the tilehouse HTTP API, typed only by what openapi-typescript generates from
// openapi.yaml (src/api.d.ts, `npm run generate`): no type here is written by hand.
import type { components, paths } from "./api.js";

export type Schemas = components["schemas"];
export type GameView = Schemas["GameView"];
export type CreateGame = Schemas["CreateGame"];
export type CreatedGame = Schemas["CreatedGame"];
export type GameEvent = Schemas["Event"];
export type EventType = Schemas["EventType"];
export type Replay = Schemas["Replay"];
export type Problem = Schemas["Problem"];
export type ValidationProblem = Schemas["ValidationProblem"];
export type MoveRequest = Schemas["MoveRequest"];

type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { "application/json": infer B } } } } ? B : never;

/** An answer that is not the one asked for: its status and its problem document. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem) {
    super(`${status} ${problem.title}: ${problem.detail}`);
  }
}

export class Tilehouse {
  constructor(readonly base: string, readonly token?: string) {}

  /** The same server as another caller (a seat token, or none for a spectator). */
  as(token?: string): Tilehouse {
    return new Tilehouse(this.base, token);
  }

  private async call<T>(method: string, path: string, expect: number, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.token !== undefined) headers["Authorization"] = `Bearer ${this.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    const r = await fetch(this.base + path, init);
    if (r.status !== expect) {
      throw new ApiError(r.status, (await r.json()) as Problem);
    }
    return (await r.json()) as T;
  }

  rules(): Promise<Json<"/v1/rules", "get", 200>> {
    return this.call("GET", "/v1/rules", 200);
  }

  createGame(body: CreateGame): Promise<Json<"/v1/games", "post", 201>> {
    return this.call("POST", "/v1/games", 201, body);
  }

  game(id: string): Promise<Json<"/v1/games/{game_id}", "get", 200>> {
    return this.call("GET", `/v1/games/${encodeURIComponent(id)}`, 200);
  }

  play(id: string, move: MoveRequest): Promise<Json<"/v1/games/{game_id}/moves", "post", 200>> {
    return this.call("POST", `/v1/games/${encodeURIComponent(id)}/moves`, 200, move);
  }

  events(id: string, after = 0): Promise<Json<"/v1/games/{game_id}/events", "get", 200>> {
    return this.call("GET", `/v1/games/${encodeURIComponent(id)}/events?after=${after}`, 200);
  }

  replay(id: string): Promise<Json<"/v1/games/{game_id}/replay", "get", 200>> {
    return this.call("GET", `/v1/games/${encodeURIComponent(id)}/replay`, 200);
  }
}

/** One line about an event, reading its data as the type of its `type` says. */
export function describe(ev: GameEvent): string {
  switch (ev.type) {
    case "lead":
    case "beat":
      return `${ev.type} ${ev.data.tiles.join("+")}`;
    case "discard":
      return `discard ${ev.data.count} face down${ev.data.tiles ? ` (${ev.data.tiles.join("+")})` : ""}`;
    case "trick_won":
      return `trick ${ev.data.trick} to seat ${ev.seat}: ${ev.data.columns} column(s)`;
    case "payment":
      return `seat ${ev.data.from} pays ${ev.data.amount} to seat ${ev.data.to}`;
    case "deal_end":
      return `deal ${ev.data.deal} ends: net ${ev.data.net.join(" ")}`;
    case "play":
      return `play ${ev.data.tile} at ${ev.data.end}`;
    case "draw":
      return `draw (${"drawn" in ev.data ? ev.data.bazaar_size : ev.data.count} left/drawn)`;
    case "match_end":
      return "points" in ev.data ? `match over: ${ev.data.points.join(" ")}` : `match over: ${ev.data.scores.join(" ")}`;
    case "join":
      return `${ev.data.name} joins`;
    case "timeout":
      return `seat ${ev.seat} timed out: ${ev.data.action}`;
    default:
      return ev.type;
  }
}

/** The field paths a 422 names (`seats`, `options.deals`, ...), nested objects flattened with dots. */
export function fieldsOf(problem: ValidationProblem): string[] {
  const out: string[] = [];
  const walk = (prefix: string, node: unknown): void => {
    if (node !== null && typeof node === "object" && !Array.isArray(node)) {
      for (const [k, v] of Object.entries(node)) walk(prefix ? `${prefix}.${k}` : k, v);
    } else {
      out.push(prefix);
    }
  };
  walk("", problem.errors);
  return out;
}
