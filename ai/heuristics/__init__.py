"""Per-rule-set heuristics (the greedy engine's one-ply choice and cheap playout policies).

Each module ``ai/heuristics/<rules_id>.py`` defines ``greedy(state, seat, rng) -> Move`` and
``playout(state, rng) -> Move``, and may define ``rollout(state, rng)`` (``playout`` played to the end of
the deal in one call, with the same moves and draws: the search's fast path, issue 14) and
``hidden(state, moves, rng)`` (which of several moves that look the same to the searching seat another
seat plays) with, optionally, ``observe(state)`` (for a node where another seat is to move: the distinct
observation keys of its legal moves in legal order and the move played for each, as the search's general
path computes them with ``hidden``: the search's fast path for those nodes, issue 14).  A module whose
``rollout`` never draws from its generator says so with ``ROLLOUT_DRAWS = False`` (the paired root then
seeds no generator per playout).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine.game import Move, State


def play_to_deal_end(state: State, playout: Callable[[State, random.Random], Move], rng: random.Random) -> None:
    """Play ``playout`` move after move until the current deal (round, game) ends: what a rule set's
    ``rollout`` fast path must be equal to, and what it does itself on a world that does not halt at the
    end of the deal (``State.halt_at_deal_end``)."""
    deal = state.deals_done
    while state.to_move is not None and state.deals_done == deal:
        state.apply(playout(state, rng))
