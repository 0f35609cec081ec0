"""Heuristics for ``tiengow_wall`` (Tien Gow, wall-and-dice variant; ``engine/tiengow_wall.py``).

* ``greedy(state, seat, rng)``: one ply, built directly instead of scoring every legal move (a follower with
  16 tiles has up to ~26000 placements).  Following: try every subset of the columns to win, give each chosen
  column the cheapest tile that goes on top of it (strongest tops first), dump the weakest tiles on the rest,
  also try a higher Pai Gow pair when one stands, and keep the placement with the best score
  ``100 * sure columns + 50 * other columns won - value of the tiles spent`` (``OPEN_COLUMN``).  A column is
  *sure* when no tile the seat has not seen could go on top of it later.  Leading: lead the tiles nobody can beat (up to
  four; never two that form a pair some unseen pair could beat); without one, lead a single from the middle
  of the hand (``_middle``), tuned by self-play (docs/ai.md, "The wall game's greedy lead"); before
  2026-12-06 the greedy engine led its weakest single.
* ``playout(state, rng)``: the search's playout policy, the greedy engine's move for the seat to move,
  decided from that seat's own information in the sampled world (it measured stronger than a
  cheaper policy that read the sampled world's hands; docs/ai.md, "The wall variant"), except that with
  chance ``PLAYOUT_EXPLORE`` (0.1) a move is a random one: a single led, or the hand's tiles drawn for the
  columns (docs/ai.md, "The wall game's exploring playouts": stronger at equal time since 2026-12-07).
  ``rollout(state, rng)`` plays it to the end of the game in one call, with the same draws (the search's
  fast path, built by the engine's search kit, ``engine.tiengow_wall.rollout_of``).
* ``move_class(state, move)`` and ``distinct(state)``: the strategic classes of the moves of the seat to
  move (placements that differ only in which losing tile lies under which column are one class) and one
  move per class.  ``distinct`` opts the wall variant into the search's paired root (``ai.ismcts``).

Speed: ``greedy`` takes shortcuts that give the same move -- a follow on one column needs no
scores, columns the hand cannot win are not tried, a repeated placement is not scored again, the scores are
the same floats summed in the same order -- and ``tests/test_wall_greedy.py`` holds it to a copy of its
first, plain version on thousands of positions.

``greedy`` (and so ``playout``) uses only what ``seat`` may know: its hand, the table and the tiles it has
not seen.  ``move_class`` and ``distinct`` read only the table and the seat's own moves.
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import cast

from ai.heuristics import Distinct, Greedy, Heuristics, Policy, Rollout, register
from engine.game import Move
from engine.tiengow_wall import (
    BEATS,
    CIVIL,
    DECK_COUNTS,
    NUM,
    PAIR,
    STRENGTH,
    Choice,
    TienGowWallState,
    lead_move,
    place_move,
    random_faces,
    rollout_of,
)

#: how much a tile is worth keeping, 0..1 within its suit (strength over the suit's best)
VALUE: tuple[float, ...] = tuple(STRENGTH[f] / (11 if CIVIL[f] else 10) for f in range(NUM))


#: every face, cheapest to spend first: by ``VALUE``, then face id (the order of ``min(..., key=(VALUE[g], g))``)
CHEAPEST: tuple[int, ...] = tuple(sorted(range(NUM), key=lambda g: (VALUE[g], g)))
#: ON[top][f]: ``f`` goes on top of ``top`` (``BEATS[f][top]``, by top)
ON: tuple[tuple[bool, ...], ...] = tuple(tuple(BEATS[f][top] for f in range(NUM)) for top in range(NUM))
#: CHEAPEST_ON[top]: the faces that go on top of ``top``, cheapest first
CHEAPEST_ON: tuple[tuple[int, ...], ...] = tuple(tuple(f for f in CHEAPEST if ON[top][f]) for top in range(NUM))

# Per-face tables read through ``key=`` or ``map`` are dicts: a dict's ``__getitem__`` is a plain builtin
# method, a tuple's a method-wrapper that costs about twice as much per call (callgrind).
#: face -> its place in ``CHEAPEST``
_RANK: dict[int, int] = {f: CHEAPEST.index(f) for f in range(NUM)}
#: face -> its place in the order a lead lists its sure tiles in: most valuable first, then face id
_LEAD_RANK: dict[int, int] = {f: i for i, f in enumerate(sorted(range(NUM), key=lambda g: (-VALUE[g], g)))}
#: face -> ``VALUE``
_VALUE: dict[int, float] = dict(enumerate(VALUE))
#: face -> its ``STRENGTH`` if military (civil), else 0: the hand's strongest of a suit is a ``max``
_MILITARY_STRENGTH: dict[int, int] = {f: 0 if CIVIL[f] else STRENGTH[f] for f in range(NUM)}
_CIVIL_STRENGTH: dict[int, int] = {f: STRENGTH[f] if CIVIL[f] else 0 for f in range(NUM)}
#: per suit (index ``CIVIL[f]``: military, civil) its faces, strongest first
_SUIT_DOWN: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted((f for f in range(NUM) if CIVIL[f] == civil), key=lambda f: -STRENGTH[f])) for civil in (False, True))


#: what a column won counts in a follow when the seat does not place last and some tile it has not seen could
#: still go on top of it (a sure column counts 100, a tile spent at most 1): more than any tile, so the seat
#: takes every column it can.  Nothing (0) won in self-play, was level against the search and made the
#: search's playouts no better (docs/ai.md, "The wall game's greedy lead")
OPEN_COLUMN = 50.0


def _unseen_tops(state: TienGowWallState, seat: int) -> list[int]:
    """Per suit (index ``CIVIL[f]``), the strength of the strongest face ``seat`` has not seen (0: none).
    A tile can be beaten later exactly when a face of its suit it has not seen is stronger: the faces that
    beat ``f`` are those of its suit with a higher ``STRENGTH``."""
    tops = [0, 0]
    if state.cols:
        counts = state.unseen_counts(seat)
        for civil in (0, 1):
            for g in _SUIT_DOWN[civil]:
                if counts[g]:
                    tops[civil] = STRENGTH[g]
                    break
        return tops
    # a lead (no table): the counts of ``unseen_counts`` face by face from the strongest down, as most
    # walks stop at the first face (calling ``unseen_counts`` here measured 4% more instructions per wall
    # iteration: 648k -> 676k)
    deck = DECK_COUNTS[state.players]
    out = state.out
    hand = state.hands[seat]
    for civil in (0, 1):
        for g in _SUIT_DOWN[civil]:
            if deck[g] - out[g] - hand.count(g):
                tops[civil] = STRENGTH[g]
                break
    return tops


def _higher_pair_possible(rank: int, unseen: list[int]) -> bool:
    for (a, b), r in PAIR.items():
        if r > rank and unseen[a] and unseen[b] and (a != b or unseen[a] >= 2):
            return True
    return False


def _middle(hand: list[int]) -> int:
    """The single ``greedy`` leads when no tile of ``hand`` is sure: the middle one, cheapest first
    (``CHEAPEST``; of two, the dearer).  Chosen by self-play, not derived; the likely reason is that a
    follower then spends more to take the column than on the weakest tile, while the seat keeps its
    weakest tiles for the columns it loses when following (dumping a middle tile there instead measured
    far weaker)."""
    return sorted(hand, key=_RANK.__getitem__)[len(hand) // 2]


def _lead(state: TienGowWallState, seat: int, middle: bool = True) -> tuple[int, ...]:
    """The tiles ``greedy`` leads (sorted).  ``middle=False``: without a sure tile, the weakest single (the
    lead of before 2026-12-06, for screening: ``greedy_with``)."""
    hand = state.hands[seat]
    tops = _unseen_tops(state, seat)
    sure = [f for f in hand if STRENGTH[f] >= tops[CIVIL[f]]]
    if not sure:
        return (_middle(hand),) if middle else (min(hand, key=_RANK.__getitem__),)
    lead = sorted(sure, key=_LEAD_RANK.__getitem__)[:4]
    if len(lead) == 2:
        rank = PAIR.get((lead[0], lead[1]), 0)
        if rank and _higher_pair_possible(rank, state.unseen_counts(seat)):
            lead = lead[:1]  # a higher pair would take both columns; one sure column is safe
    return tuple(sorted(lead))


def _follow(state: TienGowWallState, seat: int, open_column: float = OPEN_COLUMN) -> tuple[int, ...]:
    """The placement ``greedy`` plays: the tile for column 0, 1, ...  ``open_column``: what a column won
    counts when it is not sure (``OPEN_COLUMN``; another value for screening: ``greedy_with``)."""
    hand = state.hands[seat]
    cols = state.cols
    n = len(cols)
    if n == 1 and open_column >= 1:
        # two candidates: the cheapest tile and the cheapest that goes on top.  When they differ the first
        # loses its column and the second wins it, worth 50 or 100 against tile values of at most 1, so
        # the move is the cheapest beat if there is one, else the cheapest tile (no scores needed).  Both
        # are found by walking the faces cheapest first: ``in`` on the short hand is cheaper than ``min``
        # with a key.  (A smaller ``open_column``, for screening only, takes the general path below.)
        for f in CHEAPEST_ON[cols[0][-1] >> 2]:
            if f in hand:
                return (f,)
        for f in CHEAPEST:
            if f in hand:
                return (f,)
        # (not reached: the hand is not empty)
    tops = [c[-1] >> 2 for c in cols]
    # the hand cheapest first: the cheapest tile that beats a top is the first in this order that does, and
    # what is left after taking some out is still in this order (the spare tiles, weakest first)
    cheapest = sorted(hand, key=_RANK.__getitem__)
    # the columns some tile of the hand beats (the hand's strongest of the top's suit is stronger): every
    # subset wanting another column fails, so only these are tried
    strongest = (max(map(_MILITARY_STRENGTH.__getitem__, hand)), max(map(_CIVIL_STRENGTH.__getitem__, hand)))
    able = [i for i, t in enumerate(tops) if strongest[CIVIL[t]] > STRENGTH[t]]
    pair = state.pair if n == 2 else 0
    if not able and not pair:
        return tuple(cheapest[:n])  # the only candidate: the cheapest tiles, in column order
    candidates: list[tuple[int, ...]] = [tuple(cheapest[:n])]  # the empty subset
    # strongest tops first (stable: equal tops in column order)
    order = sorted(able, key=lambda i: -STRENGTH[tops[i]]) if len(able) > 1 else able
    for k in range(1, len(order) + 1):
        for wanted in combinations(order, k):
            rest = cheapest[:]
            chosen: list[tuple[int, int]] = []
            for i in wanted:
                on = ON[tops[i]]
                for f in rest:
                    if on[f]:
                        break
                else:
                    break
                chosen.append((i, f))
                rest.remove(f)
            else:
                # the spare tiles, weakest first, in the other columns: inserting the chosen tiles by column
                placed = rest[:n - k]
                for i, f in sorted(chosen):
                    placed.insert(i, f)
                candidates.append(tuple(placed))
    if pair:
        for a, b in combinations(hand, 2):
            if PAIR.get((a, b), 0) > pair:
                candidates.append((a, b))
    last = (seat + 1) % state.players == state.leader
    unseen_tops: list[int] | None = None  # worked out at the first column won, if not ``last``
    seen: set[tuple[int, ...]] = set()
    best: tuple[float, tuple[int, ...]] | None = None
    for faces in candidates:
        if faces in seen:
            continue  # the same score again: it cannot replace the best (strict ``>``)
        seen.add(faces)
        # the same float operations in the same order as ever (``sum`` of the values in column order, then
        # a bonus per column won in column order): equal scores are ties, and ties decide the move
        score = -sum(map(_VALUE.__getitem__, faces))
        by_pair = pair and PAIR.get((faces[0], faces[1]), 0) > pair
        # tile by tile only the columns in ``able`` can be won
        for i in range(n) if by_pair else able:
            f = faces[i]
            if by_pair or ON[tops[i]][f]:
                if last:
                    score += 100
                else:
                    if unseen_tops is None:
                        unseen_tops = _unseen_tops(state, seat)
                    score += 100 if STRENGTH[f] >= unseen_tops[CIVIL[f]] else open_column
        if best is None or score > best[0]:
            best = (score, faces)
    assert best is not None  # the empty subset always gives a placement
    return best[1]


def greedy(state: TienGowWallState, seat: int, rng: random.Random) -> Move:
    """One-ply choice for ``seat`` (which must be to move): see the module docstring."""
    if not state.cols:
        return lead_move(_lead(state, seat))
    return place_move(_follow(state, seat))


def _playout_with(explore: float, lead: Choice, follow: Choice) -> Policy:
    """The playout policy of ``lead`` and ``follow`` with a share ``explore`` of random moves (``playout``)."""

    def policy(state: TienGowWallState, rng: random.Random) -> Move:
        seat = state.turn
        if explore > 0.0 and rng.random() < explore:
            faces = random_faces(state, seat, rng)
            return place_move(faces) if state.cols else lead_move(faces)
        return place_move(follow(state, seat)) if state.cols else lead_move(lead(state, seat))

    return cast(Policy, policy)


#: the playouts' share of random moves: each seat's move in a playout is, with this chance, a random one
#: (``engine.tiengow_wall.random_faces``) instead of the greedy engine's.  The greedy engine's own moves make
#: every playout of a world the same game, so a root move was judged by one answer of the other seats per
#: world; 0.1 measured stronger than 0 at four players, at equal time as at equal iterations (docs/ai.md,
#: "The wall game's exploring playouts"), 0 before 2026-12-07
PLAYOUT_EXPLORE = 0.1


def playout(state: TienGowWallState, rng: random.Random) -> Move:
    """The search's playout move for the seat to move: with chance ``PLAYOUT_EXPLORE`` (one draw
    ``rng.random()`` per move) a random move (``engine.tiengow_wall.random_faces``: a single led, or the hand's
    tiles drawn for the columns), else the greedy engine's move (``greedy``) for that seat, from what that seat
    knows in the sampled world (its hand, the table, the tiles it has not seen).  An earlier policy judged
    tiles *safe* by the sampled world's actual hands (a clairvoyant model of every player) and measured
    weaker: docs/ai.md, "The wall variant"."""
    return _SHIPPED(state, rng)


#: the shipped playout policy, built once
_SHIPPED = _playout_with(PLAYOUT_EXPLORE, _lead, _follow)


#: ``rollout`` draws from its generator (``PLAYOUT_EXPLORE`` > 0): the paired root seeds one per world
#: (``ai.ismcts.paired_search``); a rollout of ``greedy_with(explore=0)`` never draws
ROLLOUT_DRAWS = PLAYOUT_EXPLORE > 0.0


#: ``rollout(state, rng)``: ``playout`` move after move until the current deal (game) ends, in one call, with
#: the same moves and draws as calling ``playout`` and ``apply`` in a loop (``engine.tiengow_wall.rollout_of``;
#: ``tests/test_rollouts.py`` plays both from thousands of sampled positions and compares the states and
#: the generators)
rollout = rollout_of(_lead, _follow, PLAYOUT_EXPLORE)


def greedy_with(*, middle: bool = True, open_column: float = OPEN_COLUMN,
                explore: float = PLAYOUT_EXPLORE) -> tuple[Greedy, Policy, Rollout]:
    """``greedy``, ``playout`` and ``rollout`` with other weights, for screening by self-play
    (``bench.variants``: ``greedy_wall``, ``ismcts_wall_playout``): ``middle`` the lead without a sure tile
    (else the weakest single), ``open_column`` what a column won that is not sure counts, ``explore`` the
    playouts' share of random moves (the greedy engine itself never explores).  The defaults are the
    engine's own; ``middle=False`` is the greedy engine of before 2026-12-06, and ``middle=False,
    explore=0`` the playouts of the search of before."""

    def lead(state: TienGowWallState, seat: int) -> tuple[int, ...]:
        return _lead(state, seat, middle)

    def follow(state: TienGowWallState, seat: int) -> tuple[int, ...]:
        return _follow(state, seat, open_column)

    def choose(state: TienGowWallState, seat: int, rng: random.Random) -> Move:
        return lead_move(lead(state, seat)) if not state.cols else place_move(follow(state, seat))

    return cast(Greedy, choose), _playout_with(explore, lead, follow), rollout_of(lead, follow, explore)


def move_class(state: TienGowWallState, move: Move) -> tuple[int, ...]:
    """The strategic class of ``move`` for the seat to move in ``state``: two moves of one class
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


# the functions take the wall's own state: the record serves this rule set's states only
HEURISTICS = register("tiengow_wall", Heuristics(
    greedy=cast(Greedy, greedy), playout=cast(Policy, playout), rollout=rollout, rollout_draws=ROLLOUT_DRAWS,
    distinct=cast(Distinct, distinct)))
