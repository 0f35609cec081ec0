"""Kozel heuristics (rules: ``docs/rules/kozel.md``): a one-ply greedy choice and a cheap playout policy.

Low totals are good in Kozel, so both shed weight: the heavier a tile, the more it costs if it is still in
hand when somebody goes out or the game fishes.  ``greedy`` adds what a player watches at the table:

* going out beats everything;
* doubles first: a double fits only one number and gets stuck more easily than a mixed tile;
* the 0-0 is shed early: it is worth nothing now but 25 if it is the last tile left (or always, with
  ``zero_zero_always_25``);
* keep numbers that can still be matched: prefer moves after which the own hand still fits an end, so the
  next turn is a play and not a trip to the bazaar;
* shut the next player out (``SENSE``): leave ends that few tiles the next player may hold still match, and
  best none at all.  What the next player may hold is what the mover cannot see: neither on the table nor in
  his own hand, nor a tile the next player has shown he lacks (a draw or a pass shows he held nothing for
  either end, ``KozelState.slot_masks``: public).  Each such tile that matches an end after the move costs
  ``SENSE.scarce``; when there is none, the next player must draw or pass and the move earns ``SENSE.shut``.

The playout policies: ``playout`` (``ismcts:playout=heuristic``) sheds the heaviest tile, with some random
moves; ``greedy_playout`` (``ismcts:playout=greedy``, Kozel's default playout) is the greedy engine's choice
without the voids (``unvoided_greedy``): a playout's fast path (``engine.kozel.rollout_of``, with
``PLAYOUT_SCORE``) does not keep the voids a playout reveals, so it counts every tile that the mover cannot
see.  Both use only what the mover may know in the sampled world: its own hand and the public line.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple, cast

from ai.heuristics import Heuristics, greedy_policy, register
from engine.game import Move, State, below
from engine.kozel import (
    ALL_TILES,
    DOUBLES_BASE,
    FIRST,
    LEFT,
    NUM_TILES,
    ZERO_ZERO,
    GreedyScore,
    KozelState,
    pips,
    rollout_of,
)
from engine.tiles import D_HI, D_LO, D_OTHER, D_PIPS, domino

# What shedding a tile is worth to the playout policy: its pips, doubles a little more (they block easily),
# 0-0 as a middling tile because of its 25-point threat.  Indexed by move code; draw/pass are not scored.
_SHED: dict[int, float] = {}
for _t in range(28):
    _w = 8.0 if _t == ZERO_ZERO else D_PIPS[_t] + (2.0 if D_HI[_t] == D_LO[_t] else 0.0)
    for _e in range(3):
        _SHED[_t * 4 + _e] = _w
for _a in range(7):
    for _b in range(7):
        if _a != _b:
            _SHED[DOUBLES_BASE + _a * 7 + _b] = 2 * _a + 2 * _b + 4.0 + (8.0 if 0 in (_a, _b) else 0.0)


def _after(state: KozelState, move: Move) -> tuple[int, int, int]:
    """The mover's hand and the two ends after ``move`` (a play or the two-doubles move)."""
    code = move.code
    hand = state.hands[state.turn]
    left, right = state.left, state.right
    if code >= DOUBLES_BASE:
        x = code - DOUBLES_BASE
        a, b = x // 7, x % 7
        return hand & ~((1 << domino(a, a)) | (1 << domino(b, b))), left, right
    t, end = code >> 2, code & 3
    hand &= ~(1 << t)
    if end == FIRST:
        return hand, D_HI[t], D_LO[t]
    if end == LEFT:
        return hand, D_OTHER[t][left], right
    return hand, left, D_OTHER[t][right]


#: the weights of ``score_move``: going out beats everything; 0-0 shed is worth 10 (25 where it always counts
#: 25); the two-doubles move 6 and a double 3; 2 per tile that still fits an end afterwards, up to three;
#: -4 when none does
SCORE = GreedyScore(out=1000.0, zero_zero=10.0, zero_zero_always=25.0, doubles=6.0, double=3.0, fit=2.0,
                    fit_cap=3, stuck=-4.0)


def score_move(state: KozelState, move: Move) -> float:
    """How good ``move`` looks to the player to move (higher is better), by ``SCORE``."""
    if move.code < 0:
        return 0.0
    return _score_after(state, move, _after(state, move))


def _score_after(state: KozelState, move: Move, after: tuple[int, int, int]) -> float:
    """``score_move`` of a play or the two-doubles move, given ``_after(state, move)``."""
    before = state.hands[state.turn]
    hand, left, right = after
    if not hand:
        return SCORE.out
    score = float(pips(before) - pips(hand))
    if before >> ZERO_ZERO & 1 and not hand >> ZERO_ZERO & 1:
        score += SCORE.zero_zero_always if state.zz25 else SCORE.zero_zero
    if move.code >= DOUBLES_BASE:
        score += SCORE.doubles
    elif D_HI[move.code >> 2] == D_LO[move.code >> 2]:
        score += SCORE.double
    fits = (hand & (NUM_TILES[left] | NUM_TILES[right])).bit_count()
    score += SCORE.fit * min(fits, SCORE.fit_cap) if fits else SCORE.stuck
    return score


class TableSense(NamedTuple):
    """The greedy engine's weights for the next player's chances to match an end after a move (module
    docstring): ``scarce`` is subtracted per tile he may hold that matches an end, ``shut`` added when there
    is none."""

    shut: float
    scarce: float


#: tuned by greedy self-play in the arena (docs/ai.md, "Tuned by self-play"): with both at 0 the greedy
#: engine is the shedding one of before 2026-12-06; ``shut`` at 40 outranks every other term but going out
SENSE = TableSense(shut=40.0, scarce=8.0)


def sensed_score(state: KozelState, move: Move, sense: TableSense = SENSE, lacked: int | None = None) -> float:
    """``score_move`` plus what ``move`` leaves the next player (``TableSense``; public facts only).
    ``lacked`` is ``lacked_by_next(state)``, passed in when several moves of one position are scored."""
    if move.code < 0:
        return 0.0
    after = _after(state, move)
    score = _score_after(state, move, after)
    if score >= SCORE.out:
        return score
    if lacked is None:
        lacked = lacked_by_next(state)
    _, left, right = after
    # the tiles the next player may hold: not on the table, not the mover's, not shown lacking
    may = ALL_TILES & ~(state.table | state.hands[state.turn] | lacked)
    left_open = (may & (NUM_TILES[left] | NUM_TILES[right])).bit_count()
    return score + (sense.shut if not left_open else -sense.scarce * left_open)


def lacked_by_next(state: KozelState) -> int:
    """The tiles the player after the mover has shown he lacks (public): his newest slot's mask, which every
    slot of his shares, since masks are nested (``KozelState.slot_masks``); 0 if he has shown nothing."""
    masks = state.slot_masks(state.next[state.turn])
    return masks[-1] if masks else 0


def greedy(state: State, seat: int, rng: random.Random) -> Move:
    """The best-looking legal move of ``seat`` by ``sensed_score``; ties broken by ``rng``."""
    return greedy_with(state, seat, rng, SENSE)


def greedy_with(state: State, seat: int, rng: random.Random, sense: TableSense, voids: bool = True) -> Move:
    """``greedy`` with other ``TableSense`` weights (both 0: ``shedding_greedy``'s choice); with ``voids``
    false it knows none of the next player's voids (``unvoided_greedy``)."""
    moves = _moves_of(state, seat)
    if len(moves) == 1:
        return moves[0]
    ks = cast(KozelState, state)
    lacked = lacked_by_next(ks) if voids else 0
    return _best(moves, [sensed_score(ks, m, sense, lacked) for m in moves], rng)


def shedding_greedy(state: State, seat: int, rng: random.Random) -> Move:
    """The best-looking legal move of ``seat`` by ``score_move`` alone (its hand and the line; ties broken by
    ``rng``): the greedy engine and the greedy playout of before 2026-12-06, and the choice the inference's
    opponent model (``ai.inference``) scores."""
    moves = _moves_of(state, seat)
    if len(moves) == 1:
        return moves[0]
    ks = cast(KozelState, state)
    return _best(moves, [score_move(ks, m) for m in moves], rng)


def unvoided_greedy(sense: TableSense) -> Callable[[State, int, random.Random], Move]:
    """``greedy_with`` ``sense`` that knows no voids: the choice Kozel's greedy rollout plays with
    ``GreedyScore.shut`` and ``scarce``, which keeps no voids (with both 0: ``shedding_greedy``'s)."""

    def choose(state: State, seat: int, rng: random.Random) -> Move:
        return greedy_with(state, seat, rng, sense, voids=False)

    return choose


def _moves_of(state: State, seat: int) -> list[Move]:
    if not isinstance(state, KozelState):
        raise TypeError("the Kozel heuristics need a Kozel state")
    if state.to_move != seat:
        raise ValueError(f"it is not seat {seat}'s turn")
    return state.legal_moves()


def _best(moves: list[Move], scores: list[float], rng: random.Random) -> Move:
    top = max(scores)
    return rng.choice([m for s, m in zip(scores, moves, strict=True) if s == top])


def playout(state: State, rng: random.Random) -> Move:
    """A cheap policy for playouts: usually the heaviest tile (ties at random), sometimes any move."""
    return _pick(state.legal_moves(), rng)


#: how often the playout policy plays a uniformly random move
_EXPLORE = 0.2


def _pick(moves: list[Move], rng: random.Random) -> Move:
    if len(moves) == 1 or rng.random() < _EXPLORE:
        return moves[below(rng, len(moves))]
    best = -1.0
    pick: list[Move] = []
    shed = _SHED
    for m in moves:
        w = shed[m.code]
        if w > best:
            best, pick = w, [m]
        elif w == best:
            pick.append(m)
    return pick[0] if len(pick) == 1 else pick[below(rng, len(pick))]


#: ``rollout(state, rng)``: ``playout`` to the end of the round in one call, with the same moves and draws
#: (``engine.kozel.rollout_of``; ``tests/test_rollouts.py`` compares the two from thousands of sampled
#: positions, all but the hand slots, which the rollout does not keep on a search's halting world)
rollout = rollout_of(playout, shed=_SHED, explore=_EXPLORE)


#: ``unvoided_greedy(SENSE)`` for whichever seat is to move: the playout policy ``ismcts:playout=greedy``,
#: Kozel's default playout (``Heuristics.default_playout``)
greedy_playout = greedy_policy(unvoided_greedy(SENSE))

#: the greedy rollout's weights: ``SCORE`` with ``SENSE``'s terms read without voids
PLAYOUT_SCORE = GreedyScore(SCORE.out, SCORE.zero_zero, SCORE.zero_zero_always, SCORE.doubles, SCORE.double,
                            SCORE.fit, SCORE.fit_cap, SCORE.stuck, shut=SENSE.shut, scarce=SENSE.scarce)

#: ``greedy_rollout(state, rng)``: ``greedy_playout`` to the end of the round in one call, with the same moves
#: and draws (``engine.kozel.rollout_of`` with ``PLAYOUT_SCORE``; compared with the policy in
#: ``tests/test_rollouts.py``)
greedy_rollout = rollout_of(greedy_playout, greedy=PLAYOUT_SCORE)


HEURISTICS = register("kozel", Heuristics(greedy=greedy, playout=playout, rollout=rollout,
                                          greedy_rollout=greedy_rollout, greedy_playout=greedy_playout,
                                          default_playout="greedy"))
