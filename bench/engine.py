"""``tilehouse bench engine``: seeded random playouts of one deal (Kozel: one round) per second, per rule
set, on one core -- the speed the AI's search stands on.

A playout is what ISMCTS does per iteration after selection: ``clone()`` the start state, then
``legal_moves()`` + ``apply()`` with a uniform random choice until the deal is over.  Two figures per rule
set: playouts of the one seeded deal, and playouts that each start from a fresh ``determinize`` of it for
the seat to move (determinize counted), which is what the search really does.
"""

from __future__ import annotations

import argparse
import json
import random
import time

import engine


def playout_deal(start: engine.State, rng: random.Random) -> int:
    """One random playout to the end of the current deal; returns the number of moves."""
    state = start.clone()
    deal = state.deals_done
    moves = 0
    choice = rng.choice
    while state.to_move is not None and state.deals_done == deal:
        state.apply(choice(state.legal_moves()))
        moves += 1
    return moves


def _run(start: engine.State, rng: random.Random, seconds: float, fresh: bool) -> tuple[int, int, float, float]:
    """``(playouts, moves, wall-clock seconds, CPU seconds of this process)``."""
    playouts = moves = 0
    seat = start.to_move
    assert seat is not None
    cpu = time.process_time()
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        # ``fresh``: each playout starts from a new determinization, as every ISMCTS iteration does, so
        # per-hand caches in the engines cannot serve one deal over and over
        moves += playout_deal(start.determinize(seat, rng) if fresh else start, rng)
        playouts += 1
        if playouts % 16 == 0 and time.perf_counter() >= deadline:
            break
    return playouts, moves, time.perf_counter() - t0, time.process_time() - cpu


def bench_rules(rules_id: str, players: int, seconds: float, seed: int = 1) -> dict[str, str | int | float | None]:
    start = engine.new_game(rules_id, players=players, seed=seed)
    playouts, moves, elapsed, cpu = _run(start, random.Random(seed), seconds, fresh=False)
    f_playouts, _, f_elapsed, f_cpu = _run(start, random.Random(seed), seconds, fresh=True)
    return {"rules": rules_id, "players": players, "playouts": playouts, "seconds": round(elapsed, 3),
            "playouts_per_s": round(playouts / elapsed, 1), "moves_per_s": round(moves / elapsed, 1),
            "moves_per_playout": round(moves / playouts, 2),
            "fresh_playouts_per_s": round(f_playouts / f_elapsed, 1),
            # per second of this process's CPU time: comparable on a shared machine
            "cpu_playouts_per_s": round(playouts / cpu, 1) if cpu > 0 else None,
            "cpu_fresh_playouts_per_s": round(f_playouts / f_cpu, 1) if f_cpu > 0 else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench engine", description=__doc__)
    p.add_argument("rules", nargs="*", help="rule set ids (default: all)")
    p.add_argument("--seconds", type=float, default=3.0, help="time per rule set and player count")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    a = p.parse_args(argv)
    for rid in a.rules or sorted(engine.RULES):
        rs = engine.get_rules(rid)
        for n in rs.players:
            r = bench_rules(rid, n, a.seconds)
            if a.json:
                print(json.dumps(r), flush=True)
            else:
                print(f"{rid:14s} {n}p  {r['playouts_per_s']:>9.1f} playouts/s  {r['moves_per_s']:>10.1f} moves/s"
                      f"  ({r['moves_per_playout']} moves per deal)   from a fresh determinization each:"
                      f" {r['fresh_playouts_per_s']:>9.1f} playouts/s  (per CPU second: {r['cpu_playouts_per_s']},"
                      f" fresh {r['cpu_fresh_playouts_per_s']})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
