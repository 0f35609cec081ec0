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
