"""Heuristics for ``tiengow_wall`` (Tien Gow, wall-and-dice variant; ``engine/tiengow_wall.py``).

* ``greedy(state, seat, rng)``: one ply, built directly instead of scoring every legal move (a follower with
  16 tiles has up to ~26000 placements).  Following: try every subset of the columns to win, give each chosen
  column the cheapest tile that goes on top of it (strongest tops first), dump the weakest tiles on the rest,
  also try a higher Pai Gow pair when one stands, and keep the placement with the best score
  ``100 * sure columns + 50 * other columns won - value of the tiles spent``.  A column is *sure* when no
  tile the seat has not seen could go on top of it later.  Leading: lead the tiles nobody can beat (up to
  four; never two that form a pair some unseen pair could beat); without one, lose the round cheaply with
  the weakest single.
* ``playout(state, rng)``: the search's playout policy, the greedy engine's move for the seat to move,
  decided from that seat's own information in the sampled world (issue 13: it measured stronger than a
  cheaper policy that read the sampled world's hands; docs/ai.md, "The wall variant").
* ``move_class(state, move)`` and ``distinct(state)``: the strategic classes of the moves of the seat to
  move (placements that differ only in which losing tile lies under which column are one class) and one
  move per class.  ``distinct`` opts the wall variant into the search's paired root (``ai.ismcts``).

``greedy`` (and so ``playout``) uses only what ``seat`` may know: its hand, the table and the tiles it has
not seen.  ``move_class`` and ``distinct`` read only the table and the seat's own moves.
"""

from __future__ import annotations

import random
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


#: per face, the faces that beat it (``BEATS[g][face]``): ``_can_be_beaten`` looks at those only
BEATEN_BY: tuple[tuple[int, ...], ...] = tuple(tuple(g for g in range(NUM) if BEATS[g][f]) for f in range(NUM))
#: every face, cheapest to spend first: by ``VALUE``, then face id (the order of ``min(..., key=(VALUE[g], g))``)
CHEAPEST: tuple[int, ...] = tuple(sorted(range(NUM), key=lambda g: (VALUE[g], g)))
_RANK: tuple[int, ...] = tuple(CHEAPEST.index(f) for f in range(NUM))


def _can_be_beaten(face: int, unseen: list[int]) -> bool:
    return any(unseen[g] for g in BEATEN_BY[face])


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
    # the hand cheapest first: the cheapest tile that beats a top is the first in this order that does, and
    # what is left after taking some out is still in this order (the spare tiles, weakest first)
    cheapest = sorted(hand, key=_RANK.__getitem__)
    # strongest tops first (stable: equal tops in column order)
    order = sorted(range(n), key=lambda i: -STRENGTH[tops[i]])
    candidates: list[tuple[int, ...]] = []
    for k in range(n + 1):
        for wanted in combinations(order, k):
            rest = cheapest[:]
            chosen: dict[int, int] = {}
            for i in wanted:
                top = tops[i]
                for f in rest:
                    if BEATS[f][top]:
                        break
                else:
                    break
                chosen[i] = f
                rest.remove(f)
            else:
                spare = iter(rest)
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


def playout(state: TienGowWallState, rng: random.Random) -> Move:
    """The search's playout move for the seat to move: the greedy engine's move (``greedy``) for that seat,
    from what that seat knows in the sampled world (its hand, the table, the tiles it has not seen).  An
    earlier policy judged tiles *safe* by the sampled world's actual hands (a clairvoyant model of every
    player) and measured weaker: docs/ai.md, "The wall variant"."""
    return greedy(state, state.turn, rng)


def move_class(state: TienGowWallState, move: Move) -> tuple[int, ...]:
    """The strategic class of ``move`` for the seat to move in ``state`` (issue 13): two moves of one class
    leave the same hands, the same column tops (so the same owners and the same standing pair) and the same
    tiles played, and differ only in which losing tile lies underneath which column -- which no rule reads
    (a column belongs to the owner of its top tile, later tiles are compared with the top only, and at the
    round's end every tile of every column counts as played).  Every lead is a class of its own; a Pai Gow
    pair that takes over a standing pair is its own class (both tiles go on top, in the columns it names);
    any other placement's class is the tile going on top of each column (-1 where it goes underneath)
    followed by the tiles going underneath, sorted.  Reads only the table and the move."""
    faces: tuple[int, ...] = move.code
    cols = state.cols
    if not cols:
        return faces
    if state.pair and len(faces) == 2 and PAIR.get((faces[0], faces[1]), 0) > state.pair:
        return (-2, *faces)
    on = tuple([f if BEATS[f][c[-1] >> 2] else -1 for f, c in zip(faces, cols, strict=True)])
    return on + tuple(sorted([f for f, o in zip(faces, on, strict=True) if o < 0]))


def distinct(state: TienGowWallState) -> list[Move]:
    """The strategically distinct moves of the seat to move: the first legal move (in legal order) of each
    class of ``move_class``.  The search's root considers only these (``ai.ismcts``, paired root); a move
    it returns is one of ``state.legal_moves()``, so it is legal wherever the seat's hand is the same."""
    seen: dict[tuple[int, ...], Move] = {}
    moves = state.legal_moves()
    if not state.cols:
        return list(moves)
    for m in moves:
        seen.setdefault(move_class(state, m), m)
    return list(seen.values())
