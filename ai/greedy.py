"""The ``greedy`` engine: a one-ply heuristic per rule set, written from the rules.

The heuristics live in ``ai/heuristics/<rules_id>.py`` (``greedy(state, seat, rng) -> Move``); this module
only dispatches to them.  A rule set without heuristics gets a uniformly random move instead, and the
statistics say so (``"policy": "random"`` and a ``"note"``), so a caller never mistakes it for the heuristic.
"""

from __future__ import annotations

import importlib
import random
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ai.protocol import Decision, Engine
from engine.game import Move, Seat, State


def heuristics_for(rules_id: str) -> ModuleType | None:
    """``ai.heuristics.<rules_id>``, or ``None`` when that rule set has none.  A heuristics module that
    exists but fails to import is a bug and raises."""
    name = f"ai.heuristics.{rules_id}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            return None
        raise


def heuristic(rules_id: str, function: str) -> Callable[..., Move] | None:
    module = heuristics_for(rules_id)
    found = getattr(module, function, None) if module is not None else None
    return found if callable(found) else None


class GreedyEngine(Engine):
    id = "greedy"
    description = ("One-ply heuristic written from each rule set's rules (cheapest winning group, shed heavy "
                   "tiles, take the most valuable fish ...); uniformly random for a rule set without one.")
    params = ()

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        t0 = time.perf_counter()
        rules_id = state.rules.id
        policy = heuristic(rules_id, "greedy")
        stats: dict[str, Any] = {"iterations": 0, "candidates": []}
        if policy is None:
            move = rng.choice(state.legal_moves())
            stats["policy"] = "random"
            stats["note"] = f"no greedy heuristic for rule set {rules_id!r}; played a uniformly random move"
        else:
            move = policy(state, seat, rng)
            stats["policy"] = "heuristic"
        stats["elapsed_ms"] = (time.perf_counter() - t0) * 1000.0
        return Decision(move, stats)
