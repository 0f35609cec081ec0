"""``tilehouse bench inference``: fit the opponent model of ``ai.inference`` on arena games.

The model says another seat plays like the greedy heuristic, except with probability ``eps`` a uniformly
random legal move: ``P(move) = (1 - eps) [move plays like greedy's] + eps / legal moves``.  This bench plays
``--sets`` deals (seeds from ``--seed``) with the ``--engine`` line-up repeated over the seats, exactly as the
arena does (``ai.decide``, decisions seeded from the set and the move number), and at every decision with a
real choice records whether the move played agrees with greedy's on the true position and how many legal
moves there were.  It prints, per engine, the share of agreeing moves and the maximum-likelihood ``eps``
(a grid of 0.01 steps), and for all engines pooled.

``--placement N``: instead, N positions of deals in which every seat plays the (first) ``--engine``
(seeds 0, 1, ..., stopped 9 + seed % 8 moves in, kept where another seat than the one to move has
discarded face down), and at each the share of the other seats' hidden hand tiles that a world puts in
the right hand: uniform worlds of the information set, the same arranged (``ai.inference.ARRANGE``), and
the Metropolis chain's pool (``ai.inference.chain``) for each ``--chain STEPS:EPS``, with the chain's cost
per step; means with a 95% interval over the positions, and the paired differences to the arranged worlds.
The true hands are read here only to score the worlds, never by the sampler.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any, cast

import ai
import engine
from ai import inference
from ai.arena import Spec, decision_seed, lineups


def records(rules_id: str, specs: Sequence[Spec], sets: int, seed: int) -> dict[str, list[tuple[bool, int]]]:
    """engine label -> ``(agrees with greedy, legal moves)`` of each of its decisions with a real choice."""
    agrees = inference.REPLAYS[rules_id][1]
    players = engine.RULES[rules_id].default_players
    out: dict[str, list[tuple[bool, int]]] = {s.label: [] for s in specs}
    for i in range(sets):
        for lineup in lineups(specs, players):
            state = engine.new_game(rules_id, players=players, seed=seed + i)
            deal = state.deals_done
            ply = 0
            while not state.finished and state.deals_done == deal:
                mover = state.to_move
                assert mover is not None
                spec = lineup[mover]
                d = ai.decide(spec.engine, state, mover, dict(spec.params), decision_seed(seed + i, ply))
                n = len(state.legal_moves())
                if n > 1:
                    out[spec.label].append((agrees(state, mover, d.move), n))
                state.apply(d.move)
                ply += 1
    return out


def fit(rows: Sequence[tuple[bool, int]]) -> float:
    """The ``eps`` of the grid 0.01..1.00 that maximises the log-likelihood of ``rows``."""
    def ll(eps: float) -> float:
        return sum(math.log((1.0 - eps) * a + eps / n) for a, n in rows)

    return max((k / 100 for k in range(1, 101)), key=ll)


def _right(world: Any, truth: Any, seat: int) -> float:
    """The share of the other seats' hand tiles of ``world`` that ``truth`` has in the same hand."""
    ok = total = 0
    for p, hand in enumerate(world.hands):
        if p != seat:
            left = list(truth.hands[p])
            for f in hand:
                total += 1
                if f in left:
                    ok += 1
                    left.remove(f)
    return ok / max(1, total)


def placement(rules_id: str, spec: Spec, count: int, chains: Sequence[tuple[int, float]]) -> dict[str, list[float]]:
    """Per position (see ``--placement``): name -> the mean share right of that kind of world."""
    players = engine.RULES[rules_id].default_players
    arrange = inference.ARRANGE[rules_id]
    rows: dict[str, list[float]] = {"uniform": [], "arranged": []}
    seed = found = 0
    while found < count:
        state = engine.new_game(rules_id, players=players, seed=seed)
        for ply in range(9 + seed % 8):
            mover = state.to_move
            assert mover is not None
            state.apply(ai.decide(spec.engine, state, mover, dict(spec.params), seed=ply).move)
        seed += 1
        seat = state.to_move
        assert seat is not None
        if not any(not up and p != seat for _l, _w, ps in cast(Any, state).tricks for p, up, _f in ps):
            continue
        i, found = found, found + 1
        uniform = [state.determinize(seat, random.Random(100 + k)) for k in range(100)]
        rows["uniform"].append(statistics.mean(_right(w, state, seat) for w in uniform))
        rows["arranged"].append(statistics.mean(_right(arrange(w, seat), state, seat) for w in uniform))
        for steps, eps in chains:
            t0 = time.perf_counter()
            made = inference.chain(state, seat, steps, eps, random.Random(i))
            ms = (time.perf_counter() - t0) * 1000.0
            assert made is not None
            key = f"chain {steps} eps {eps}"
            rows.setdefault(key, []).append(statistics.mean(_right(w, state, seat) for w in made[0]))
            rows.setdefault(key + " - arranged", []).append(rows[key][-1] - rows["arranged"][-1])
            rows.setdefault(key + " ms/step", []).append(ms / steps)
    rows["arranged - uniform"] = [a - u for a, u in zip(rows["arranged"], rows["uniform"], strict=True)]
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench inference", description=__doc__.split("\n\n")[0])
    p.add_argument("rules", choices=sorted(inference.REPLAYS))
    p.add_argument("--engine", action="append", required=True, metavar="ID[:NAME=VALUE,...]")
    p.add_argument("--sets", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument("--placement", type=int, default=0, metavar="N",
                   help="N positions: how many hidden tiles uniform, arranged and chain worlds place right")
    p.add_argument("--chain", action="append", default=[], metavar="STEPS:EPS",
                   help="with --placement: a Metropolis chain to measure; repeat (default 400:0.1)")
    a = p.parse_args(argv)
    specs = tuple(Spec.parse(t) for t in a.engine)
    if a.placement:
        chains = [(int(c.split(":")[0]), float(c.split(":")[1])) for c in a.chain or ["400:0.1"]]
        for key, values in placement(a.rules, specs[0], a.placement, chains).items():
            m = statistics.mean(values)
            h = 1.96 * statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
            print(json.dumps({"world": key, "mean": round(m, 4), "lo": round(m - h, 4), "hi": round(m + h, 4),
                              "positions": len(values)}) if a.json else
                  f"{key:32s} {m:8.4f} [{m - h:.4f}, {m + h:.4f}]  {len(values)} positions")
        return 0
    by_engine = records(a.rules, specs, a.sets, a.seed)
    report: list[dict[str, Any]] = []
    pooled = [r for engine_rows in by_engine.values() for r in engine_rows]
    for label, rows in [*by_engine.items(), ("(all)", pooled)]:
        if rows:
            report.append({"engine": label, "decisions": len(rows),
                           "agree": round(sum(a for a, _n in rows) / len(rows), 4), "eps": fit(rows)})
    for row in report:
        print(json.dumps(row) if a.json else
              f"{row['engine']:50s} {row['decisions']:6d} decisions  agree {100 * row['agree']:5.1f}%  "
              f"fitted eps {row['eps']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
