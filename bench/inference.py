"""``tilehouse bench inference``: fit the opponent model of ``ai.inference`` on arena games.

The model says another seat plays like the greedy heuristic, except with probability ``eps`` a uniformly
random legal move: ``P(move) = (1 - eps) [move plays like greedy's] + eps / legal moves``.  This bench plays
``--sets`` deals (seeds from ``--seed``) with the ``--engine`` line-up repeated over the seats, exactly as the
arena does (``ai.decide``, decisions seeded from the set and the move number), and at every decision with a
real choice records whether the move played agrees with greedy's on the true position and how many legal
moves there were.  It prints, per engine, the share of agreeing moves and the maximum-likelihood ``eps``
(a grid of 0.01 steps), and for all engines pooled.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench inference", description=__doc__.split("\n\n")[0])
    p.add_argument("rules", choices=sorted(inference.REPLAYS))
    p.add_argument("--engine", action="append", required=True, metavar="ID[:NAME=VALUE,...]")
    p.add_argument("--sets", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    specs = tuple(Spec.parse(t) for t in a.engine)
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
