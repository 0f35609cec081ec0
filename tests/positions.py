"""Positions the engine and AI tests sample: a match some uniformly random moves in."""

from __future__ import annotations

import random
from typing import Any

import engine
from engine.game import State


def walked(rules_id: str, players: int, seed: int, max_moves: int, options: dict[str, Any] | None = None) -> State:
    """Match ``seed`` of ``rules_id`` after ``randrange(max_moves)`` uniformly random moves drawn from
    ``Random(seed)`` (fewer where the match ends first)."""
    state = engine.new_game(rules_id, players=players, seed=seed, options=options or {})
    walk = random.Random(seed)
    for _ in range(walk.randrange(max_moves)):
        if state.finished:
            break
        moves = state.legal_moves()
        state.apply(moves[walk.randrange(len(moves))])
    return state


def without_time(stats: dict[str, Any]) -> dict[str, Any]:
    """A decision's statistics without its wall-clock figures (``elapsed_ms``, and the inference's own under
    ``inference``): everything else must be reproducible for the same seed and iteration budget."""
    out = {k: v for k, v in stats.items() if k != "elapsed_ms"}
    if isinstance(out.get("inference"), dict):
        out["inference"] = {k: v for k, v in out["inference"].items() if k != "elapsed_ms"}
    return out
