"""Tien Gow, the wall-and-dice variant for 2–4 players (Czech seed 003): the rules page
``docs/rules/tiengow_wall.md``.  Below, § numbers are the sections of the seed's own write-up (Tien Gow's §13) and
"decision" marks a project decision where the seed is silent; the rules page states every one of them.

What is implemented, with where it comes from:

* Deal (decision; §13.2-1): 4 players get 8 tiles each, 2 players 16 each; 3 players play without 4-2 and 2-1
  (30 tiles, 10 each).  Game ``g`` (from 0) shuffles the wall with ``random.Random(f"{seed}/{g}/deal")``; the
  opener takes the first ``h`` tiles of the wall, the next seat the next ``h``, and so on.  INTERPRETATION:
  the seed's "two stacks from either end, in turn" only reorders a uniformly shuffled wall, so it does not
  change which hands can occur or how likely they are.
* Dice (§13.1; decision): two dice from ``random.Random(f"{seed}/0/opener")``.  INTERPRETATION: seat 0 throws
  and counts that many players in turn order (seat + 1, ...), counting himself as 1; the seat where the count
  ends opens game 1.  A later game is opened by the winner of the previous game's last round (SEED).
* Leads (decision): any 1 to 4 tiles of the hand; each led tile starts a column.  Columns are numbered 0.. in the
  order the lead's id lists its tiles (high halves first).
* Following (decision): every other player in turn puts exactly one tile on every column, choosing which tile
  goes where.  A tile goes on top when it is of the same suit as the column's top tile and strictly higher;
  otherwise (different suit, equal or lower) it goes underneath, at the very bottom.  A column belongs to the
  owner of its top tile.  As singles 4-2 and 2-1 ("commander") rank above the nines in the military suit and
  are equal to each other (decision).
* Pai Gow pairs (decision; §13.2-4): when the lead is two tiles forming a Pai Gow pair (Supreme 4-2+2-1 >
  civil pairs in civil order > military pairs 9, 8, 7, 5), that pair *stands*.  A follower whose two tiles
  form a strictly higher Pai Gow pair than the standing pair puts both on top and takes both columns; his
  pair then stands.  INTERPRETATION (how later followers meet a pair that took over): the next follower must
  beat *that* pair, not the lead, to use the pair rule.  Any other play is settled tile by tile against the
  tops; as soon as one tile goes on top tile by tile the pair is broken and the rest of the round is settled
  tile by tile only.
* Next leader (decision): the owner of the most columns of the round; a tie is broken by a dice throw among
  the tied players: each throws two dice from ``random.Random(f"{seed}/{g}/{r}/tie")`` (``r`` the round of
  game ``g``, both from 0) in seat order, the highest total leads, and players still tied for the highest
  throw again (SEED "highest opens").
* Scoring (decision): one point per column won; ``games`` games (option, 1–100); the match ranks by points
  (equal points keep seat order).  ``running_payoffs`` = points minus the mean (zero-sum, as
  ``State.running_payoffs`` asks), cumulative.

Resigning (not in the sources): the match ends at once; every other seat scores one point per tile
left in the resigning seat's hand (the columns it could still have contested in this game; at least 1), the
games not played count for nothing.  The result's ``reason`` is ``"resigned"``; the resigning seat ranks last.

Hidden information: hands are hidden; everything on the table is public.  INTERPRETATION: tiles put
underneath are face up in this variant (the seed says nothing of turning tiles down), and the columns of
finished rounds are trophies laid open, so the view lists every tile played in the current game.
``determinize`` resamples the other hands from the tiles the seat has not seen (no constraint: nobody has to
follow suit) and replaces the seed, so the AI cannot foresee future deals or dice.

Speed: faces are renumbered 0..20 in the order ids list tiles (high halves first), hands are sorted lists of
those ints, a column is a list of ``face << 2 | seat`` ints (bottom to top) and moves are interned ``Move``
objects whose ``code`` is the tuple of faces (lead: in column order; place: the tile for column 0, 1, ...).
A move list is lazy: its length is counted from the hand's face counts and ``moves[i]`` builds only that
move, so a random playout does not build the ~26000 placements (or 2516 leads) of a 16-tile hand.  Memory: every cache
is bounded (sizes at the tables), as the engine lives in long-lived server and worker processes.

Search kit (``SEARCH_KIT``, at the end of the module): what ``ai/`` may use of this engine beyond the
protocol -- the tables (``BEATS``, ``CIVIL``, ``DECK_COUNTS``, ``NUM``, ``PAIR``, ``STRENGTH``), the
interned moves (``lead_move``, ``place_move``), ``rollout_of(lead, follow, explore)`` (a policy played to the
end of the game through the state's own ``_play``, with a share ``explore`` of random moves) and
``random_faces`` (such a random move's tiles).
"""

from __future__ import annotations

import copy
import math
import operator
import random
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations, permutations
from typing import Any, SupportsIndex, cast, overload

from engine.exceptions import BadState, IllegalMove, InvalidMove
from engine.game import (
    Event,
    Move,
    Option,
    RuleSet,
    Seat,
    State,
    event,
    mean_centered,
    ranking_from,
    register,
    resigned_ranking,
    shuffle,
)
from engine.tiles import (
    CF_CIVIL,
    CF_CIVIL_RANK,
    CF_COPIES,
    CF_HI,
    CF_LO,
    CF_MILITARY_CLASS,
    FACES,
    parse_chinese,
)

RULES_ID = "tiengow_wall"
MAX_LEAD = 4

# --------------------------------------------------------------------------- tile tables (local face ids)

#: local face id -> engine.tiles face, ordered as ids list tiles (6-6, 6-5, 6-4, 6-3, ..., 2-1, 1-1)
_TILES_FACE: tuple[int, ...] = tuple(sorted(FACES, key=lambda f: (-CF_HI[f], -CF_LO[f])))
NUM = len(_TILES_FACE)
NAME: tuple[str, ...] = tuple(f"{CF_HI[f]}-{CF_LO[f]}" for f in _TILES_FACE)
CIVIL: tuple[bool, ...] = tuple(CF_CIVIL[f] for f in _TILES_FACE)
COPIES: tuple[int, ...] = tuple(CF_COPIES[f] for f in _TILES_FACE)
_BY_NAME: dict[str, int] = {n: i for i, n in enumerate(NAME)}
BIG_SIX = _BY_NAME["4-2"]
LITTLE_THREE = _BY_NAME["2-1"]
COMMANDERS = (BIG_SIX, LITTLE_THREE)

#: single strength within its suit: civil 11 (6-6) .. 1 (5-1); military 9, 8, 7, 5 by pips and 10 for the
#: commanders 4-2 and 2-1 (a decision: above the nines, equal to each other)
STRENGTH: tuple[int, ...] = tuple(
    12 - CF_CIVIL_RANK[f] if CF_CIVIL[f] else (10 if i in COMMANDERS else CF_MILITARY_CLASS[f])
    for i, f in enumerate(_TILES_FACE)
)

#: BEATS[new][top]: ``new`` goes on top of ``top`` (same suit, strictly higher)
BEATS: tuple[tuple[bool, ...], ...] = tuple(
    tuple(CIVIL[a] == CIVIL[b] and STRENGTH[a] > STRENGTH[b] for b in range(NUM)) for a in range(NUM)
)


def _pair_table() -> dict[tuple[int, int], int]:
    """Pai Gow pair ranks (larger = better), keyed by both orders of the two faces."""
    ranks: dict[tuple[int, int], int] = {}

    def put(a: int, b: int, rank: int) -> None:
        ranks[(a, b)] = ranks[(b, a)] = rank

    put(BIG_SIX, LITTLE_THREE, 100)  # the Supreme
    for i, f in enumerate(_TILES_FACE):
        if CF_CIVIL[f]:
            put(i, i, 50 - CF_CIVIL_RANK[f])  # Heaven 49 .. Big Head Six 39
    for rank, (a, b) in ((4, ("6-3", "5-4")), (3, ("6-2", "5-3")), (2, ("5-2", "4-3")), (1, ("4-1", "3-2"))):
        put(_BY_NAME[a], _BY_NAME[b], rank)
    return ranks


#: PAIR[(a, b)]: Pai Gow pair rank of two tiles, absent when they are no pair
PAIR: dict[tuple[int, int], int] = _pair_table()

#: the tiles of a game by player count (counts per local face); 3 players play without 4-2 and 2-1
DECK_COUNTS: dict[int, tuple[int, ...]] = {
    n: tuple(0 if n == 3 and i in COMMANDERS else COPIES[i] for i in range(NUM)) for n in (2, 3, 4)
}
HAND_SIZE: dict[int, int] = {2: 16, 3: 10, 4: 8}


def parse_tile(text: str) -> int:
    """``"6-3"`` or ``"3-6"`` -> local face id; ``ValueError`` otherwise."""
    parse_chinese(text)  # raises a readable ValueError for anything that is not a Chinese tile
    return _BY_NAME[State.normalize_tile(text)]


def tile_names(faces: Sequence[int]) -> list[str]:
    return [NAME[f] for f in faces]


def pair_rank(a: int, b: int) -> int:
    """The Pai Gow pair rank of two tiles (0: they are no pair)."""
    return PAIR.get((a, b), 0)


# --------------------------------------------------------------------------- interned moves and caches
#
# The engine lives inside long-lived gunicorn and RQ worker processes, so every table here has a documented
# bound (a placement ``Move`` costs ~350 bytes: object, id, tiles tuple, key; its ``extra`` dict is shared).
# A 2-player follower with 16 tiles has up to ~26000 placements for a 4-tile lead (and a 16-tile leader 2516
# leads) while a random playout takes one of them, so a move list is a lazy list (``_Moves``): its length is
# counted from the hand's face counts and ``moves[i]`` builds just that move; anything else (iteration,
# slicing, comparison...) first fills it with every move, from the bounded per-tile-set tables below.

#: sorted tiles -> interned lead; bounded by the 9922 sub-multisets of 1 to 4 tiles of the set (~4 MB)
_LEAD_MOVES: dict[tuple[int, ...], Move] = {}
#: faces by column -> interned placement; emptied (with the two tables below) when it holds _PLACE_LIMIT.
#: The limit is just above the 178142 placements of up to four tiles of the set: a search at 3 or 4
#: players meets nearly all of them within minutes (fresh opponent hands every iteration), and emptying the
#: table then costs more than keeping it (measured: ~3x fewer iterations right after a clear).  Full, the
#: table and its companions hold ~65 MB; a process that only plays or runs random playouts builds only the
#: placements it picks (lazy lists), a few MB.
_PLACE_MOVES: dict[tuple[int, ...], Move] = {}
_PLACE_LIMIT = 200_000
#: sorted tiles -> every distinct placement of them (``dict.fromkeys(permutations(tiles))`` order); holds
#: interned placements only, so it is bounded with _PLACE_MOVES
_PLACEMENTS: dict[tuple[int, ...], tuple[Move, ...]] = {}
#: (hand, columns; 0 for a lead) -> the full move list, so that a search revisiting a position does not
#: rebuild it; holds interned moves only, emptied with _PLACE_MOVES or when it holds _LIST_REFS references
_LISTS: dict[tuple[tuple[int, ...], int], tuple[Move, ...]] = {}
_LIST_REFS = 300_000  # ~2.4 MB of references
_list_refs = 0
_clears = 0  # times _PLACE_MOVES was emptied: a list built across an emptying is not kept
#: sorted tiles -> its distinct orders (as ``_PLACEMENTS``), for ``moves[i]`` without building 24 moves;
#: emptied when it holds _ORDERS_LIMIT tile sets (~4 MB)
_ORDERS: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {}
_ORDERS_LIMIT = 5_000
#: "6-6>0" per (face, column), so that building a placement id is a few concatenations
_CELL: tuple[tuple[str, ...], ...] = tuple(tuple(f"{NAME[f]}>{i}" for i in range(MAX_LEAD)) for f in range(NUM))
#: the ``extra`` of placements, one shared dict per column count (read only, like its ``columns`` list)
_EXTRA: tuple[dict[str, Any], ...] = tuple({"columns": list(range(n))} for n in range(MAX_LEAD + 1))
#: binomial coefficients C[n][m] for n, m <= MAX_LEAD
_BINOM: tuple[tuple[int, ...], ...] = tuple(
    tuple(math.comb(n, m) for m in range(MAX_LEAD + 1)) for n in range(MAX_LEAD + 1))
#: move lists at most this long are built in full at once (the lazy list's bookkeeping would cost more)
_EAGER = 24


def lead_move(faces: tuple[int, ...]) -> Move:
    """The interned lead of ``faces`` (sorted local ids, i.e. in column order)."""
    m = _LEAD_MOVES.get(faces)
    if m is None:
        names = tuple(NAME[f] for f in faces)
        m = Move("lead:" + "+".join(names), "lead", names, code=faces)
        _LEAD_MOVES[faces] = m
    return m


def place_move(faces: tuple[int, ...]) -> Move:
    """The interned placement putting ``faces[i]`` on column ``i``."""
    m = _PLACE_MOVES.get(faces)
    if m is None:
        global _list_refs, _clears
        if len(_PLACE_MOVES) >= _PLACE_LIMIT:
            # the two other tables hold interned placements: emptied together, no table keeps a second copy
            # of a placement alive
            _PLACE_MOVES.clear()
            _PLACEMENTS.clear()
            _LISTS.clear()
            _list_refs = 0
            _clears += 1
        m = Move("place:" + "+".join([_CELL[f][i] for i, f in enumerate(faces)]), "place",
                 tuple([NAME[f] for f in faces]), code=faces)
        m.extra = _EXTRA[len(faces)]  # shared: ~200 bytes less per move than a dict of its own
        _PLACE_MOVES[faces] = m
    return m


def _orders(tiles: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    os = _ORDERS.get(tiles)
    if os is None:
        if len(_ORDERS) >= _ORDERS_LIMIT:
            _ORDERS.clear()
        # deduplicated in order: identical tiles give one placement
        os = _ORDERS[tiles] = tuple(dict.fromkeys(permutations(tiles)))
    return os


def _placements(tiles: tuple[int, ...]) -> tuple[Move, ...]:
    ms = _PLACEMENTS.get(tiles)
    if ms is None:
        clears = _clears
        get = _PLACE_MOVES.get
        ms = tuple([get(p) or place_move(p) for p in _orders(tiles)])
        if clears == _clears:  # not kept when the tables were emptied meanwhile: it may hold old copies
            _PLACEMENTS[tiles] = ms
    return ms


def _all_moves(hand: tuple[int, ...], columns: int) -> tuple[Move, ...]:
    """Every move of ``hand`` in legal order.  Leads (``columns`` 0): 1 to 4 tiles, the distinct tile sets
    of each size in ``combinations`` order.  Follows: the distinct tile sets of ``columns`` tiles in
    ``combinations`` order, each with its distinct orders in ``permutations`` order (both lexicographic, as
    the hand is sorted)."""
    global _list_refs
    key = (hand, columns)
    moves = _LISTS.get(key)
    if moves is None:
        clears = _clears
        if columns == 0:
            get = _LEAD_MOVES.get
            moves = tuple([get(c) or lead_move(c) for k in range(1, min(MAX_LEAD, len(hand)) + 1)
                           for c in dict.fromkeys(combinations(hand, k))])
        else:
            out: list[Move] = []
            extend = out.extend
            pget = _PLACEMENTS.get
            for c in dict.fromkeys(combinations(hand, columns)):
                extend(pget(c) or _placements(c))
            moves = tuple(out)
        if _list_refs + len(moves) > _LIST_REFS:
            _LISTS.clear()
            _list_refs = 0
        if len(moves) <= _LIST_REFS and clears == _clears:
            _LISTS[key] = moves
            _list_refs += len(moves)
    return moves


def _count_tables(weighted: bool) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``t[a][b][j]``: for a hand of ``a`` faces held once and ``b`` faces held twice, how many follows of
    ``j`` tiles (``weighted``: ordered, identical tiles counted once) or how many tile sets of ``j`` tiles
    there are.  It depends on nothing else, so a hand's counts never need a table of their own."""
    t = [[[0] * (MAX_LEAD + 1) for _b in range(NUM + 1)] for _a in range(NUM + 1)]
    for a in range(NUM + 1):
        for b in range(NUM + 1 - a):
            for j in range(MAX_LEAD + 1):
                if a:  # take off one face held once: used 0 or 1 times
                    t[a][b][j] = t[a - 1][b][j] + (j if weighted else 1) * (t[a - 1][b][j - 1] if j else 0)
                elif b:  # one face held twice: used 0, 1 or 2 times
                    v = t[a][b - 1]
                    t[a][b][j] = (v[j] + ((j if weighted else 1) * v[j - 1] if j else 0)
                                  + ((_BINOM[j][2] if weighted else 1) * v[j - 2] if j > 1 else 0))
                else:
                    t[a][b][j] = 1 if j == 0 else 0
    return tuple(tuple(tuple(row) for row in rows) for rows in t)


#: count tables of follows and of leads (see ``_count_tables``); 22 * 22 * 5 ints each
_FOLLOW_COUNT = _count_tables(True)
_LEAD_COUNT = _count_tables(False)
#: leads of a hand: its tile sets of 1 to MAX_LEAD tiles
_LEAD_TOTAL = tuple(tuple(sum(row[1:]) for row in rows) for rows in _LEAD_COUNT)


def _nth_move(hand: tuple[int, ...], columns: int, r: int) -> Move:
    """Move ``r`` of the move list of ``hand`` (0 <= r < its length) without building the others."""
    held = len(set(hand))
    b = len(hand) - held  # faces held twice (a face has at most two copies)
    a = held - b  # faces held once
    j = columns
    table = _FOLLOW_COUNT if columns else _LEAD_COUNT
    if not j:
        # leads: all sets of one tile, then of two, ...
        j = 1
        row = table[a][b]
        while r >= row[j]:
            r -= row[j]
            j += 1
    # the tile set: sets are ordered like their sorted tuples, so at a face the sets holding it m times come
    # first (most copies first) and those without it last, each run counted by the table of the faces
    # after it.  A follow's set spans its number of distinct orders; ``scale`` carries the multinomial
    # factor of the copies chosen so far
    tiles: list[int] = []
    scale = 1
    p = 0
    while j:
        f = hand[p]
        if p + 1 < len(hand) and hand[p + 1] == f:
            p += 2
            b -= 1
            m = 2 if j > 1 else 1
        else:
            p += 1
            a -= 1
            m = 1
        nxt = table[a][b]
        bj = _BINOM[j]
        while m:
            size = scale * bj[m] * nxt[j - m] if columns else nxt[j - m]
            if r < size:
                break
            r -= size
            m -= 1
        if m:
            if columns:
                scale *= bj[m]
            tiles.append(f)
            if m > 1:
                tiles.append(f)
            j -= m
    key = tuple(tiles)
    if not columns:
        return _LEAD_MOVES.get(key) or lead_move(key)
    # ``r`` now counts among the set's distinct orders
    order = _orders(key)[r]
    return _PLACE_MOVES.get(order) or place_move(order)


def _materialized(name: str) -> Any:
    base = getattr(list, name)

    def method(self: _Moves, *args: Any, **kwargs: Any) -> Any:
        if self._hand is not None:
            self._fill()
        for other in args:
            # list's own code reads another list's storage directly (``a == b``, ``a + b``, ``a[i:j] = b``)
            if type(other) is _Moves and other._hand is not None:
                other._fill()
        return base(self, *args, **kwargs)

    method.__name__ = name
    return method


class _Moves(list[Move]):
    """The move list of a hand, lazy: ``len()`` and ``moves[i]`` work without building the list (what a
    random playout does); every other list operation first fills it, after which it is a plain list.  Its
    contents, order and ids are exactly those of the filled list."""

    __slots__ = ("_columns", "_hand", "_len")

    _hand: tuple[int, ...] | None
    _columns: int
    _len: int

    def _fill(self) -> None:
        hand = self._hand
        assert hand is not None
        self._hand = None
        list.extend(self, _all_moves(hand, self._columns))

    def __len__(self) -> int:
        return self._len if self._hand is not None else list.__len__(self)

    @overload
    def __getitem__(self, i: SupportsIndex) -> Move: ...

    @overload
    def __getitem__(self, i: slice) -> list[Move]: ...

    def __getitem__(self, i: SupportsIndex | slice) -> Move | list[Move]:
        hand = self._hand
        if hand is not None and not isinstance(i, slice):
            r = operator.index(i)
            if r < 0:
                r += self._len
            if not 0 <= r < self._len:
                raise IndexError("list index out of range")
            return _nth_move(hand, self._columns, r)
        if hand is not None:
            self._fill()
        return list.__getitem__(self, i)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (list, (list(self),))  # pickles and copies as a plain list

    def __radd__(self, other: list[Move]) -> list[Move]:
        return [*other, *self]


for _name in ("__iter__", "__reversed__", "__contains__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
              "__ge__", "__add__", "__mul__", "__rmul__", "__iadd__", "__imul__", "__repr__", "__setitem__",
              "__delitem__", "__sizeof__", "copy", "index", "count", "sort", "reverse", "pop", "insert",
              "append", "extend", "remove", "clear"):
    setattr(_Moves, _name, _materialized(_name))


def _moves(hand: tuple[int, ...], columns: int) -> list[Move]:
    """The legal moves of ``hand``: a lead (``columns`` 0) or a follow on ``columns`` columns."""
    held = len(set(hand))
    b = len(hand) - held
    total = _FOLLOW_COUNT[held - b][b][columns] if columns else _LEAD_TOTAL[held - b][b]
    if total <= _EAGER:
        return list(_all_moves(hand, columns))  # a copy: callers may sort or shuffle it
    moves = _Moves()
    moves._hand = hand
    moves._columns = columns
    moves._len = total
    return moves


# --------------------------------------------------------------------------- the state

def _dice(rng: random.Random) -> tuple[int, int]:
    return rng.randint(1, 6), rng.randint(1, 6)


class TienGowWallState(State):
    """One match of the wall variant; fields are ints and lists (see the module docstring)."""

    move_fields = State.move_fields | {"columns"}

    games: int
    game: int  # current game, from 0 (== games when finished)
    round_no: int  # round within the game, from 0
    opener: int  # who opened the current game
    leader: int  # who leads the current round
    turn: int  # seat to act, -1 when the match is over
    hands: list[list[int]]  # sorted local face ids
    cols: list[list[int]]  # current round: face << 2 | seat, bottom to top
    pair: int  # rank of the standing Pai Gow pair, 0 when none stands
    out: list[int]  # counts per face of the tiles of finished rounds of this game
    points: list[int]
    game_cols: list[int]  # columns won in the current game
    deals: list[dict[str, Any]]  # finished games (never mutated once appended)
    last_cols: list[list[int]] | None  # the previous round's columns (never mutated once stored)
    last_won: list[int] | None  # columns per seat in the previous round
    dice: dict[str, Any] | None  # the latest dice throw (never mutated once stored)

    # ---- construction

    @classmethod
    def _blank(cls, players: int, seed: int, options: dict[str, Any]) -> TienGowWallState:
        s = cls.__new__(cls)
        s.players = players
        s.seed = seed
        s.options = dict(options)
        s.games = options["games"]
        s.game = 0
        s.round_no = 0
        s.opener = s.leader = s.turn = 0
        s.hands = [[] for _ in range(players)]
        s.cols = []
        s.pair = 0
        s.out = [0] * NUM
        s.points = [0] * players
        s.game_cols = [0] * players
        s.deals = []
        s.last_cols = None
        s.last_won = None
        s.dice = None
        return s

    @classmethod
    def new(cls, players: int, seed: int, options: dict[str, Any]) -> TienGowWallState:
        s = cls._blank(players, seed, options)
        rng = random.Random(f"{seed}/0/opener")
        d1, d2 = _dice(rng)
        opener = (d1 + d2 - 1) % players  # seat 0 throws and counts himself as 1
        s.dice = {"purpose": "first leader", "game": 1, "round": 1, "thrower": 0,
                  "throws": [[[0, d1, d2]]], "winner": opener}
        s._deal(opener)
        return s

    @classmethod
    def from_hands(cls, hands: Sequence[Sequence[str]], *, leader: int, games: int = 1,
                   seed: int = 0) -> TienGowWallState:
        """A game 1 position from chosen hands (tests, puzzles): ``leader`` leads its first round.  Tiles of the
        player count's set that are in no hand count as played in earlier rounds of this game."""
        n = len(hands)
        opts = cls.rules.validate_options({"games": games}, n)
        s = cls._blank(n, seed, opts)
        s.hands = [sorted(parse_tile(t) for t in h) for h in hands]
        if not 0 <= leader < n:
            raise ValueError(f"leader must be a seat 0..{n - 1}, not {leader!r}")
        if len({len(h) for h in s.hands}) != 1 or not s.hands[0]:
            raise ValueError("every hand must hold the same number of tiles, at least one")
        deck = DECK_COUNTS[n]
        for f in range(NUM):
            held = sum(h.count(f) for h in s.hands)
            if held > deck[f]:
                raise ValueError(f"{NAME[f]} is held {held} times; the {n}-player set has {deck[f]}")
            s.out[f] = deck[f] - held
        s.opener = s.leader = s.turn = leader
        return s

    def _deal(self, opener: int) -> None:
        n = self.players
        wall = [f for f in range(NUM) for _ in range(DECK_COUNTS[n][f])]
        random.Random(f"{self.seed}/{self.game}/deal").shuffle(wall)
        h = HAND_SIZE[n]
        for i in range(n):
            self.hands[(opener + i) % n] = sorted(wall[i * h:(i + 1) * h])
        self.out = [0] * NUM
        self.game_cols = [0] * n
        self.round_no = 0
        self.opener = self.leader = self.turn = opener

    def clone(self) -> TienGowWallState:
        s = self.__class__.__new__(self.__class__)
        s.players = self.players
        s.seed = self.seed
        s.options = self.options  # never mutated after construction
        s.games = self.games
        s.game = self.game
        s.round_no = self.round_no
        s.opener = self.opener
        s.leader = self.leader
        s.turn = self.turn
        s.hands = [h[:] for h in self.hands]
        s.cols = [c[:] for c in self.cols]
        s.pair = self.pair
        s.out = self.out[:]
        s.points = self.points[:]
        s.game_cols = self.game_cols[:]
        s.deals = self.deals[:]
        s.last_cols = self.last_cols
        s.last_won = self.last_won
        s.dice = self.dice
        return s

    # ---- serialization

    @staticmethod
    def _cols_data(cols: list[list[int]]) -> list[list[list[Any]]]:
        return [[[NAME[c >> 2], c & 3] for c in col] for col in cols]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": RULES_ID, "version": 1, "players": self.players, "seed": self.seed,
            "options": dict(self.options), "game": self.game, "round": self.round_no, "opener": self.opener,
            "leader": self.leader, "turn": self.turn,
            "hands": [tile_names(h) for h in self.hands],
            "columns": self._cols_data(self.cols), "pair": self.pair,
            "out": [NAME[f] for f in range(NUM) for _ in range(self.out[f])],
            "points": self.points[:], "game_columns": self.game_cols[:],
            "deals": [dict(d, columns=list(d["columns"])) for d in self.deals],
            "last_round": None if self.last_cols is None else {
                "columns": self._cols_data(self.last_cols), "won": list(self.last_won or [])},
            "dice": copy.deepcopy(self.dice),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TienGowWallState:
        if d.get("rules") != RULES_ID or d.get("version") != 1:
            raise BadState(f"not a version 1 {RULES_ID} state")
        try:
            n = d["players"]
            opts = cls.rules.validate_options(d["options"], n)
            s = cls._blank(n, int(d["seed"]), opts)

            def col_list(data: Sequence[Sequence[Sequence[Any]]]) -> list[list[int]]:
                out = []
                for col in data:
                    cells = []
                    for t, seat in col:
                        if type(seat) is not int or not 0 <= seat < n:
                            raise ValueError(f"bad seat {seat!r}")
                        cells.append(parse_tile(t) << 2 | seat)
                    out.append(cells)
                return out

            s.game, s.round_no = int(d["game"]), int(d["round"])
            s.opener, s.leader, s.turn = int(d["opener"]), int(d["leader"]), int(d["turn"])
            s.hands = [sorted(parse_tile(t) for t in h) for h in d["hands"]]
            s.cols = col_list(d["columns"])
            s.pair = int(d["pair"])
            s.out = [0] * NUM
            for t in d["out"]:
                s.out[parse_tile(t)] += 1
            s.points = [int(p) for p in d["points"]]
            s.game_cols = [int(p) for p in d["game_columns"]]
            s.deals = [dict(x, columns=[int(c) for c in x["columns"]]) for x in d["deals"]]
            last = d["last_round"]
            if last is not None:
                s.last_cols = col_list(last["columns"])
                s.last_won = [int(w) for w in last["won"]]
            s.dice = copy.deepcopy(d["dice"])
            if len(s.hands) != n or len(s.points) != n or len(s.game_cols) != n or not -1 <= s.turn < n:
                raise ValueError("per-seat lists do not match the player count")
        except BadState:
            raise
        except Exception as e:  # any shape error in stored data is a BadState
            raise BadState(f"cannot read {RULES_ID} state: {e}") from None
        return s

    # ---- moves

    @property
    def to_move(self) -> Seat | None:
        return None if self.turn < 0 else self.turn

    @property
    def finished(self) -> bool:
        return self.turn < 0

    def legal_moves(self) -> list[Move]:
        if self.turn < 0:
            return []
        return _moves(tuple(self.hands[self.turn]), len(self.cols))

    def canonical_move_id(self, move_id: str) -> str:
        """``lead:t+t`` with tiles in any order and halves either way; ``place:t>c+t>c`` with the pairs in any
        order (listed by column in the canonical id)."""
        action, _, rest = move_id.partition(":")
        if action == "lead" and rest:
            try:
                tiles = sorted(parse_tile(t) for t in rest.split("+"))
            except ValueError as e:
                raise InvalidMove(f"{move_id!r}: {e}") from None
            return "lead:" + "+".join(NAME[f] for f in tiles)
        if action == "place" and rest:
            pairs = []
            for part in rest.split("+"):
                tile, sep, col = part.partition(">")
                if not sep or not col.strip().isdigit():
                    raise InvalidMove(f"{move_id!r}: write each placement as tile>column, e.g. 'place:6-6>0'")
                try:
                    pairs.append((int(col), parse_tile(tile)))
                except ValueError as e:
                    raise InvalidMove(f"{move_id!r}: {e}") from None
            pairs.sort()
            if [c for c, _ in pairs] != list(range(len(pairs))):
                raise IllegalMove(f"{move_id!r}: put exactly one tile on every column 0..{len(pairs) - 1}")
            return "place:" + "+".join(f"{NAME[f]}>{c}" for c, f in pairs)
        return super().canonical_move_id(move_id)

    def _match_object(self, spec: Mapping[str, Any], legal: list[Move]) -> Move:
        # a placement object pairs tiles[i] with columns[i]; rebuild its id instead of matching fields
        if "id" not in spec and spec.get("action") == "place" and "columns" in spec:
            tiles, cols = spec.get("tiles"), spec.get("columns")
            if (not isinstance(tiles, list) or not isinstance(cols, list) or len(tiles) != len(cols)
                    or not all(isinstance(t, str) for t in tiles) or not all(type(c) is int for c in cols)):
                raise InvalidMove("a placement needs 'tiles' and 'columns' lists of the same length")
            return self.find_move("place:" + "+".join(f"{t}>{c}" for t, c in zip(tiles, cols, strict=True)))
        return super()._match_object(spec, legal)

    def _apply(self, move: Move, log: list[Event] | None = None) -> None:
        self._play(move.code, log)

    #: ``apply`` is ``_apply`` itself (``log`` defaults to ``None``): the search path saves a call per move
    apply = _apply

    def _play(self, faces: tuple[int, ...], log: list[Event] | None = None) -> None:
        """``_apply`` of the move whose ``code`` is ``faces``: the greedy rollout plays tiles without building
        moves (``ai.heuristics.tiengow_wall.rollout``)."""
        s = self.turn
        hand = self.hands[s]
        for f in faces:
            hand.remove(f)
        if not self.cols:
            self.cols = [[f << 2 | s] for f in faces]
            self.pair = PAIR.get((faces[0], faces[1]), 0) if len(faces) == 2 else 0
            if log is not None:
                log.append(event("lead", s, tiles=tile_names(faces), pair=self.pair > 0))
        else:
            cols = self.cols
            by_pair = False
            if self.pair and len(faces) == 2 and PAIR.get((faces[0], faces[1]), 0) > self.pair:
                self.pair = PAIR[(faces[0], faces[1])]
                cols[0].append(faces[0] << 2 | s)
                cols[1].append(faces[1] << 2 | s)
                by_pair = True
                on_top = [True, True]
            else:
                on_top = []
                for i, f in enumerate(faces):
                    col = cols[i]
                    if BEATS[f][col[-1] >> 2]:
                        col.append(f << 2 | s)
                        self.pair = 0  # a column taken tile by tile breaks the standing pair
                        on_top.append(True)
                    else:
                        col.insert(0, f << 2 | s)
                        on_top.append(False)
            if log is not None:
                log.append(event("place", s, by_pair=by_pair, placements=[
                    {"column": i, "tile": NAME[f], "on_top": on_top[i]} for i, f in enumerate(faces)]))
        nxt = s + 1 if s + 1 < self.players else 0
        if nxt == self.leader:
            self._end_round(log)
        else:
            self.turn = nxt

    def _end_round(self, log: list[Event] | None) -> None:
        n = self.players
        won = [0] * n
        out = self.out
        for col in self.cols:
            won[col[-1] & 3] += 1
            for c in col:
                out[c >> 2] += 1
        for p in range(n):
            self.points[p] += won[p]
            self.game_cols[p] += won[p]
        best = max(won)
        tied = [p for p in range(n) if won[p] == best]
        winner = tied[0] if len(tied) == 1 else self._tie_break(tied)
        self.last_cols, self.last_won = self.cols, won
        self.cols = []
        self.pair = 0
        if log is not None:
            log.append(event("round", None, game=self.game + 1, round=self.round_no + 1, won=won,
                             next_leader=winner, dice=copy.deepcopy(self.dice) if len(tied) > 1 else None))
        self.round_no += 1
        if self.hands[0]:
            self.leader = self.turn = winner
            return
        self.deals.append({"game": self.game + 1, "opener": self.opener, "columns": self.game_cols[:],
                           "last_round_winner": winner})
        if log is not None:
            log.append(event("game_end", None, game=self.game + 1, columns=self.game_cols[:],
                             points=self.points[:]))
        self.game += 1
        if self.game >= self.games:
            self.turn = -1
            self.leader = winner
            if log is not None:
                log.append(event("match_end", None, **self.result()))
            return
        if self.halt_at_deal_end:
            self.turn = -1
            return
        self._deal(winner)
        if log is not None:
            log.append(event("deal", None, game=self.game + 1, opener=winner,
                             hand_size=len(self.hands[0]),
                             secret={p: {"hand": tile_names(self.hands[p])} for p in range(n)}))

    def _tie_break(self, tied: list[int]) -> int:
        """Each tied player throws two dice (seat order); the highest leads; those tied on top throw again."""
        rng = random.Random(f"{self.seed}/{self.game}/{self.round_no}/tie")
        throws: list[list[list[int]]] = []
        contenders = tied
        while len(contenders) > 1:
            this = [[p, *_dice(rng)] for p in contenders]
            throws.append(this)
            top = max(t[1] + t[2] for t in this)
            contenders = [t[0] for t in this if t[1] + t[2] == top]
        self.dice = {"purpose": "tie", "game": self.game + 1, "round": self.round_no + 1, "tied": tied,
                     "throws": throws, "winner": contenders[0]}
        return contenders[0]

    # ---- information

    def unseen_counts(self, seat: Seat) -> list[int]:
        """Per local face: copies ``seat`` has not seen (in the other hands)."""
        # the deck less the tiles out of play, in C (the greedy engine asks this at every move of a playout)
        counts = list(map(operator.sub, DECK_COUNTS[self.players], self.out))
        for col in self.cols:
            for c in col:
                counts[c >> 2] -= 1
        for f in self.hands[seat]:
            counts[f] -= 1
        return counts

    def _columns_view(self, cols: list[list[int]]) -> list[dict[str, Any]]:
        return [{"tiles": [{"tile": NAME[c >> 2], "seat": c & 3} for c in col], "owner": col[-1] & 3}
                for col in cols]

    def view(self, seat: Seat | None) -> dict[str, Any]:
        n = self.players
        standing = None
        if self.pair and len(self.cols) == 2:
            standing = {"tiles": [NAME[self.cols[0][-1] >> 2], NAME[self.cols[1][-1] >> 2]],
                        "seat": self.cols[0][-1] & 3}
        return {
            "rules": RULES_ID, "players": n, "to_move": self.to_move, "finished": self.finished, "you": seat,
            "hand": None if seat is None else tile_names(self.hands[seat]),
            "seats": [{"seat": p, "hand_size": len(self.hands[p]), "score": self.points[p],
                       "columns": self.game_cols[p]} for p in range(n)],
            "table": {
                "game": min(self.game + 1, self.games), "games": self.games, "round": self.round_no + 1,
                "opener": self.opener, "leader": self.leader,
                "columns": self._columns_view(self.cols), "standing_pair": standing,
                "played": [NAME[f] for f in range(NUM) for _ in range(self.out[f])],
                "last_round": None if self.last_cols is None else {
                    "columns": self._columns_view(self.last_cols), "won": list(self.last_won or [])},
                "dice": copy.deepcopy(self.dice),
                "points": self.points[:],
            },
            "result": self.result() if self.finished else None,
        }

    def determinize(self, seat: Seat, rng: random.Random) -> TienGowWallState:
        counts = self.unseen_counts(seat)
        pool = [f for f in range(NUM) for _ in range(counts[f])]
        shuffle(pool, rng)
        world = self.clone()
        i = 0
        for p in range(self.players):
            if p != seat:
                k = len(self.hands[p])
                world.hands[p] = sorted(pool[i:i + k])
                i += k
        world.seed = rng.getrandbits(63)
        return world

    # ---- scoring

    @property
    def deals_done(self) -> int:
        return len(self.deals)

    def running_payoffs(self) -> list[float]:
        return mean_centered([float(p) for p in self.points])

    def result(self) -> dict[str, Any]:
        resigned = self.deals[-1].get("resigned") if self.deals else None
        ranking = ranking_from([float(p) for p in self.points])
        out = {
            "reason": f"all {self.games} games played" if self.finished else None,
            "scores": self.points[:],
            "payoffs": self.running_payoffs(),
            "ranking": ranking,
            "deals": [dict(d, columns=list(d["columns"])) for d in self.deals],
        }
        if resigned is not None:
            out.update(reason="resigned", resigned=resigned, ranking=resigned_ranking(ranking, [resigned]))
        return out

    def _resign(self, seat: Seat, log: list[Event]) -> None:
        """Every other seat scores one point per tile left in the resigning seat's hand (at least one)."""
        forfeit = max(1, len(self.hands[seat]))
        for p in range(self.players):
            if p != seat:
                self.points[p] += forfeit
        self.deals.append({"game": self.game + 1, "opener": self.opener, "columns": self.game_cols[:],
                           "last_round_winner": None, "resigned": seat, "forfeit": forfeit})
        self.turn = -1
        log.append(event("resign", seat, forfeit=forfeit, points=self.points[:]))
        log.append(event("match_end", None, **self.result()))


RULES_ENTRY = register(RuleSet(
    id=RULES_ID,
    title="Tien Gow (wall and dice)",
    min_players=2,
    max_players=4,
    options=(Option("games", int, 1, "games in the match; the winner of a game's last round opens the next",
                    minimum=1, maximum=100),),
    state_class=TienGowWallState,
    description="Czech seed 003: columns built tile by tile, Pai Gow pairs, one point per column won.",
    default_players=4,
    variants=((2, {"games": 2}), (3, {"games": 2}), (4, {"games": 2})),
))


# --------------------------------------------------------------------------- search kit
# What ``ai/`` may use of this engine beyond the protocol (``SEARCH_KIT``): tables to read, and a rollout
# that plays a search's sampled world on the state's own fields, built for a policy.

#: a policy's tiles for the seat to move: ``(state, seat) -> faces`` (a lead, or a placement in column order)
Choice = Callable[["TienGowWallState", Seat], tuple[int, ...]]


def rollout_of(lead: Choice, follow: Choice, explore: float = 0.0) -> Callable[[State, random.Random], None]:
    """``rollout(state, rng)``: the seat to move leads ``lead(state, seat)`` on an empty table and places
    ``follow(state, seat)`` on a table of columns, move after move until the current deal (game) ends, in one
    call: the same moves as applying ``lead_move(lead(state, seat))`` or ``place_move(follow(state, seat))``
    in a loop, without the loop's per-move overhead (``to_move``, ``deals_done``, the interned ``Move``): the
    tiles are played through ``apply``'s own code (``_play``).  ``explore`` > 0: before each move one draw
    ``rng.random()``; below ``explore`` the seat plays a random move instead (``random_faces``).  With
    ``explore`` 0 ``rng`` is not drawn from."""

    def rollout(state: State, rng: random.Random) -> None:
        st = cast(TienGowWallState, state)
        play = st._play
        deals = st.deals  # appended to in place at the end of a game
        deal = len(deals)
        draw = rng.random  # called only when ``explore`` > 0
        while st.turn >= 0 and len(deals) == deal:
            t = st.turn
            if explore > 0.0 and draw() < explore:
                play(random_faces(st, t, rng))
            else:
                play(follow(st, t) if st.cols else lead(st, t))

    return rollout


def random_faces(state: TienGowWallState, seat: Seat, rng: random.Random) -> tuple[int, ...]:
    """A random move's tiles for ``seat`` (to move): on an empty table one tile of the hand led alone
    (``rng.choice``), on a table of columns the hand's tiles drawn for the columns in order (``rng.sample``,
    so every placement of distinct tiles is as likely).  A playout's exploring move (``rollout_of``)."""
    hand = state.hands[seat]
    return tuple(rng.sample(hand, len(state.cols))) if state.cols else (rng.choice(hand),)


#: the names ``ai/`` may use of this module besides the ``State`` protocol: the search kit
SEARCH_KIT = ("BEATS", "CIVIL", "Choice", "DECK_COUNTS", "NUM", "PAIR", "STRENGTH", "TienGowWallState", "lead_move",
              "place_move", "random_faces", "rollout_of")
