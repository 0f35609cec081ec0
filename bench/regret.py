"""``tilehouse bench regret``: how much an engine's choices lose against a long search's values, per decision.

The duplicate arena judges engines by their games, and at Tiu U a game's outcome spreads by about 100 points
a set while engines differ by a few: 800 sets separate only about +7.  This bench asks a narrower question
with far less noise: at positions of real deals, how much worse (in the rule set's points, by the values of a
much longer search) is the move an engine picks than the best one?  Every engine is judged on the same
positions, so two engines' difference is paired by position.

* ``--make N``: deals (seeds from ``--seed``) are played with ``--play`` in every seat, as the arena plays
  them (``ai.decide``, decisions seeded from the set and the move number), until at least N decisions with
  more than one legal move are recorded (the deal in progress is finished, so every recorded deal is
  whole).  At each, the *reference*: ``ismcts`` with ``root=uniform`` (every root move the same share of the
  iterations, the best mean played) for ``--reference-iterations``, and each root move's mean payoff change
  for the deciding seat.  The positions and their values are written to ``--positions`` (JSON lines);
  without ``--make`` they are read from it, so candidates measured on different days meet the same positions.
* Each ``--engine`` then decides ``--repeats`` times at every position (seeds from the position and the
  repeat); its *regret* at a position is the reference's best value minus the value of its move, averaged
  over the repeats.  Reported: the mean regret a decision with its 95% interval over the positions, the
  regret a seat pays in a deal (times the decisions a seat takes in a deal), and for every engine after the
  first the paired difference to the first.

What it measures and what it does not: the values are the reference search's, so they carry its model
(the rule set's playouts, the determinizer): an engine that plays a different model (other playouts, an
opponent model) is judged by a model it does not share.  For candidates that only spend the same model's
budget better (allocation at the root, common worlds, speed) the regret is the quantity the arena measures
in games, with a fraction of its noise: in two-player Tiu U, ``greedy`` pays 1.6 points a decision more
than ``ismcts`` at 1,300 iterations, which is 18 points a deal for both seats, and the arena's margin of
``ismcts`` over ``greedy`` is +21 (docs/ai.md, "Decision regret").  The reference's own noise puts a floor
under every regret (a move it overrates by chance counts as best); it is the same for every engine.
Time budgets (``time_ms``) are wall-clock: run one bench per core, as the arena's processes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import ai
import engine
from ai.arena import Spec, confidence_interval, deal_decisions, decision_seed
from engine.game import State

#: the reference search's parameters besides its iterations
REFERENCE = {"root": "uniform", "time_ms": 600_000}
#: the engine that plays the deals by default: today's search at about the iterations 100 ms buy at Tiu U
DEFAULT_PLAY = "ismcts:iterations=1300,time_ms=600000"


def reference_seed(set_seed: int, ply: int) -> int:
    """The reference search's seed at a position: apart from the seed the deal's own move was chosen with."""
    return decision_seed(set_seed, ply) ^ 0x5EED


def reference_values(state: State, seat: int, iterations: int, seed: int) -> dict[str, float]:
    """Each legal move's mean payoff change for ``seat`` under the reference search.  ``root=uniform`` tries
    every root move once the iterations reach the moves; a rule set with a paired root (the wall game)
    values one move per class, and ``regrets`` refuses a move left without a value."""
    found = ai.decide("ismcts", state, seat, {**REFERENCE, "iterations": iterations}, seed=seed)
    return {c["move"]: c["mean_payoff"] for c in found.stats["candidates"] if c["mean_payoff"] is not None}


def make_positions(rules_id: str, players: int, play: Spec, count: int, seed: int,
                   iterations: int) -> Iterator[dict[str, Any]]:
    """Records of at least ``count`` decisions with a choice, from whole deals of ``play`` in every seat."""
    made = 0
    deal_seed = seed
    while made < count:
        for ply, (state, mover, _spec, _move) in enumerate(deal_decisions(rules_id, [play] * players, deal_seed)):
            if len(state.legal_moves()) > 1:
                values = reference_values(state, mover, iterations, reference_seed(deal_seed, ply))
                yield {"set": deal_seed, "ply": ply, "seat": mover, "state": state.to_dict(), "values": values}
                made += 1
        deal_seed += 1


def regrets(records: Sequence[dict[str, Any]], spec: Spec, repeats: int) -> list[float]:
    """Per position, ``spec``'s mean regret over ``repeats`` decisions."""
    out = []
    for r in records:
        state = engine.load_state(r["state"])
        values = r["values"]
        best = max(values.values())
        lost = 0.0
        for k in range(repeats):
            move = ai.decide(spec.engine, state, r["seat"], dict(spec.params),
                             seed=decision_seed(r["set"], r["ply"]) * 31 + k).move
            if move.id not in values:
                # the reference values every legal move (root=uniform, iterations beyond the moves) but in a
                # rule set whose root is paired (the wall game: one move per class), which this bench cannot judge
                raise ValueError(f"the reference did not value {move.id} at set {r['set']} ply {r['ply']}")
            lost += best - values[move.id]
        out.append(lost / repeats)
    return out


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean and its 95% interval (the arena's, ``ai.arena.confidence_interval``; one value: no width)."""
    return confidence_interval(values) or (values[0], values[0], values[0])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench regret", description=__doc__.split("\n\n")[0])
    p.add_argument("rules", choices=sorted(engine.RULES))
    p.add_argument("--positions", required=True, metavar="FILE", help="the positions and their reference values "
                   "(JSON lines): written with --make, read without")
    p.add_argument("--make", type=int, default=0, metavar="N", help="record at least N decisions first")
    p.add_argument("--play", default=DEFAULT_PLAY, metavar="ID[:NAME=VALUE,...]", help="with --make: the engine "
                   f"in every seat (default {DEFAULT_PLAY})")
    p.add_argument("--players", type=int, default=0, help="with --make: seats (default: the rule set's)")
    p.add_argument("--seed", type=int, default=1, help="with --make: the first deal's seed")
    p.add_argument("--reference-iterations", type=int, default=20_000, metavar="K")
    p.add_argument("--engine", action="append", default=[], metavar="ID[:NAME=VALUE,...]",
                   help="an engine to judge (repeat; the first is the one the others are compared with)")
    p.add_argument("--repeats", type=int, default=2, help="decisions per position and engine")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    from bench import variants

    variants.register()  # the screening variants may be judged too
    specs = [Spec.parse(t) for t in a.engine]
    if a.make:
        with open(a.positions, "w", encoding="utf-8") as f:
            players = a.players or engine.get_rules(a.rules).default_players
            for rec in make_positions(a.rules, players, Spec.parse(a.play), a.make, a.seed, a.reference_iterations):
                f.write(json.dumps(rec) + "\n")
    with open(a.positions, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    if not records:
        print(f"no positions in {a.positions}", file=sys.stderr)
        return 1
    deals = len({r["set"] for r in records})
    players = engine.load_state(records[0]["state"]).players
    per_seat_deal = len(records) / (deals * players)
    first: list[float] | None = None
    for spec in specs:
        lost = regrets(records, spec, a.repeats)
        m, lo, hi = interval(lost)
        row: dict[str, Any] = {"engine": spec.label, "positions": len(records), "regret": round(m, 4),
                               "ci95": [round(lo, 4), round(hi, 4)],
                               "per_seat_deal": round(m * per_seat_deal, 3)}
        if first is None:
            first = lost
        else:
            d, dlo, dhi = interval([x - y for x, y in zip(lost, first, strict=True)])
            row["minus_first"] = [round(d, 4), round(dlo, 4), round(dhi, 4)]
        if a.json:
            print(json.dumps(row))
        else:
            extra = (f"  minus the first {row['minus_first'][0]:+.3f} [{row['minus_first'][1]:+.3f}, "
                     f"{row['minus_first'][2]:+.3f}]") if "minus_first" in row else ""
            print(f"{spec.label:50s} regret {m:.3f} [{lo:.3f}, {hi:.3f}] a decision, "
                  f"{m * per_seat_deal:.2f} a seat a deal ({len(records)} positions, {deals} deals){extra}")
        sys.stdout.flush()
    return 0
