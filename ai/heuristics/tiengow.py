"""Tien Gow heuristics (rules: ``shared/rules/tiengow.md``, engine: ``engine/tiengow.py``).

* ``greedy(state, seat, rng)``: one-ply common sense.  The strongest single tile of the hand is *reserved* for
  the last trick (only the last trick settles the deal, §8–§9), so it is neither led nor spent on a beat
  before then.  Leading: the largest group not using the reserved tile, strongest first (a big group earns
  many columns and is rarely beaten).  Following: beat with the cheapest (lowest ranked) winning group that
  keeps the reserve, or, when none, discard the weakest ``n`` tiles face down.
* ``playout(state, rng)``: a policy for ISMCTS playouts that costs barely more than a uniform choice: the
  legal move list is already ordered (beats strongest first, then discards in combination order), so it
  beats with the cheapest beat most of the time and otherwise discards the tail of the hand.
  ``rollout(state, rng)`` plays it to the end of the deal in one call (the search's fast path).
* ``hidden(state, moves, rng)``: the search's model of which face-down discard another seat plays (the
  weakest tiles).

Both look only at the moves of the player to move, that player's hand and the public trick (never at other
seats' hands or face-down discards).
"""

from __future__ import annotations

import random
from typing import cast

from engine.game import Move, Seat, State, below
from engine.tiengow import TienGowState
from engine.tiles import CF_CIVIL, CF_MILITARY_CLASS, CF_STRENGTH, FACES, Face

#: one comparable power per face across both suits (0..10): a Heaven and a nine head their suits;
#: civil strengths 11..1 and military classes 9..3 are spread over the same scale
POWER: tuple[float, ...] = tuple(
    CF_STRENGTH[f] * 10 / 11 if CF_CIVIL[f] else {9: 10.0, 8: 8.5, 7: 7.0, 6: 5.5, 5: 4.0, 3: 1.0}[
        CF_MILITARY_CLASS[f]]
    for f in FACES)


def _power(move: Move) -> float:
    return sum(POWER[f] for f in move.code[1])


def _reserve(hand: tuple[Face, ...]) -> Face | None:
    return max(hand, key=lambda f: POWER[f]) if len(hand) > 1 else None


def greedy(state: State, seat: Seat, rng: random.Random) -> Move:
    """The heuristic choice of ``seat`` (which must be to move) from what it can see."""
    assert isinstance(state, TienGowState) and state.to_move == seat
    moves = state.legal_moves()
    if len(moves) == 1:
        return moves[0]
    hand = state.hands[seat]
    reserve = _reserve(hand)
    leading = not state.cur
    if leading:
        keep = [m for m in moves if reserve not in m.code[1]] or moves
        # many tiles first, then the strongest group of that size; ties broken by the seeded rng
        return max(keep, key=lambda m: (len(m.code[1]), m.code[3], rng.random()))
    beats = [m for m in moves if m.code[0]]
    if beats:
        last_trick = len(hand) == len(beats[0].code[1])  # this trick empties every hand
        keep = beats if last_trick else [m for m in beats if reserve not in m.code[1]]
        if keep:
            return min(keep, key=lambda m: (m.code[3], _power(m)))
    discards = [m for m in moves if not m.code[0]]
    return min(discards, key=_power)


def hidden(state: State, moves: list[Move], rng: random.Random) -> Move:
    """Which of several face-down discards (they look the same to the other seats) the mover plays, for a
    search that keys them as one observation: the weakest tiles, as ``greedy`` discards."""
    return min(moves, key=_power)


def playout(state: State, rng: random.Random) -> Move:
    """A cheap playout policy: mostly the cheapest beat when one exists, else a weak discard."""
    return _pick(state.legal_moves(), rng)


def _pick(moves: list[Move], rng: random.Random) -> Move:
    last = moves[-1]
    if last.code[0]:  # only face-up plays: a lead
        return moves[below(rng, len(moves))]
    if moves[0].code[0] and rng.random() < 0.75:
        k = 1
        while moves[k].code[0]:
            k += 1
        return moves[k - 1]
    # discards come in combination order of the hand sorted strongest face first: the tail is weakest
    return last if rng.random() < 0.5 else moves[below(rng, len(moves))]


def rollout(state: State, rng: random.Random) -> None:
    """``playout`` move after move until the current deal ends (issue 14: the search's playout in one
    call, with the state's fields read directly instead of through the protocol's properties); the same
    moves and the same draws as calling ``playout`` and ``apply`` in a loop."""
    st = cast(TienGowState, state)
    legal = st.legal_moves
    apply = st.apply
    deal = st.deal_no
    while st._turn >= 0 and st.deal_no == deal:
        apply(_pick(legal(), rng))
