"""``tilehouse bench ai``: ISMCTS iterations per second at the opening decision of each rule set, on one
core, with each playout policy (random, the cheap heuristic, greedy).

The opening decision is the first decision of a fresh match (seed 1, the rule set's default player
count) where the seat to move has a real choice: forced moves are played first, since ``ismcts`` does
not search when there is one legal move.  Each measurement is one time-limited search through
``ai.decide`` (so it includes the determinization ``decide`` makes), reporting the iterations it managed.
The target (issue 6) is 3,000 iterations per second at the Tien Gow opening with random playouts.
"""

from __future__ import annotations

import argparse
import json

import ai
import engine

POLICIES = ("random", "heuristic", "greedy")


def opening(rules_id: str, players: int, seed: int = 1) -> engine.State:
    state = engine.new_game(rules_id, players=players, seed=seed)
    while not state.finished and len(state.legal_moves()) == 1:
        state.apply(state.legal_moves()[0])
    return state


def bench(rules_id: str, players: int, playout: str, seconds: float, seed: int = 1) -> dict[str, object]:
    state = opening(rules_id, players, seed)
    seat = state.to_move
    assert seat is not None, f"{rules_id}: the match ended on forced moves"
    d = ai.decide("ismcts", state, seat,
                  {"iterations": 1_000_000, "time_ms": max(1, int(seconds * 1000)), "playout": playout}, seed=seed)
    it = d.stats["iterations"]
    ms = d.stats["elapsed_ms"]
    return {"rules": rules_id, "players": players, "playout": playout, "playout_used": d.stats.get("playout"),
            "legal_moves": len(state.legal_moves()), "iterations": it, "seconds": round(ms / 1000.0, 3),
            "iterations_per_s": round(it / (ms / 1000.0), 1) if ms else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench ai", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rules", nargs="*", help="rule set ids (default: all)")
    p.add_argument("--seconds", type=float, default=3.0, help="search time per rule set and playout policy")
    p.add_argument("--playout", choices=POLICIES, action="append",
                   help="playout policies to measure (default: all)")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    a = p.parse_args(argv)
    for rid in a.rules or sorted(engine.RULES):
        rs = engine.get_rules(rid)
        for playout in a.playout or POLICIES:
            r = bench(rid, rs.default_players, playout, a.seconds)
            if a.json:
                print(json.dumps(r), flush=True)
            else:
                note = "" if r["playout_used"] == playout else f" (no heuristics: {r['playout_used']})"
                print(f"{rid:14s} {r['players']}p  {playout:9s} {r['iterations_per_s']:>9} iterations/s"
                      f"  ({r['iterations']} in {r['seconds']} s, {r['legal_moves']} legal moves){note}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
