"""The ``random`` engine: a uniformly random legal move.  The baseline every other engine must beat, and
the fallback when a stronger engine is unavailable."""

from __future__ import annotations

import random
import time
from typing import Any

from ai.protocol import Decision, Engine
from engine.game import Seat, State


class RandomEngine(Engine):
    id = "random"
    description = "Plays a uniformly random legal move."
    params = ()

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        t0 = time.perf_counter()
        moves = state.legal_moves()
        move = rng.choice(moves)
        return Decision(move, {"iterations": 0, "elapsed_ms": (time.perf_counter() - t0) * 1000.0,
                               "candidates": [], "legal_moves": len(moves)}, tuple(moves))
