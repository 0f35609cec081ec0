"""Heuristics for ``tiengow_wall`` (Tien Gow, wall-and-dice variant; ``engine/tiengow_wall.py``).

* ``greedy(state, seat, rng)``: one ply, built directly instead of scoring every legal move (a follower with
  16 tiles has up to ~26000 placements).  Following: try every subset of the columns to win, give each chosen
  column the cheapest tile that goes on top of it (strongest tops first), dump the weakest tiles on the rest,
  also try a higher Pai Gow pair when one stands, and keep the placement with the best score
  ``100 * sure columns + 50 * other columns won - value of the tiles spent``.  A column is *sure* when no
  tile the seat has not seen could go on top of it later.  Leading: lead the tiles nobody can beat (up to
  four; never two that form a pair some unseen pair could beat); without one, lose the round cheaply with
  the weakest single.
* ``playout(state, rng)``: a cheap randomized policy for search rollouts that plays like the greedy engine,
  judged in the sampled world the rollout runs in (issue 13): a tile is *safe* when no tile still held by the
  seats that act after it could go on top of it.  Leading (90%): the safe tiles, strongest first, up to
  four; without one the weakest single; otherwise (10%) a random lead.  Following, strongest column tops
  first: the cheapest safe beater (95%), sometimes (20% of the rest) the cheapest beater, else the weakest
  tile.  The earlier policy led a random number of random tiles, a way no real player gives columns away;
  what the change is worth is measured in ``docs/ai.md`` ("The wall variant: why ISMCTS ties greedy").

``greedy`` uses only what ``seat`` may know: its hand, the table and the tiles it has not seen.  ``playout``
runs inside a search's sampled world, which is already a determinization of the searching seat's
information set, so reading that world's hands is a model of the opponents, not a peek.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from itertools import combinations

from engine.game import Move
from engine.tiengow_wall import (
    BEATS,
    CIVIL,
    NUM,
    PAIR,
    STRENGTH,
    TienGowWallState,
    lead_move,
    place_move,
)

#: how much a tile is worth keeping, 0..1 within its suit (strength over the suit's best)
VALUE: tuple[float, ...] = tuple(STRENGTH[f] / (11 if CIVIL[f] else 10) for f in range(NUM))


def _can_be_beaten(face: int, unseen: list[int]) -> bool:
    row = BEATS
    return any(unseen[g] and row[g][face] for g in range(NUM))


def _higher_pair_possible(rank: int, unseen: list[int]) -> bool:
    for (a, b), r in PAIR.items():
        if r > rank and unseen[a] and unseen[b] and (a != b or unseen[a] >= 2):
            return True
    return False


def _greedy_lead(state: TienGowWallState, seat: int) -> Move:
    hand = state.hands[seat]
    unseen = state.unseen_counts(seat)
    sure = [f for f in hand if not _can_be_beaten(f, unseen)]
    if not sure:
        weakest = min(hand, key=lambda f: (VALUE[f], f))
        return lead_move((weakest,))
    lead = sorted(sure, key=lambda f: (-VALUE[f], f))[:4]
    if len(lead) == 2:
        rank = PAIR.get((lead[0], lead[1]), 0)
        if rank and _higher_pair_possible(rank, unseen):
            lead = lead[:1]  # a higher pair would take both columns; one sure column is safe
    return lead_move(tuple(sorted(lead)))


def _settle(state: TienGowWallState, faces: tuple[int, ...]) -> list[bool]:
    """Which columns ``faces`` (one per column) would take right now."""
    cols = state.cols
    if state.pair and len(faces) == 2 and PAIR.get((faces[0], faces[1]), 0) > state.pair:
        return [True, True]
    return [BEATS[f][cols[i][-1] >> 2] for i, f in enumerate(faces)]


def _greedy_follow(state: TienGowWallState, seat: int) -> Move:
    hand = state.hands[seat]
    cols = state.cols
    n = len(cols)
    unseen = state.unseen_counts(seat)
    last = (seat + 1) % state.players == state.leader
    tops = [c[-1] >> 2 for c in cols]
    candidates: list[tuple[int, ...]] = []
    for k in range(n + 1):
        for wanted in combinations(sorted(range(n), key=lambda i: -STRENGTH[tops[i]]), k):
            rest = list(hand)
            chosen: dict[int, int] = {}
            for i in wanted:
                beaters = [f for f in rest if BEATS[f][tops[i]]]
                if not beaters:
                    break
                f = min(beaters, key=lambda g: (VALUE[g], g))
                chosen[i] = f
                rest.remove(f)
            else:
                spare = iter(sorted(rest, key=lambda g: (VALUE[g], g)))
                candidates.append(tuple(chosen[i] if i in chosen else next(spare) for i in range(n)))
    if state.pair and n == 2:
        for a, b in combinations(hand, 2):
            if PAIR.get((a, b), 0) > state.pair:
                candidates.append((a, b))
    best: tuple[float, tuple[int, ...]] | None = None
    for faces in candidates:
        won = _settle(state, faces)
        score = -sum(VALUE[f] for f in faces)
        for i, w in enumerate(won):
            if w:
                score += 100 if last or not _can_be_beaten(faces[i], unseen) else 50
        if best is None or score > best[0]:
            best = (score, faces)
    assert best is not None  # the empty subset always gives a placement
    return place_move(best[1])


def greedy(state: TienGowWallState, seat: int, rng: random.Random) -> Move:
    """One-ply choice for ``seat`` (which must be to move): see the module docstring."""
    if not state.cols:
        return _greedy_lead(state, seat)
    return _greedy_follow(state, seat)


#: BEATEN_BY[f]: bit g set when face g goes on top of face f (same suit, strictly stronger)
BEATEN_BY: tuple[int, ...] = tuple(sum(1 << g for g in range(NUM) if BEATS[g][f]) for f in range(NUM))


def _mask(state: TienGowWallState, seats: Iterable[int]) -> int:
    m = 0
    hands = state.hands
    for s in seats:
        for g in hands[s]:
            m |= 1 << g
    return m


def _cheapest(faces: Iterable[int]) -> int:
    return min(faces, key=lambda g: (VALUE[g], g))


def playout(state: TienGowWallState, rng: random.Random) -> Move:
    """A cheap randomized move for the seat to move (search rollouts), close to the greedy engine's play
    but judged in the sampled world: a tile is *safe* when no tile still held by the seats that act after
    it (all others when leading, the later followers of the round when following) could go on top of it."""
    seat = state.turn
    hand = state.hands[seat]
    cols = state.cols
    n = state.players
    if not cols:
        if rng.random() < 0.9:
            others = _mask(state, (s for s in range(n) if s != seat))
            safe = [f for f in hand if not BEATEN_BY[f] & others]
            if safe:
                safe.sort(key=lambda f: (-VALUE[f], f))
                return lead_move(tuple(sorted(safe[:4])))
            return lead_move((_cheapest(hand),))
        k = rng.randint(1, min(4, len(hand)))
        return lead_move(tuple(sorted(rng.sample(hand, k))))
    # the followers after this seat in this round: up to (not including) the leader
    later = _mask(state, ((seat + i) % n for i in range(1, (state.leader - seat) % n)))
    rest = list(hand)
    faces = [0] * len(cols)
    for i in sorted(range(len(cols)), key=lambda i: -STRENGTH[cols[i][-1] >> 2]):
        top = cols[i][-1] >> 2
        beaters = [f for f in rest if BEATS[f][top]]
        safe = [f for f in beaters if not BEATEN_BY[f] & later]
        if safe and rng.random() < 0.95:
            f = _cheapest(safe)
        elif beaters and rng.random() < 0.2:
            f = _cheapest(beaters)
        else:
            f = _cheapest(rest)
        rest.remove(f)
        faces[i] = f
    return place_move(tuple(faces))
