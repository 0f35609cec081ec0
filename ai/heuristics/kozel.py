"""Kozel heuristics (rules: ``docs/rules/kozel.md``): a one-ply greedy choice and a cheap playout policy.

Low totals are good in Kozel, so both shed weight: the heavier a tile, the more it costs if it is still in
hand when somebody goes out or the game fishes.  ``greedy`` adds what a player watches at the table:

* going out beats everything;
* doubles first: a double fits only one number and gets stuck more easily than a mixed tile;
* the 0-0 is shed early: it is worth nothing now but 25 if it is the last tile left (or always, with
  ``zero_zero_always_25``);
* keep numbers that can still be matched: prefer moves after which the own hand still fits an end, so the
  next turn is a play and not a trip to the bazaar.

Both use only what ``seat`` may know: its own hand and the public line.
"""

from __future__ import annotations

import random

from ai.heuristics import Heuristics, greedy_policy, register
from engine.game import Move, State, below
from engine.kozel import (
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
    before = state.hands[state.turn]
    hand, left, right = _after(state, move)
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


def greedy(state: State, seat: int, rng: random.Random) -> Move:
    """The best-looking legal move of ``seat`` by ``score_move``; ties broken by ``rng``."""
    if not isinstance(state, KozelState):
        raise TypeError("the Kozel heuristics need a Kozel state")
    if state.to_move != seat:
        raise ValueError(f"it is not seat {seat}'s turn")
    moves = state.legal_moves()
    if len(moves) == 1:
        return moves[0]
    scored = [(score_move(state, m), m) for m in moves]
    top = max(s for s, _ in scored)
    return rng.choice([m for s, m in scored if s == top])


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


#: ``greedy`` for whichever seat is to move: the playout policy ``ismcts:playout=greedy``
greedy_playout = greedy_policy(greedy)


#: ``greedy_rollout(state, rng)``: ``greedy_playout`` to the end of the round in one call, with the same moves
#: and draws (``engine.kozel.rollout_of`` with ``SCORE``; compared with the policy in ``tests/test_rollouts.py``)
greedy_rollout = rollout_of(greedy_playout, greedy=SCORE)


HEURISTICS = register("kozel", Heuristics(greedy=greedy, playout=playout, rollout=rollout,
                                          greedy_rollout=greedy_rollout))
