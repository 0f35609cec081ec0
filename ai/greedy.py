"""The ``greedy`` engine: a one-ply heuristic per rule set, written from the rules.

The heuristics live in ``ai/heuristics/<rules_id>.py`` (the ``greedy`` field of the rule set's
``ai.heuristics.Heuristics`` record: ``greedy(state, seat, rng) -> Move``); this module only dispatches to
them.  A rule set without heuristics gets a uniformly random move instead, and the statistics say so
(``"policy": "random"`` and a ``"note"``), so a caller never mistakes it for the heuristic.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import fields
from typing import Any, ClassVar, cast

from ai.heuristics import Heuristics
from ai.heuristics import heuristics_for as registered
from ai.protocol import Decision, Engine, Param
from engine.game import Seat, State

#: the record's fields that hold a function
_FUNCTIONS = frozenset(f.name for f in fields(Heuristics) if f.name != "rollout_draws")


def heuristics_for(rules_id: str) -> Heuristics | None:
    """The rule set's heuristics record (``ai.heuristics.heuristics_for``), or ``None`` when it has none.
    Both engines look it up here, at every decision."""
    return registered(rules_id)


def heuristic(rules_id: str, function: str) -> Callable[..., Any] | None:
    """The function in field ``function`` of the rule set's heuristics record (``"greedy"``, ``"playout"``,
    ``"rollout"``, ...), or ``None`` when the rule set has no heuristics or no such function: for callers
    that go over the fields by name; the engines read the record itself."""
    if function not in _FUNCTIONS:
        raise ValueError(f"the heuristics record has no function field {function!r}")
    found = heuristics_for(rules_id)
    return None if found is None else cast("Callable[..., Any] | None", getattr(found, function))


class GreedyEngine(Engine):
    id = "greedy"
    description = ("One-ply heuristic written from each rule set's rules (cheapest winning group, shed heavy "
                   "tiles, take the most valuable fish ...); uniformly random for a rule set without one.")
    params: ClassVar[tuple[Param, ...]] = ()

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        t0 = time.perf_counter()
        rules_id = state.rules.id
        found = heuristics_for(rules_id)
        stats: dict[str, Any] = {"iterations": 0, "candidates": []}
        if found is None:
            move = rng.choice(state.legal_moves())
            stats["policy"] = "random"
            stats["note"] = f"no greedy heuristic for rule set {rules_id!r}; played a uniformly random move"
        else:
            move = found.greedy(state, seat, rng)
            stats["policy"] = "heuristic"
        stats["elapsed_ms"] = (time.perf_counter() - t0) * 1000.0
        return Decision(move, stats)
