// node dist/play.js BASE_URL: plays a whole Tien Gow deal as seat 0 (random legal moves; the server's AI
// plays the other seats) and prints what it read: the table, the events by type, a 422's fields, the replay.
import { ApiError, Tilehouse, describe, fieldsOf } from "./client.js";
import type { GameView, ValidationProblem } from "./client.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(base: string): Promise<void> {
  const anyone = new Tilehouse(base);
  const rules = await anyone.rules();
  console.log(`rules: ${rules.map((r) => r.id).join(",")}`);

  // a 422 names each bad field
  try {
    await anyone.createGame({ rules: "tiengow", seats: [{ kind: "human" }] });
    throw new Error("a Tien Gow game with one seat was accepted");
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 422) throw e;
    console.log(`422: ${fieldsOf(e.problem as ValidationProblem).join(",")}`);
  }

  const created = await anyone.createGame({
    rules: "tiengow",
    options: { deals: 1 },
    seats: [{ kind: "human", name: "ts" }, { kind: "ai", engine: "greedy" }, { kind: "ai", engine: "random" },
      { kind: "ai", engine: "greedy" }],
  });
  const id = created.game.id;
  const seat = created.seats[0];
  if (seat === undefined) throw new Error("no token for the human seat");
  const me = anyone.as(seat.token);
  console.log(`table: ${Object.keys(created.game.table).sort().join(",")}`);

  let view: GameView = await me.game(id);
  for (let step = 0; view.status !== "finished"; step++) {
    if (step > 5000) throw new Error("the deal did not end");
    const move = view.legal_moves[Math.floor(Math.random() * view.legal_moves.length)];
    if (move !== undefined) {
      view = await me.play(id, { move: move.id, version: view.version });
    } else {
      await sleep(50);
      view = await me.game(id);
    }
  }
  console.log(`status: ${view.status}`);
  console.log(`version: ${view.version}`);
  console.log(`hand: ${(view.hand ?? []).length}`);

  const events = await me.events(id);
  console.log(`events: ${events.length}`);
  console.log(`types: ${[...new Set(events.map((e) => e.type))].join(",")}`);
  for (const ev of events.slice(0, 5)) console.log(`  ${describe(ev)}`);

  const replay = await anyone.replay(id);
  console.log(`seed: ${replay.seed}`);
  console.log(`replay moves: ${replay.moves.length}`);
  console.log(`payoffs: ${replay.result.payoffs.join(" ")}`);
}

const base = process.argv[2];
if (base === undefined) {
  console.error("usage: node dist/play.js BASE_URL");
  process.exit(2);
}
main(base).catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
