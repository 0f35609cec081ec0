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
  weakest tiles).  ``observe(state)`` is the search's fast path for another seat's tree node: the
  distinct observations of its moves and, for each, the move it plays (``hidden``'s for the discards).

Both look only at the moves of the player to move, that player's hand and the public trick (never at other
seats' hands or face-down discards).
"""

from __future__ import annotations

import random
from bisect import bisect_left
from itertools import combinations
from typing import cast

from ai.heuristics import Heuristics, play_to_deal_end, register
from engine.game import Move, Seat, State, below
from engine.tiengow import (
    _DISCARD1,
    _LEAD,
    _PLAY1,
    _SIZE,
    BEAT_RUN1,
    QUARTET,
    SUPREME,
    TienGowState,
    _discard_of,
    beats_for,
    moves_for,
)
from engine.tiles import CF_CIVIL, CF_MILITARY_CLASS, CF_STRENGTH, FACES, Face

#: one comparable power per face across both suits (0..10): a Heaven and a nine head their suits;
#: civil strengths 11..1 and military classes 9..3 are spread over the same scale
POWER: tuple[float, ...] = tuple(
    CF_STRENGTH[f] * 10 / 11 if CF_CIVIL[f] else {9: 10.0, 8: 8.5, 7: 7.0, 6: 5.5, 5: 4.0, 3: 1.0}[
        CF_MILITARY_CLASS[f]]
    for f in FACES)


class _Powers(dict[tuple[Face, ...], float]):
    """faces -> the sum of their powers, summed once (in face order, so every float is the one the sum gives)
    and then looked up: the search asks it for every face-down discard another seat could make (``hidden``).
    Bounded by the few thousand multisets of 1-4 faces."""

    def __missing__(self, faces: tuple[Face, ...]) -> float:
        p = self[faces] = sum(POWER[f] for f in faces)
        return p


_power_of = _Powers().__getitem__


def _power(move: Move) -> float:
    return _power_of(move.code[1])


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
    search that keys them as one observation: the weakest tiles, as ``greedy`` discards (the first of equally
    weak ones, as ``min`` picks)."""
    powers = [_power_of(m.code[1]) for m in moves]
    return moves[powers.index(min(powers))]


def weakest(hand: tuple[Face, ...], n: int) -> Move:
    """``hidden``'s choice among every face-down discard of ``n`` tiles of ``hand``: the first, in legal
    order (combinations of the hand, sorted by face id), of those with the least power.  Without listing
    them all: a weakest discard holds only tiles no stronger than the hand's ``n``-th weakest (a stronger
    one swapped for a weaker unused tile would lower the sum by at least the smallest gap between two
    powers, 1/22, far above any rounding of a sum of four), so only the combinations of those tiles are
    summed, in the same order and with the same sums (``_power_of``)."""
    if n == 1:
        return _DISCARD1[min(hand, key=POWER.__getitem__)]
    cut = sorted(map(POWER.__getitem__, hand))[n - 1]
    weak = tuple([f for f in hand if POWER[f] <= cut])
    if len(weak) == n:
        return _discard_of(weak)
    best = weak[:n]
    least = _power_of(best)
    for faces in combinations(weak, n):
        p = _power_of(faces)
        if p < least:
            best, least = faces, p
    return _discard_of(best)


def observe(state: State) -> tuple[list[int], list[Move]]:
    """For a tree node where a seat other than the searching one is to move: the distinct observation keys of
    its legal moves, in legal order (``State.observed_keys`` of ``legal_moves`` without repeats, the node's
    child keys), and for each key the move the seat plays: the only move with that key, or among the
    face-down discards (all observed as one) ``hidden``'s choice, the weakest.  The same keys and moves as
    the search's general path (``legal_moves``, ``observed_keys``, ``hidden`` through
    ``ai.ismcts._with_observation``; ``tests/test_ai_observe.py`` compares them), without building every
    discard of a hand the move caches have never seen (issue 14: that was a tenth of an iteration).  The
    lists may be the engine's cached ones: read, never change them."""
    st = cast(TienGowState, state)
    t = st._turn
    hand = st.hands[t]
    sit = st._sit
    if sit == _LEAD:
        # every lead is face up, observed as itself
        leads = moves_for(hand, _LEAD)
        return [m.key for m in leads], leads
    if len(hand) == 1 and not st.columns[t] and st.options["early_death"]:
        last = _DISCARD1[hand[0]]  # §7 early death: the one move
        return [last.seen_key], [last]
    moves = beats_for(hand, sit)
    keys = [m.key for m in moves]
    discard = weakest(hand, _SIZE[sit])
    keys.append(discard.seen_key)
    moves.append(discard)
    return keys, moves


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
    """``playout`` move after move until the current deal ends: the search's playout in one call, with the
    same moves and the same draws as calling ``playout`` and ``apply`` in a loop (``tests/test_rollouts.py``
    plays both from thousands of sampled positions and compares states and generators).

    Issue 14: a sampled world deals hands the engine's move caches have never seen, so building each legal
    move list (and caching it) was most of a playout.  ``_pick`` needs far less than the list: on a lead, the
    number of leads and the one drawn; on a follow, the cheapest beat (the last one listed), the last
    discard (the hand's last ``n`` tiles) and, one time in eight, the whole list.  This loop computes just
    that: a lead draws from the engine's cached list of the hand's leads; the follow of a single finds its
    cheapest beat by bisection and draws the uniform one from the hand's distinct faces (its beats, then its
    discards); the follow of a group takes its beats from ``beats_for`` and the engine's whole list only for
    the uniform draw.  It plays a trick on local variables and closes an ordinary trick itself; the end of
    the last one (settlement) and Supreme/quartet money stay the engine's own ``_end_trick``."""
    st = cast(TienGowState, state)
    if not st.halt_at_deal_end:
        play_to_deal_end(st, playout, rng)
        return
    hands = st.hands
    columns = st.columns
    early_death = st.options["early_death"]
    random_ = rng.random
    getrandbits = rng.getrandbits
    end_trick = st._end_trick
    while st._turn >= 0:  # halting at the deal's end sets _turn to -1
        t = st._turn
        cur = st.cur
        sit = st._sit
        n = st._n
        high_seat = st._high_seat
        high_type = st._high_type
        high_rank = st._high_rank
        high_faces = st._high_faces
        while True:
            hand = hands[t]
            if sit == _LEAD:
                # a lead: uniform over every legal lead; a hand leads again and again across a search's
                # playouts, so the engine's cached list serves
                leads = moves_for(hand, _LEAD)
                # ``below(rng, size)`` spelled out: a call per lead is a tenth of a playout
                size = len(leads)
                b = size.bit_length()
                r = getrandbits(b)
                while r >= size:
                    r = getrandbits(b)
                move = leads[r]
            elif len(hand) == 1 and early_death and not columns[t]:
                # §7 early death: the discard of the last tile is the only move, and _pick still draws (the
                # last move, or a uniform choice among the one)
                move = _DISCARD1[hand[0]]
                if random_() >= 0.5:
                    below(rng, 1)
            elif _SIZE[sit] == 1:
                # the most frequent follow.  The faces that beat a single are one run of face ids and the
                # hand is sorted: the cheapest beat is the hand's last face below the run's end
                lo, hi = BEAT_RUN1[sit]
                j = bisect_left(hand, hi)
                # the two usual outcomes are played right here: the tile's place in the hand is known
                if j and hand[j - 1] >= lo and random_() < 0.75:
                    # the cheapest beat goes up and leads the trick now
                    _up, high_faces, high_type, high_rank, sit = _PLAY1[hand[j - 1]].code
                    high_seat = t
                    hands[t] = hand[:j - 1] + hand[j:]
                    cur += ((t, 1, high_faces),)
                    move = None
                elif random_() < 0.5:
                    # the weakest tile goes down
                    hands[t] = hand[:-1]
                    cur += ((t, 0, _DISCARD1[hand[-1]].code[1]),)
                    move = None
                else:
                    # one time in eight: uniform over the whole list, which is the single of each distinct
                    # face of the run that beats (in face order), then the discard of each distinct face
                    distinct = tuple(dict.fromkeys(hand))
                    i = bisect_left(distinct, lo)
                    n_beats = bisect_left(distinct, hi) - i
                    r = below(rng, n_beats + len(distinct))
                    move = _PLAY1[distinct[i + r]] if r < n_beats else _DISCARD1[distinct[r - n_beats]]
            else:
                # the follow of a group, as ``_pick`` chooses over the engine's list (its beats, then the
                # discards in combination order): mostly the cheapest beat, the last beat listed; else the
                # last discard, which is the hand's weakest n tiles; one time in eight (one in two without a
                # beat) the whole list
                beats = beats_for(hand, sit)
                if beats and random_() < 0.75:
                    move = beats[-1]
                elif random_() < 0.5:
                    move = _discard_of(hand[-_SIZE[sit]:])
                else:
                    moves = moves_for(hand, sit)
                    move = moves[below(rng, len(moves))]
            if move is not None:
                # the play itself, as the engine's ``_apply`` does it
                up, faces, gtype, rank, msit = move.code
                if len(faces) == 1:
                    i = hand.index(faces[0])
                    hands[t] = hand[:i] + hand[i + 1:]
                else:
                    rest = list(hand)
                    for f in faces:
                        rest.remove(f)
                    hands[t] = tuple(rest)
                if up:
                    if not cur:
                        n = len(faces)
                    high_seat = t
                    high_type = gtype
                    high_rank = rank
                    high_faces = faces
                    sit = msit
                cur += ((t, up, faces),)
            if len(cur) < 4:
                t = t + 1 if t < 3 else 0
                continue
            if hands[high_seat] and high_type != SUPREME and high_type != QUARTET:
                # the end of a trick that neither ends the deal nor pays money at once, as the engine's
                # _end_trick does it: the winner takes its columns and leads the next trick
                columns[high_seat] += n
                st.tricks += ((st.leader, high_seat, cur),)
                st.leader = t = high_seat
                cur = ()
                sit = _LEAD
                n = 0
                high_seat = high_type = -1
                high_rank = 0
                high_faces = ()
                continue
            break
        # any other trick's end is the engine's own
        st.cur = cur
        st._n = n
        st._sit = sit
        st._high_seat = high_seat
        st._high_type = high_type
        st._high_rank = high_rank
        st._high_faces = high_faces
        end_trick(None)


HEURISTICS = register("tiengow", Heuristics(greedy=greedy, playout=playout, rollout=rollout, hidden=hidden,
                                            observe=observe))
