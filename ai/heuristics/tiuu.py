"""Tiu U heuristics: the greedy engine's one-ply choice and a cheap playout policy for ISMCTS.

Rules: ``docs/rules/tiuu.md`` (engine ``engine/tiuu.py``).  Both policies read only what the seat to move
may see: its own hand (through its legal moves), the pool, the stock size and the public stacks.

* A capture (from hand or of a flipped tile) is worth the fish it takes: big fish 2 per pip, small fish
  their red pips (``engine.tiuu.FISH``).
* Tripling and the seed's fourth-tile move give up a capture for two more hand tiles.  A hand tile is only
  worth something if the player still has a turn to use it, so the estimate is the average value of a
  catch pair (about 18.5 points: 592 points over 32 pairs) for each extra tile that fits into the
  player's remaining turns, discounted because not every hand tile finds a mate.
* The classic fourth tile captures the face-up three: four fish at once.
"""

from __future__ import annotations

import random
from typing import cast

from ai.heuristics import Heuristics, Policy, Rollout, register
from engine.game import Move, State, below
from engine.tiuu import (
    CAPTURE,
    FISH,
    FLIP,
    FOURTH,
    TAKE,
    TRIPLE,
    TiuUState,
    rollout_of,
)

#: average points of a captured pair: every fish of the double set (592 points) over 32 pairs
AVERAGE_PAIR = 592 / 32
#: share of an extra hand tile that turns into a catch (not every tile finds a mate before the end)
HAND_TILE_YIELD = 0.6
#: stock tiles one turn uses up on average (the flip, and a chain now and then)
STOCK_PER_TURN = 1.4
#: the playout policy plays a uniformly random move this often, so that playouts stay varied
PLAYOUT_EXPLORE = 0.2
#: the playout policy's flat value of tripling / the seed's fourth tile while the stock holds more than
#: PLAYOUT_GROWTH_STOCK tiles (about two turns each for three players): worth a middling capture
PLAYOUT_GROWTH = 12
PLAYOUT_GROWTH_STOCK = 12


def _as_tiuu(state: State) -> TiuUState:
    if not isinstance(state, TiuUState):
        raise TypeError(f"the Tiu U heuristics need a tiuu state, not {type(state).__name__}")
    return state


def hand_growth_value(state: TiuUState, seat: int) -> float:
    """What two more hand tiles are worth to ``seat`` now: only tiles it can still play count."""
    turns_left = state.nstock / (STOCK_PER_TURN * state.players)
    # after the move the hand has grown by 2; tiles beyond the remaining turns are dead weight
    spare_turns = turns_left - (state.hsize[seat] - 1)
    usable = min(2.0, max(0.0, spare_turns))
    return usable * HAND_TILE_YIELD * AVERAGE_PAIR


def move_value(state: TiuUState, seat: int, move: Move) -> float:
    """Points the move is expected to bring ``seat`` (one ply, no look-ahead)."""
    kind, a, b = move.code
    if kind in (CAPTURE, TAKE):
        return float(FISH[a] + FISH[b])
    if kind == TRIPLE:
        return hand_growth_value(state, seat)
    if kind == FOURTH:
        if state.classic:
            return 4.0 * FISH[a]
        return hand_growth_value(state, seat)
    return 0.0  # FLIP: nothing from hand


def greedy(state: State, seat: int, rng: random.Random) -> Move:
    """The move with the highest one-ply value: the most valuable fish, tripling when it pays more than
    the best capture; ties are broken at random."""
    st = _as_tiuu(state)
    moves = st.legal_moves()
    if not moves:
        raise ValueError("no legal move: the game is over")
    best: list[Move] = []
    best_value = float("-inf")
    for m in moves:
        v = move_value(st, seat, m)
        if v > best_value:
            best, best_value = [m], v
        elif v == best_value:
            best.append(m)
    return best[0] if len(best) == 1 else rng.choice(best)


def playout_with(*, explore: float, growth: int, growth_stock: int) -> tuple[Policy, Rollout]:
    """The playout policy with these weights, and its fast path (``engine.tiuu.rollout_of``, which plays the
    same moves with the same draws): a uniform move with chance ``explore``, else the biggest immediate
    catch, tripling and the seed's fourth tile worth ``growth`` while the stock holds more than
    ``growth_stock`` tiles, else 1.  The shipped playout is ``playout_with`` at ``PLAYOUT_EXPLORE``,
    ``PLAYOUT_GROWTH`` and ``PLAYOUT_GROWTH_STOCK``; ``tilehouse bench variants`` screens others."""

    def policy(state: State, rng: random.Random) -> Move:
        # cast, not isinstance: the search calls this for every playout step
        st = cast(TiuUState, state)
        moves = st.legal_moves()
        if len(moves) == 1:
            return moves[0]
        if rng.random() < explore:
            return moves[below(rng, len(moves))]
        grow = growth if st.nstock > growth_stock else 1
        best = moves[0]
        best_value = -1
        for m in moves:
            kind, a, b = m.code
            if kind in (CAPTURE, TAKE):
                v = FISH[a] + FISH[b]
            elif kind == FLIP:
                v = 0
            elif kind == FOURTH and st.classic:
                v = 4 * FISH[a]
            else:
                v = grow
            if v > best_value:
                best, best_value = m, v
        return best

    return policy, rollout_of(policy, explore=explore, growth=growth, growth_stock=growth_stock)


#: ``playout(state, rng)``: a cheap policy for ISMCTS playouts: mostly the biggest immediate catch, sometimes
#: a random move; tripling and the fourth tile (seed) only while enough stock is left to use the extra tiles.
#: ``rollout(state, rng)``: ``playout`` to the end of the game in one call, with the same moves and draws
#: (``engine.tiuu.rollout_of``; ``tests/test_rollouts.py`` compares the two from thousands of sampled
#: positions)
playout, rollout = playout_with(explore=PLAYOUT_EXPLORE, growth=PLAYOUT_GROWTH, growth_stock=PLAYOUT_GROWTH_STOCK)


HEURISTICS = register("tiuu", Heuristics(greedy=greedy, playout=playout, rollout=rollout))
