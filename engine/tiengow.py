"""Tien Gow (天九), four players, seeds 001/004: the rules page ``docs/rules/tiengow.md`` (its §0–§12 are
the sections cited below), with its options and **Choice** decisions.

What is implemented, with the section it comes from:

* Deal (§2): each deal shuffles the 32 tiles with ``random.Random(f"{seed}/{deal}")`` (``deal`` counts from 0)
  and gives 8 to each seat.  The first banker is drawn from the same generator of deal 0; a later deal's
  banker is the previous deal's last-trick winner.  The banker leads the first trick.
* Seats are numbered in turn order: the next player is ``seat + 1 (mod 4)`` (a decision; this fixes the
  counter-clockwise direction of §1).
* Leads (§3, §4): singles, civil pairs, military pairs, the Supreme (4-2 + 2-1), mixed pairs, both kinds of
  mixed triples (2 civil + 1 military, 1 civil + 2 military) and mixed quartets.  The *type key* is the group
  type, which already fixes the civil/military counts.
* Following (§5): a follower either beats the current high group (same type key, strictly higher rank, played
  face up: ``play:...``) or discards any ``n`` tiles face down (``discard:...``, one move per distinct multiset
  of faces).  Ties lose, so an equal group is only available as a discard.  Discarding a group that could beat
  is allowed (SEED).
* The Supreme (§6) wins only when led; a follower holding both tiles can only discard them.
* Early death (§7, option ``early_death``): on a singleton last trick, a follower with no column has only the
  discard of his last tile.
* Columns (§5): the trick winner gets ``n`` columns and leads next.
* Immediate payments (§9.1): Supreme 2, quartet 4 from each opponent, ×2 when the winner or the payer is the
  banker; option ``supreme_money_on_last_trick`` (false: a Supreme winning the last trick earns no Supreme
  money, [WIKI-ZH] 包尊).  Quartet money is always paid.
* Final settlement (§9.2–§9.5 exactly): ``a = 5 if c == 0 else 4 - c``, banker doubling (option
  ``banker_excess_doubled``), final-group multipliers (quartet, Supreme, single 2-1 winning), sweep ×2, and the
  Little-Three capture with option ``capture_multiplier`` (multiplies only what the captured leader pays for
  the two uninvolved players).
* Profile ``classic`` (§12): no immediate payments, no final-group multipliers, no capture; the banker factor
  escalates: ×2 for a new banker, ×3 after the banker won one deal as banker, ×4 after two, ... and resets when
  he loses the bank.  INTERPRETATIONS for how ``classic`` meets the other options:
  - the sweep ×2 is kept (the decisions list only immediate payments, final-group multipliers and capture as removed);
  - ``early_death`` and ``banker_excess_doubled`` keep their meaning (with ``false`` a losing banker's excess
    is paid at ×1 instead of the escalated factor);
  - ``supreme_money_on_last_trick`` and ``capture_multiplier`` have nothing to act on, so a non-default value
    with ``classic`` is refused with ``BadOptions`` naming the option rather than silently ignored.
  - escalation needs several deals: with ``deals`` 1 the factor is always ×2.
* Match (§10 and a decision): ``deals`` deals; points are cumulative net points; the ranking is by points.
* Resigning (not in the sources): the deal in progress is abandoned -- payments already made in it
  stand -- and the resigning seat pays every other seat what a column-less loser pays in a plain settlement
  (§9.2: 5), times the banker factor when the banker is the resigning seat or the one paid (§9.5).  The
  result's ``reason`` is ``"resigned"``; the resigning seat ranks last.

Hidden information: face-down discards are seen only by their owner; every other seat sees their count
(``Move.seen`` of a discard is ``"discard:<n> face down"``, what ``observed_id`` gives the other seats).
``determinize`` resamples the other seats' hands and face-down discards from the tiles the seat has not seen.

Speed: hands are sorted tuples of face ids; legal move lists and hand-after-move tuples are cached in
module-level dicts; moves are interned ``Move`` objects whose ``code`` carries
``(face_up, faces, group type, rank, situation key)``.  Because every ISMCTS iteration deals fresh hands
that the caches have never seen, generation itself is cheap too: a hand's face counts packed into one int
test group containment with one subtraction, per-situation tables list the groups that can beat, and lead
groups come from small tables keyed by masked counts.

Search kit (``SEARCH_KIT``, at the end of the module): what ``ai/`` may use of this engine beyond the
protocol -- the move caches and tables (``moves_for``, ``leads_for``, ``beats_for``, ``BEAT_RUN1``,
``DISCARD1``, ``discard_of``), ``follow_of(state)`` (a follower's beats, hand and discard size, without its
discards), ``observer(discard)`` (another seat's tree node in one call, with the policy's
choice of face-down discard), ``rollout_of(playout, cheapest_beat=, last_discard=, lead=)`` (the policy
played to the end of the deal on the state's own fields; ``lead``: the policy's lead of a hand, where it does
not lead uniformly), ``hand_names`` and, on the state, ``rearranged(hands, face_down)`` (a
copy with the hidden tiles placed elsewhere: an inference's opponent model).
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any, cast

from engine.exceptions import BadOptions, BadState
from engine.game import (
    Event,
    Move,
    Option,
    RuleSet,
    Seat,
    State,
    below,
    event,
    play_to_deal_end,
    ranking_from,
    register,
    resigned_ranking,
    shuffle,
)
from engine.tiles import (
    BIG_SIX,
    CF_CIVIL,
    CF_COPIES,
    CF_HI,
    CF_LO,
    CF_MILITARY_CLASS,
    CF_NAME,
    CF_STRENGTH,
    EARTH,
    FACES,
    GOOSE,
    HEAVEN,
    LITTLE_THREE,
    MAN,
    MILITARY_FACES,
    Face,
    chinese_set,
    parse_chinese,
)

PLAYERS = 4
HAND_SIZE = 8

# --------------------------------------------------------------------------- groups (§3)

# Group types; each fixes the type key (type, C, M) of §4.
SINGLE_CIVIL, SINGLE_MILITARY, PAIR_CIVIL, PAIR_MILITARY, SUPREME, MIXED_PAIR, TRIPLE_2C1M, TRIPLE_1C2M, QUARTET = (
    range(9))
GROUP_TYPE_NAMES: tuple[str, ...] = (
    "civil_single", "military_single", "civil_pair", "military_pair", "supreme", "mixed_pair",
    "triple_2c1m", "triple_1c2m", "quartet")

#: mixed-group families (§3): civil face, its military class, family strength (Heaven-nine highest)
_FAMILIES: tuple[tuple[Face, int, int], ...] = ((HEAVEN, 9, 4), (EARTH, 8, 3), (MAN, 7, 2), (GOOSE, 5, 1))


def _military_of_class(cls: int) -> tuple[Face, ...]:
    return tuple(f for f in MILITARY_FACES if CF_MILITARY_CLASS[f] == cls)


def _build_groups() -> list[tuple[tuple[Face, ...], int, int]]:
    """Every legal group as (faces sorted by id, type, rank within the type; larger = better)."""
    out: list[tuple[tuple[Face, ...], int, int]] = []
    for f in FACES:
        out.append(((f,), SINGLE_CIVIL if CF_CIVIL[f] else SINGLE_MILITARY, CF_STRENGTH[f]))
    for f in FACES:
        if CF_CIVIL[f]:
            out.append(((f, f), PAIR_CIVIL, CF_STRENGTH[f]))
    for cls in (9, 8, 7, 5):
        a, b = _military_of_class(cls)
        out.append(((a, b), PAIR_MILITARY, cls))
    out.append(((BIG_SIX, LITTLE_THREE), SUPREME, 0))
    for civil, cls, rank in _FAMILIES:
        for m in _military_of_class(cls):
            out.append(((civil, m), MIXED_PAIR, rank))
    for civil, cls, rank in _FAMILIES:
        for m in _military_of_class(cls):
            out.append(((civil, civil, m), TRIPLE_2C1M, rank))
    for civil, cls, rank in _FAMILIES:
        out.append((tuple(sorted((civil, *_military_of_class(cls)))), TRIPLE_1C2M, rank))
    for civil, cls, rank in _FAMILIES:
        out.append((tuple(sorted((civil, civil, *_military_of_class(cls)))), QUARTET, rank))
    return out


_GROUP_LIST = _build_groups()
#: faces (sorted by id) -> (type, rank) for every legal group
GROUPS: dict[tuple[Face, ...], tuple[int, int]] = {g: (t, r) for g, t, r in _GROUP_LIST}

#: ``range(copies)`` by count: expanding counts back into tiles without building a range per face
_RANGES: tuple[range, ...] = tuple(range(c) for c in range(3))

_LEAD = -1  # situation key: the player to move leads
_DEAD = -2  # situation key: early death, only the discard of the last tile


def _sit(gtype: int, rank: int) -> int:
    """Situation key of a follower facing a high group of ``gtype``/``rank`` (a small int for cache keys)."""
    return gtype * 32 + rank


def _sort_key(f: Face) -> tuple[int, int]:
    return (-CF_HI[f], -CF_LO[f])


def tile_names(faces: Sequence[Face]) -> list[str]:
    """Tiles in canonical id order (higher halves first, as ``State.sort_tiles``)."""
    return [CF_NAME[f] for f in sorted(faces, key=_sort_key)]


def hand_names(faces: Sequence[Face]) -> list[str]:
    """A hand for display, strongest face first (face id order)."""
    return [CF_NAME[f] for f in sorted(faces)]


# --------------------------------------------------------------------------- interned moves and caches

_MOVES: dict[tuple[int, tuple[Face, ...]], Move] = {}


def _move(up: int, faces: tuple[Face, ...]) -> Move:
    m = _MOVES.get((up, faces))
    if m is None:
        names = tuple(tile_names(faces))
        action = "play" if up else "discard"
        gtype, rank = GROUPS[faces] if up else (-1, 0)
        # a face-down discard shows the other seats only how many tiles went down
        m = Move(f"{action}:{'+'.join(names)}", action, names,
                 code=(up, faces, gtype, rank, _sit(gtype, rank) if up else _LEAD),
                 seen=None if up else f"discard:{len(faces)} face down")
        _MOVES[(up, faces)] = m
    return m


#: (hand, situation) -> legal moves; bounded, cleared when full (a search revisits few hands per deal)
_LEGAL: dict[tuple[tuple[Face, ...], int], list[Move]] = {}
#: (hand, faces played) -> the hand afterwards
_AFTER: dict[tuple[tuple[Face, ...], tuple[Face, ...]], tuple[Face, ...]] = {}
_CACHE_LIMIT = 200_000  # entries per cache: a few tens of MB at most

# A fresh determinization deals hands the caches have never seen, so generation itself must be cheap: a hand
# becomes one int of 3-bit count fields (a face has at most 2 copies) whose top bit is a guard, and "the hand
# holds this group" is then one subtraction, ``(code - need) & _GUARD == _GUARD`` (a field keeps its guard
# bit exactly when its count is at least the group's; no field can borrow from the next).
_UNIT: tuple[int, ...] = tuple(1 << (3 * f) for f in FACES)
_GUARD = sum(4 * u for u in _UNIT)


def _need(faces: tuple[Face, ...]) -> int:
    return sum(_UNIT[f] for f in faces)


#: the face-up single of each face and the face-down discard of one tile, indexed by face (no dict lookup)
_PLAY1: tuple[Move, ...] = tuple(_move(1, (f,)) for f in FACES)
_DISCARD1: tuple[Move, ...] = tuple(_move(0, (f,)) for f in FACES)
#: the lead groups of two or more tiles, in ``_GROUP_LIST`` order (singles come first there, in face order)
_LEAD_MULTI: tuple[tuple[int, Move], ...] = tuple(
    (_need(g), _move(1, g)) for g, _t, _r in _GROUP_LIST if len(g) > 1)
#: situation -> (need, move) of every group that beats it, in ``_GROUP_LIST`` order: the filter by type and
#: rank is done once here instead of on every follow
_BEATS: dict[int, tuple[tuple[int, Move], ...]] = {
    _sit(t, r): tuple((_need(g2), _move(1, g2)) for g2, t2, r2 in _GROUP_LIST if t2 == t and r2 > r)
    for _g, t, r in _GROUP_LIST}
#: situation -> trick size
_SIZE: dict[int, int] = {_sit(t, r): len(g) for g, t, r in _GROUP_LIST}


class _Discards(dict[tuple[Face, ...], Move]):
    """faces -> interned discard move, built on first use (``map(d.__getitem__, ...)`` runs in C); bounded
    by the few thousand multisets of 2-4 tiles of the set."""

    def __missing__(self, faces: tuple[Face, ...]) -> Move:
        m = self[faces] = _move(0, faces)
        return m


_DISCARDS = _Discards()
_discard_of = _DISCARDS.__getitem__

#: situation of a single -> {face: its face-up single} for the faces that beat it, in face order
_HIGHER1: dict[int, dict[Face, Move]] = {
    sit: {m.code[1][0]: m for _need, m in beats} for sit, beats in _BEATS.items() if _SIZE[sit] == 1}


def _beat_runs() -> dict[int, tuple[Face, Face]]:
    """situation of a single -> ``(lo, hi)``: the faces that beat it are exactly ``lo <= face < hi`` (checked
    here against ``_HIGHER1``: civil faces are ordered by rank, military faces by class)."""
    runs: dict[int, tuple[Face, Face]] = {}
    for sit, higher in _HIGHER1.items():
        faces = sorted(higher)
        lo, hi = (faces[0], faces[-1] + 1) if faces else (0, 0)
        assert faces == list(range(lo, hi)), f"the faces beating situation {sit} are not one run"
        runs[sit] = (lo, hi)
    return runs


#: situation of a single -> the run of face ids that beat it (a follow's beats by bisection)
BEAT_RUN1 = _beat_runs()


class _LeadSegment(dict[int, tuple[Move, ...]]):
    """One run of ``_LEAD_MULTI`` whose groups use only a few count fields, keyed by the hand's code masked
    to those fields: a lead looks up three cached runs instead of testing 40 groups.  Bounded by the values
    the mask allows: 2^11 (civil pairs), 2^10 (military), 3^4 * 2^8 (mixed groups)."""

    def __init__(self, groups: Sequence[tuple[int, Move]]) -> None:
        super().__init__()
        self.groups = tuple(groups)
        least: dict[Face, int] = {}  # face -> the fewest copies of it a group of the run needs
        for need, _m in groups:
            for f in FACES:
                k = need >> (3 * f) & 3
                if k:
                    least[f] = min(k, least.get(f, k))
        # a face only ever needed twice keeps just its "two copies" bit: fewer keys for the same answers
        self.mask = sum((2 if k == 2 else 3) * _UNIT[f] for f, k in least.items())

    def __missing__(self, key: int) -> tuple[Move, ...]:
        ms = self[key] = tuple(m for need, m in self.groups if (key + _GUARD - need) & _GUARD == _GUARD)
        return ms


# civil pairs | military pairs and the Supreme | mixed groups: consecutive runs of _LEAD_MULTI, so the
# concatenation keeps the order of _GROUP_LIST
_SEG_PAIRS = _LeadSegment([gm for gm in _LEAD_MULTI if gm[1].code[2] == PAIR_CIVIL])
_SEG_MILITARY = _LeadSegment([gm for gm in _LEAD_MULTI if gm[1].code[2] in (PAIR_MILITARY, SUPREME)])
_SEG_MIXED = _LeadSegment([gm for gm in _LEAD_MULTI
                           if gm[1].code[2] not in (PAIR_CIVIL, PAIR_MILITARY, SUPREME)])
assert _SEG_PAIRS.groups + _SEG_MILITARY.groups + _SEG_MIXED.groups == _LEAD_MULTI
_M_PAIRS, _M_MILITARY, _M_MIXED = _SEG_PAIRS.mask, _SEG_MILITARY.mask, _SEG_MIXED.mask
_pairs_of, _military_of, _mixed_of = _SEG_PAIRS.__getitem__, _SEG_MILITARY.__getitem__, _SEG_MIXED.__getitem__


def _generate(hand: tuple[Face, ...], sit: int) -> list[Move]:
    if sit == _LEAD:
        code = sum([_UNIT[f] for f in hand])
        # the hand is sorted by face id, so its distinct faces come in the singles' order
        out = [_PLAY1[f] for f in dict.fromkeys(hand)]
        out += _pairs_of(code & _M_PAIRS)
        out += _military_of(code & _M_MILITARY)
        out += _mixed_of(code & _M_MIXED)
        return out
    if sit == _DEAD:
        return [_move(0, hand)]
    out = beats_for(hand, sit)
    n = _SIZE[sit]
    if n == 1:
        out += [_DISCARD1[f] for f in dict.fromkeys(hand)]
    else:
        # combinations of a sorted hand come in lexicographic order, so dict.fromkeys keeps the first of equals
        out += map(_discard_of, dict.fromkeys(combinations(hand, n)))
    return out


def beats_for(hand: tuple[Face, ...], sit: int) -> list[Move]:
    """The face-up moves of ``hand`` following a high group of situation ``sit`` (the groups that beat it), in
    legal order: the head of the follow's legal moves, before its face-down discards.  A new list."""
    if _SIZE[sit] == 1:
        # the most frequent follow: the faces that beat a single are one run of face ids (BEAT_RUN1) and the
        # hand is sorted, so its beats are one slice of it
        lo, hi = BEAT_RUN1[sit]
        return [_PLAY1[f] for f in dict.fromkeys(hand[bisect_left(hand, lo):bisect_left(hand, hi)])]
    beats = _BEATS[sit]
    if not beats:
        return []
    code = sum([_UNIT[f] for f in hand], _GUARD)
    return [m for need, m in beats if (code - need) & _GUARD == _GUARD]


def moves_for(hand: tuple[Face, ...], sit: int) -> list[Move]:
    """The legal moves of ``hand`` in situation ``sit`` (``_LEAD``, ``_DEAD`` or a high group's), in legal
    order, from the bounded cache: the shared list itself, which callers must not change (``legal_moves``
    hands out a copy; the heuristic playout's fast path reads it)."""
    key = (hand, sit)
    moves = _LEGAL.get(key)
    if moves is None:
        if len(_LEGAL) > _CACHE_LIMIT:
            _LEGAL.clear()
        moves = _LEGAL[key] = _generate(hand, sit)
    return moves


def _remove(hand: tuple[Face, ...], faces: tuple[Face, ...]) -> tuple[Face, ...]:
    rest = list(hand)
    for f in faces:
        rest.remove(f)
    return tuple(rest)


# --------------------------------------------------------------------------- options

OPTIONS = (
    Option("deals", int, 1, "number of deals; points are cumulative and the bank passes to the last-trick winner",
           minimum=1, maximum=100),
    Option("profile", str, "seed", "'seed' (seeds 001/004) or 'classic' (tiengow.md §12: no immediate payments, "
           "no final-group multipliers, no capture rule, banker escalation)", choices=("seed", "classic")),
    Option("early_death", bool, True, "on a singleton last trick a player without a column must discard (§7)"),
    Option("supreme_money_on_last_trick", bool, True,
           "a Supreme winning the last trick still collects its immediate payment (§9.1)"),
    Option("banker_excess_doubled", bool, True,
           "a losing banker with 5-6 columns receives his excess with the banker factor (§9.2)"),
    Option("capture_multiplier", int, 1, "factor on what a captured Little-Three leader pays for the other two "
           "players (§9.4)", choices=(1, 2, 4)),
)

#: payer, payee, amount, reason, trick number, the seat whose debt it is (differs from payer only in a capture)
Payment = tuple[int, int, int, str, int, int]
Play = tuple[int, int, tuple[Face, ...]]  # seat, face up (1) or down (0), faces
Trick = tuple[int, int, tuple[Play, ...]]  # leader, winner, plays


def _payment_dict(p: Payment) -> dict[str, Any]:
    return {"from": p[0], "to": p[1], "amount": p[2], "reason": p[3], "trick": p[4], "for": p[5]}


def _payment_from(d: Mapping[str, Any]) -> Payment:
    return (int(d["from"]), int(d["to"]), int(d["amount"]), str(d["reason"]), int(d["trick"]), int(d["for"]))


class TienGowState(State):
    """One Tien Gow match (``deals`` deals, four players)."""

    __slots__ = (
        "_high_faces", "_high_rank", "_high_seat", "_high_type", "_n", "_sit", "_turn", "banker", "columns",
        "cur", "deal_no", "hands", "leader", "options", "payments", "players", "points", "seed", "streak",
        "summaries", "tricks",
    )

    #: face-down discards show the other seats only their count (``Move.seen``)
    hides_moves = True

    deal_no: int  # finished deals; the current deal is number deal_no + 1
    banker: int
    streak: int  # deals the banker has already won in a row as banker (classic escalation)
    leader: int
    _turn: int  # seat to move, -1 when the match is over
    hands: list[tuple[Face, ...]]  # sorted face ids
    columns: list[int]
    points: list[int]  # cumulative net points, immediate payments included
    payments: tuple[Payment, ...]  # this deal's immediate payments
    summaries: tuple[dict[str, Any], ...]  # one per finished deal
    tricks: tuple[Trick, ...]  # finished tricks of this deal
    cur: tuple[Play, ...]  # the trick being played
    _n: int  # trick size, 0 before the lead
    _sit: int  # situation key of the player to move (_LEAD or the high group's)
    _high_seat: int
    _high_type: int
    _high_rank: int
    _high_faces: tuple[Face, ...]

    # ------------------------------------------------------------------ construction

    @classmethod
    def check_options(cls, options: dict[str, Any], players: int) -> None:
        if options["profile"] == "classic":
            if not options["supreme_money_on_last_trick"]:
                raise BadOptions("option 'supreme_money_on_last_trick' has no effect with profile 'classic' "
                                 "(no immediate payments)", "supreme_money_on_last_trick")
            if options["capture_multiplier"] != 1:
                raise BadOptions("option 'capture_multiplier' has no effect with profile 'classic' "
                                 "(no capture rule)", "capture_multiplier")

    @classmethod
    def new(cls, players: int, seed: int, options: dict[str, Any]) -> TienGowState:
        s = cls._blank(seed, options)
        s._deal(-1)
        return s

    @classmethod
    def _blank(cls, seed: int, options: dict[str, Any]) -> TienGowState:
        s = object.__new__(cls)
        s.players = PLAYERS
        s.seed = seed
        s.options = dict(options)
        s.deal_no = 0
        s.banker = 0
        s.streak = 0
        s.leader = 0
        s._turn = 0
        s.hands = [(), (), (), ()]
        s.columns = [0, 0, 0, 0]
        s.points = [0, 0, 0, 0]
        s.payments = ()
        s.summaries = ()
        s.tricks = ()
        s.cur = ()
        s._reset_trick()
        return s

    @classmethod
    def from_position(cls, hands: Sequence[Sequence[str]], *, banker: int, leader: int | None = None,
                      columns: Sequence[int] = (0, 0, 0, 0), options: Mapping[str, Any] | None = None,
                      seed: int = 0, streak: int = 0) -> TienGowState:
        """A state at the start of a trick with chosen hands (tests and worked examples).  The tiles not in
        any hand count as already played; ``columns`` are those won so far in this deal."""
        opts = RULES_ENTRY.validate_options(options, PLAYERS)
        s = cls._blank(seed, opts)
        parsed = [tuple(sorted(parse_chinese(t) for t in h)) for h in hands]
        if len(parsed) != PLAYERS or len({len(h) for h in parsed}) != 1 or not parsed[0]:
            raise ValueError("four hands of the same, non-zero size")
        have = Counter(f for h in parsed for f in h)
        if any(have[f] > CF_COPIES[f] for f in have):
            raise ValueError("more copies of a tile than the set holds")
        s.hands = parsed
        s.banker = banker
        s.streak = streak
        s.leader = s._turn = banker if leader is None else leader
        s.columns = list(columns)
        return s

    def _deal(self, winner: int) -> None:
        """Shuffle and deal deal number ``self.deal_no``; ``winner`` = previous last-trick winner (-1: first)."""
        rng = random.Random(f"{self.seed}/{self.deal_no}")
        tiles = chinese_set()
        rng.shuffle(tiles)
        self.hands = [tuple(sorted(tiles[i * HAND_SIZE:(i + 1) * HAND_SIZE])) for i in range(PLAYERS)]
        if winner < 0:
            self.banker = rng.randrange(PLAYERS)
        else:
            self.banker = winner
        self.leader = self._turn = self.banker
        self.columns = [0, 0, 0, 0]
        self.payments = ()
        self.tricks = ()
        self.cur = ()
        self._reset_trick()

    def _reset_trick(self) -> None:
        self._n = 0
        self._sit = _LEAD
        self._high_seat = -1
        self._high_type = -1
        self._high_rank = 0
        self._high_faces = ()

    def clone(self) -> TienGowState:
        c = object.__new__(TienGowState)
        c.players = self.players
        c.seed = self.seed
        c.options = self.options  # never mutated after construction
        c.deal_no = self.deal_no
        c.banker = self.banker
        c.streak = self.streak
        c.leader = self.leader
        c._turn = self._turn
        c.hands = self.hands[:]
        c.columns = self.columns[:]
        c.points = self.points[:]
        c.payments = self.payments  # tuples: shared until replaced
        c.summaries = self.summaries
        c.tricks = self.tricks
        c.cur = self.cur
        c._n = self._n
        c._sit = self._sit
        c._high_seat = self._high_seat
        c._high_type = self._high_type
        c._high_rank = self._high_rank
        c._high_faces = self._high_faces
        return c

    # ------------------------------------------------------------------ serialization

    def to_dict(self) -> dict[str, Any]:
        def plays(ps: tuple[Play, ...]) -> list[list[Any]]:
            return [[seat, up, tile_names(f)] for seat, up, f in ps]

        return {
            "rules": "tiengow", "format": 1, "players": self.players, "seed": self.seed,
            "options": dict(self.options), "deal_no": self.deal_no, "banker": self.banker,
            "streak": self.streak, "leader": self.leader, "to_move": self.to_move,
            "hands": [hand_names(h) for h in self.hands], "columns": list(self.columns),
            "points": list(self.points), "payments": [_payment_dict(p) for p in self.payments],
            "tricks": [[ld, w, plays(ps)] for ld, w, ps in self.tricks], "trick": plays(self.cur),
            "deals": [dict(d) for d in self.summaries],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TienGowState:
        if d.get("rules") != "tiengow" or d.get("format") != 1:
            raise BadState("not a stored tiengow state of format 1")
        try:
            opts = RULES_ENTRY.validate_options(d["options"], int(d["players"]))
            s = cls._blank(int(d["seed"]), opts)
            s.deal_no = int(d["deal_no"])
            s.banker = int(d["banker"])
            s.streak = int(d["streak"])
            s.leader = int(d["leader"])
            to_move = d["to_move"]
            s._turn = -1 if to_move is None else int(to_move)

            def faces(names: Sequence[str]) -> tuple[Face, ...]:
                return tuple(sorted(parse_chinese(t) for t in names))

            def plays(ps: Sequence[Sequence[Any]]) -> tuple[Play, ...]:
                return tuple((int(p[0]), int(p[1]), faces(p[2])) for p in ps)

            s.hands = [faces(h) for h in d["hands"]]
            s.columns = [int(c) for c in d["columns"]]
            s.points = [int(p) for p in d["points"]]
            s.payments = tuple(_payment_from(p) for p in d["payments"])
            s.tricks = tuple((int(t[0]), int(t[1]), plays(t[2])) for t in d["tricks"])
            s.cur = plays(d["trick"])
            s.summaries = tuple(dict(x) for x in d["deals"])
            for seat, up, fs in s.cur:
                if up:
                    s._set_high(seat, fs)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise BadState(f"unreadable tiengow state: {e!r}") from None
        return s

    def _set_high(self, seat: int, faces: tuple[Face, ...]) -> None:
        gtype, rank = GROUPS[faces]
        if not self._n:
            self._n = len(faces)
        self._high_seat = seat
        self._high_type = gtype
        self._high_rank = rank
        self._high_faces = faces
        self._sit = _sit(gtype, rank)

    # ------------------------------------------------------------------ moves

    @property
    def to_move(self) -> Seat | None:
        return None if self._turn < 0 else self._turn

    @property
    def finished(self) -> bool:
        return self._turn < 0

    def legal_moves(self) -> list[Move]:
        t = self._turn
        if t < 0:
            return []
        hand = self.hands[t]
        sit = self._sit
        # §7: the last trick is a singleton trick exactly when the followers hold one tile each
        if sit != _LEAD and len(hand) == 1 and self.columns[t] == 0 and self.options["early_death"]:
            sit = _DEAD
        # a copy: callers may sort or shuffle the list without corrupting the shared cache
        return moves_for(hand, sit)[:]

    def _apply(self, move: Move, log: list[Event] | None = None) -> None:
        up, faces, gtype, rank, sit = move.code
        s = self._turn
        hand = self.hands[s]
        if len(faces) == 1:
            # one tile (most moves): slicing around it is cheaper than a cache miss on a fresh hand
            i = hand.index(faces[0])
            self.hands[s] = hand[:i] + hand[i + 1:]
        else:
            key = (hand, faces)
            after = _AFTER.get(key)
            if after is None:
                if len(_AFTER) > _CACHE_LIMIT:
                    _AFTER.clear()
                after = _AFTER[key] = _remove(hand, faces)
            self.hands[s] = after
        if up:
            # _set_high inlined: the move code already carries type, rank and situation, so the search
            # path skips a method call and a GROUPS lookup per face-up play
            if not self.cur:
                self._n = len(faces)
            self._high_seat = s
            self._high_type = gtype
            self._high_rank = rank
            self._high_faces = faces
            self._sit = sit
        self.cur += ((s, up, faces),)
        if log is not None:
            names = tile_names(faces)
            if up:
                log.append(event("lead" if len(self.cur) == 1 else "beat", s, tiles=names, face_up=True,
                                 count=len(faces), group=GROUP_TYPE_NAMES[gtype]))
            else:
                log.append(event("discard", s, secret={s: {"tiles": names}}, face_up=False, count=len(faces)))
        if len(self.cur) == PLAYERS:
            self._end_trick(log)
        else:
            self._turn = (s + 1) % PLAYERS

    #: ``apply`` is ``_apply`` itself (``log`` defaults to ``None``): the search path saves a call per move
    apply = _apply

    def _end_trick(self, log: list[Event] | None) -> None:
        w = self._high_seat
        n = self._n
        self.columns[w] += n
        self.tricks += ((self.leader, w, self.cur),)
        last = not self.hands[w]
        gtype = self._high_type
        if log is not None:
            log.append(event("trick_won", w, tiles=tile_names(self._high_faces), columns=n,
                             trick=len(self.tricks)))
        if gtype in (SUPREME, QUARTET) and self.options["profile"] == "seed":
            self._immediate(w, gtype, last, log)
        self.cur = ()
        self._reset_trick()
        self.leader = self._turn = w
        if last:
            self._end_deal(w, log)

    def _immediate(self, w: int, gtype: int, last: bool, log: list[Event] | None) -> None:
        """§9.1: Supreme 2, quartet 4 from each opponent, ×2 when the banker is involved."""
        if gtype == SUPREME:
            if last and not self.options["supreme_money_on_last_trick"]:
                return
            unit, reason = 2, "supreme"
        else:
            unit, reason = 4, "quartet"
        trick = len(self.tricks)
        new: list[Payment] = []
        for q in range(PLAYERS):
            if q != w:
                amount = unit * (2 if self.banker in (w, q) else 1)
                new.append((q, w, amount, reason, trick, q))
        self._pay(new, log)

    def _pay(self, payments: list[Payment], log: list[Event] | None) -> None:
        for payer, payee, amount, _reason, _trick, _for in payments:
            self.points[payer] -= amount
            self.points[payee] += amount
        self.payments += tuple(payments)
        if log is not None:
            for p in payments:
                log.append(event("payment", p[0], **_payment_dict(p)))

    # ------------------------------------------------------------------ settlement (§9.2–§9.5)

    def banker_factor(self) -> int:
        """×2 (seed); classic escalation: ×2 for a new banker, +1 per deal he has already won as banker."""
        return 2 + self.streak if self.options["profile"] == "classic" else 2

    def settlement(self) -> tuple[list[Payment], int, bool]:
        """The final payments of the finished deal (§9.5), its multiplier and whether the capture applied."""
        leader, w, plays = self.tricks[-1]
        g = self._last_group()
        gtype, _rank = GROUPS[g]
        opts = self.options
        seed_profile = opts["profile"] == "seed"
        cols = self.columns
        b = self.banker
        bf = self.banker_factor()
        mult = 1
        if seed_profile and (gtype in (QUARTET, SUPREME) or g == (LITTLE_THREE,)):
            mult *= 2
        if cols[w] == 2 * PLAYERS:
            mult *= 2
        lead_faces = plays[0][2]
        capture = (seed_profile and len(lead_faces) == 1 and lead_faces == (LITTLE_THREE,)
                   and g == (BIG_SIX,) and w != leader)
        trick = len(self.tricks)
        out: list[Payment] = []
        for p in range(PLAYERS):
            if p == w:
                continue
            a = 5 if cols[p] == 0 else 4 - cols[p]
            if b in (w, p) and not (p == b and a < 0 and not opts["banker_excess_doubled"]):
                a *= bf
            a *= mult
            if a > 0:
                if capture and p != leader:
                    out.append((leader, w, a * opts["capture_multiplier"], "capture", trick, p))
                else:
                    out.append((p, w, a, "settlement", trick, p))
            elif a < 0:
                out.append((w, p, -a, "settlement", trick, w))
        return out, mult, capture

    def _last_group(self) -> tuple[Face, ...]:
        _leader, _w, plays = self.tricks[-1]
        return [f for _s, up, f in plays if up][-1]

    def _end_deal(self, w: int, log: list[Event] | None) -> None:
        if self.halt_at_deal_end and log is None:
            # a search's sample: the payments are all it reads; no summary, no next deal
            self._pay(self.settlement()[0], None)
            self.streak = self.streak + 1 if w == self.banker else 0
            self.deal_no += 1
            self._turn = -1
            return
        before = self.points[:]
        immediate = [_payment_dict(p) for p in self.payments]
        final, mult, capture = self.settlement()
        self._pay(final, log)
        leader = self.tricks[-1][0]
        g = self._last_group()
        summary: dict[str, Any] = {
            "deal": self.deal_no + 1, "banker": self.banker, "banker_factor": self.banker_factor(),
            "last_trick_leader": leader, "last_trick_winner": w, "last_group": tile_names(g),
            "last_group_type": GROUP_TYPE_NAMES[GROUPS[g][0]], "columns": list(self.columns),
            "immediate": immediate, "settlement": [_payment_dict(p) for p in final], "multiplier": mult,
            "capture": capture,
            "net": [self.points[i] - before[i] + sum(p["amount"] * ((p["to"] == i) - (p["from"] == i))
                                                     for p in immediate) for i in range(PLAYERS)],
        }
        self.summaries += (summary,)
        if log is not None:
            log.append(event("deal_end", None, **summary))
        self.streak = self.streak + 1 if w == self.banker else 0
        self.deal_no += 1
        if self.deal_no >= self.options["deals"]:
            self._turn = -1
            if log is not None:
                log.append(event("match_end", None, points=list(self.points)))
            return
        if self.halt_at_deal_end:
            self._turn = -1
            return
        self._deal(w)
        if log is not None:
            log.append(event("deal", None, secret={i: {"hand": hand_names(self.hands[i])} for i in range(PLAYERS)},
                             deal=self.deal_no + 1, banker=self.banker))

    # ------------------------------------------------------------------ information

    def _public_plays(self, plays: tuple[Play, ...], seat: Seat | None) -> list[dict[str, Any]]:
        out = []
        for p, up, f in plays:
            d: dict[str, Any] = {"seat": p, "face_up": bool(up), "count": len(f)}
            if up or p == seat:
                d["tiles"] = tile_names(f)
            out.append(d)
        return out

    def view(self, seat: Seat | None) -> dict[str, Any]:
        face_down = [0, 0, 0, 0]
        for _l, _w, plays in self.tricks:
            for p, up, f in plays:
                if not up:
                    face_down[p] += len(f)
        for p, up, f in self.cur:
            if not up:
                face_down[p] += len(f)
        seats = [{"seat": i, "hand_size": len(self.hands[i]), "score": self.points[i], "columns": self.columns[i],
                  "banker": i == self.banker, "discarded": face_down[i]} for i in range(PLAYERS)]
        table: dict[str, Any] = {
            "deal": self.deal_no + (0 if self.finished else 1), "deals": self.options["deals"],
            "banker": self.banker, "banker_factor": self.banker_factor(), "leader": self.leader,
            "trick_no": len(self.tricks) + (0 if self.finished else 1),
            "trick": {"size": self._n, "high_seat": None if self._high_seat < 0 else self._high_seat,
                      "plays": self._public_plays(self.cur, seat)},
            "tricks": [{"leader": ld, "winner": w, "plays": self._public_plays(ps, seat)}
                       for ld, w, ps in self.tricks],
            "columns": list(self.columns), "payments": [_payment_dict(p) for p in self.payments],
            "points": list(self.points),
            "last_deal": dict(self.summaries[-1]) if self.summaries else None,
            "deal_results": [dict(x) for x in self.summaries],
        }
        hand = None if seat is None else hand_names(self.hands[seat])
        discards = None
        if seat is not None:
            discards = [tile_names(f) for _l, _w, ps in self.tricks for p, up, f in ps if p == seat and not up]
            discards += [tile_names(f) for p, up, f in self.cur if p == seat and not up]
        return {"rules": "tiengow", "players": PLAYERS, "options": dict(self.options), "to_move": self.to_move,
                "finished": self.finished, "you": seat, "hand": hand, "discards": discards, "seats": seats,
                "table": table, "result": self.result() if self.finished else None}

    def determinize(self, seat: Seat, rng: random.Random) -> TienGowState:
        """Other hands and other seats' face-down discards dealt afresh from the tiles ``seat`` has not seen
        (its hand, its own discards and every face-up tile are known); a new seed for future deals."""
        return self.determinizer(seat)(rng)

    def determinizer(self, seat: Seat) -> Callable[[random.Random], TienGowState]:
        """``determinize(seat, rng)`` as a function of ``rng``: the tiles ``seat`` has not seen are counted
        once, and each call shuffles them and deals (a search calls it once per iteration)."""
        # plain lists of counts instead of Counter, and no redeal pass over the tricks unless another seat
        # has really discarded face down
        counts = list(CF_COPIES)
        for f in self.hands[seat]:
            counts[f] -= 1
        hidden = False
        for _l, _w, ps in self.tricks:
            for p, up, played in ps:
                if up or p == seat:
                    for f in played:
                        counts[f] -= 1
                else:
                    hidden = True
        for p, up, played in self.cur:
            if up or p == seat:
                for f in played:
                    counts[f] -= 1
            else:
                hidden = True
        # in face order, as sorted ids: the canonical order every shuffle starts from
        canonical = [f for f in FACES for _ in _RANGES[counts[f]]]
        others = [(o, len(self.hands[o])) for o in range(PLAYERS) if o != seat]

        def deal(rng: random.Random) -> TienGowState:
            unseen = canonical[:]
            shuffle(unseen, rng)
            w = self.clone()
            hands = w.hands
            pos = 0
            for o, k in others:
                hands[o] = tuple(sorted(unseen[pos:pos + k]))
                pos += k
            if hidden:

                def redeal(ps: tuple[Play, ...]) -> tuple[Play, ...]:
                    nonlocal pos
                    out = []
                    for p, up, f in ps:
                        if not up and p != seat:
                            k = len(f)
                            f = tuple(sorted(unseen[pos:pos + k]))
                            pos += k
                        out.append((p, up, f))
                    return tuple(out)

                w.tricks = tuple((ld, wn, redeal(ps)) for ld, wn, ps in self.tricks)
                w.cur = redeal(self.cur)
            w.seed = rng.getrandbits(63)
            return w

        return deal

    def rearranged(self, hands: Sequence[tuple[Face, ...]],
                   face_down: Sequence[tuple[Face, ...]]) -> TienGowState:
        """A copy with other ``hands`` and other tiles in the face-down plays of this deal (``face_down``: one
        sorted tuple per face-down play, in the order they were played, each of the same size as the play):
        what a search's inference needs to place hidden tiles where its model of the players puts them.
        Everything public stays as it is; the caller keeps the tiles a multiset of the set."""
        w = self.clone()
        w.hands = [tuple(h) for h in hands]
        slots = iter(face_down)

        def redeal(ps: tuple[Play, ...]) -> tuple[Play, ...]:
            out = []
            for p, up, f in ps:
                if not up:
                    g = next(slots)
                    if len(g) != len(f):
                        raise ValueError("a face-down play keeps its number of tiles")
                    f = g
                out.append((p, up, f))
            return tuple(out)

        w.tricks = tuple((ld, wn, redeal(ps)) for ld, wn, ps in self.tricks)
        w.cur = redeal(self.cur)
        return w

    # ------------------------------------------------------------------ scoring

    @property
    def deals_done(self) -> int:
        return self.deal_no

    def running_payoffs(self) -> list[float]:
        return [float(p) for p in self.points]

    def result(self) -> dict[str, Any]:
        resigned = self.summaries[-1].get("resigned") if self.summaries else None
        ranking = ranking_from([float(p) for p in self.points])
        if resigned is not None:
            return {"reason": "resigned", "resigned": resigned, "scores": list(self.points),
                    "payoffs": [float(p) for p in self.points], "ranking": resigned_ranking(ranking, [resigned]),
                    "deals": [dict(d) for d in self.summaries]}
        return {"reason": f"{self.deal_no} deal(s) played" if self.finished else None,
                "scores": list(self.points), "payoffs": [float(p) for p in self.points],
                "ranking": ranking,
                "deals": [dict(d) for d in self.summaries]}

    def _resign(self, seat: Seat, log: list[Event]) -> None:
        """The resigning seat pays each other seat 5, times the banker factor when the banker is either."""
        bf = self.banker_factor()
        trick = len(self.tricks)
        forfeit: list[Payment] = [(seat, q, 5 * (bf if self.banker in (seat, q) else 1), "resign", trick, seat)
                                  for q in range(PLAYERS) if q != seat]
        before = self.points[:]
        for payer, payee, amount, *_ in forfeit:
            self.points[payer] -= amount
            self.points[payee] += amount
        summary = {"deal": self.deal_no + 1, "resigned": seat, "banker": self.banker, "banker_factor": bf,
                   "forfeit": [_payment_dict(p) for p in forfeit],
                   "net": [self.points[i] - before[i] for i in range(PLAYERS)]}
        self.summaries += (summary,)
        self._turn = -1
        log.append(event("resign", seat, forfeit=summary["forfeit"], points=list(self.points)))
        log.append(event("match_end", None, points=list(self.points), resigned=seat))


RULES_ENTRY = register(RuleSet(
    id="tiengow", title="Tien Gow", min_players=PLAYERS, max_players=PLAYERS, options=OPTIONS,
    state_class=TienGowState, default_players=PLAYERS,
    description="Tien Gow (天九), seeds 001/004: tricks of 1-4 tiles, the last trick decides; columns, "
                "banker ×2, Supreme and quartet money.",
    variants=((4, {"profile": "classic", "deals": 3}), (4, {"deals": 2}),
              (4, {"early_death": False, "supreme_money_on_last_trick": False, "banker_excess_doubled": False,
                   "capture_multiplier": 4})),
))


# --------------------------------------------------------------------------- search kit
# What ``ai/`` may use of this engine beyond the protocol (``SEARCH_KIT``): tables and move caches to read,
# and rollouts that play a search's sampled world on the state's own fields, each built for a policy.

#: face -> the face-down discard of that one tile
DISCARD1 = _DISCARD1
#: the situation keys of a lead and of the §7 early-death discard of a last tile (``situations``, ``moves_for``)
LEAD = _LEAD
DEAD = _DEAD
#: faces (sorted) -> their face-down discard move (interned)
discard_of = _discard_of

Policy = Callable[[State, random.Random], Move]
Rollout = Callable[[State, random.Random], None]
Observe = Callable[[State], tuple[list[int], list[Move]]]


def observer(discard: Callable[[tuple[Face, ...], int], Move]) -> Observe:
    """For a search's tree node where a seat other than the searching one is to move: ``observe(state)``
    gives the distinct observation keys of that seat's legal moves, in legal order (``observed_keys`` of
    ``legal_moves`` without repeats), and for each key the move it plays: the only move with that key, or
    among the face-down discards (all observed as one) ``discard(hand, n)``, the policy's choice of the
    ``n`` tiles of ``hand`` that go face down -- without building every discard of a hand the move caches
    have never seen.  The lists may be the engine's cached ones: read, never change them."""

    def observe(state: State) -> tuple[list[int], list[Move]]:
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
        down = discard(hand, _SIZE[sit])
        keys.append(down.seen_key)
        moves.append(down)
        return keys, moves

    return observe


def follow_of(state: State) -> tuple[list[Move], tuple[Face, ...], int] | None:
    """For the seat to move of ``state`` on a follow with a choice: its face-up beats in legal order (a new
    list: the head of its legal moves), its hand, and how many tiles a face-down discard lays -- without
    building every face-down discard of a hand the move caches have never seen.  ``None`` on a lead, on the
    §7 last single trick (one move) and when the deal is over: there ``legal_moves`` is the way."""
    st = cast(TienGowState, state)
    t = st._turn
    sit = st._sit
    if t < 0 or sit == _LEAD:
        return None
    hand = st.hands[t]
    if len(hand) == 1 and not st.columns[t] and st.options["early_death"]:
        return None
    return beats_for(hand, sit), hand, _SIZE[sit]


def situations(state: State) -> list[int]:
    """For every play of the deal so far, in the order played (the tricks', then the current one's), the
    situation key its player moved in: ``moves_for(hand, key)`` with the player's hand then lists exactly the
    moves it had (a lead, the §7 early-death discard of a last tile, or a follow of the high group).
    Public: what every seat saw.  For a search's inference, which scores the other seats' past moves from the
    hands a sampled world gives them, without replaying the deal."""
    st = cast(TienGowState, state)
    early_death = st.options["early_death"]
    columns = [0] * PLAYERS
    left = [len(h) for h in st.hands]
    plays = [ps for _l, _w, ps in st.tricks] + [st.cur]
    for ps in plays:
        for p, _up, faces in ps:
            left[p] += len(faces)
    out: list[int] = []
    for k, ps in enumerate(plays):
        sit = _LEAD
        for p, up, faces in ps:
            if sit != _LEAD and early_death and left[p] == 1 and not columns[p]:
                out.append(_DEAD)
            else:
                out.append(sit)
            if up:
                sit = _sit(*GROUPS[faces])
            left[p] -= len(faces)
        if k < len(st.tricks):
            columns[st.tricks[k][1]] += len(ps[0][2])
    return out


def leads_for(hand: tuple[Face, ...]) -> list[Move]:
    """The leads of ``hand`` (a player to move on an empty trick), in legal order, from the bounded cache:
    the shared list itself, which callers must not change."""
    return moves_for(hand, _LEAD)


def rollout_of(playout: Policy, *, cheapest_beat: float, last_discard: float,
               lead: Callable[[tuple[Face, ...]], Move] | None = None) -> Rollout:
    """``rollout(state, rng)``: ``playout`` move after move until the current deal ends, in one call, with
    the same moves and the same draws as calling ``playout`` and ``apply`` in a loop.  ``playout`` must be
    this policy, drawing from ``rng`` as follows: on a lead, ``lead(hand)`` of the leader's hand without a
    draw where ``lead`` is given (one of ``leads_for(hand)``; a lead fixed per hand, so it may be cached),
    else a uniform legal move (``below``); on a follow,
    when a beat exists and ``rng.random() < cheapest_beat``, the cheapest beat (the last one listed); else,
    when ``rng.random() < last_discard``, the last discard listed (the hand's weakest ``n`` tiles); else a
    uniform legal move.  On a state that does not halt at the end of the deal it plays ``playout`` itself.

    A sampled world deals hands the move caches have never seen, so building each legal move list (and
    caching it) would be most of a playout; the policy needs far less than the list: on a lead, the number
    of leads and the one drawn; on a follow, the cheapest beat, the last discard and now and then the whole
    list.  This loop computes just that: a lead draws from the cached list of the hand's leads; the follow
    of a single finds its cheapest beat by bisection and draws the uniform one from the hand's distinct
    faces (its beats, then its discards); the follow of a group takes its beats from ``beats_for`` and the
    whole list only for the uniform draw.  It plays a trick on local variables and closes an ordinary trick
    itself; the end of the last one (settlement) and Supreme/quartet money stay ``_end_trick``'s."""

    def rollout(state: State, rng: random.Random) -> None:
        st = cast(TienGowState, state)
        if not st.halt_at_deal_end:
            play_to_deal_end(st, playout, rng)
            return
        beat_share = cheapest_beat
        down_share = last_discard
        lead_of = lead
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
                    if lead_of is not None:
                        # the policy's own lead of this hand, no draw
                        move = lead_of(hand)
                    else:
                        # uniform over every legal lead; a hand leads again and again across a search's
                        # playouts, so the cached list serves
                        leads = moves_for(hand, _LEAD)
                        # ``below(rng, size)`` spelled out: a call per lead is a tenth of a playout
                        size = len(leads)
                        b = size.bit_length()
                        r = getrandbits(b)
                        while r >= size:
                            r = getrandbits(b)
                        move = leads[r]
                elif len(hand) == 1 and early_death and not columns[t]:
                    # §7 early death: the discard of the last tile is the only move, and the policy still
                    # draws (the last move, or a uniform choice among the one)
                    move = _DISCARD1[hand[0]]
                    if random_() >= down_share:
                        below(rng, 1)
                elif _SIZE[sit] == 1:
                    # the most frequent follow.  The faces that beat a single are one run of face ids and the
                    # hand is sorted: the cheapest beat is the hand's last face below the run's end
                    lo, hi = BEAT_RUN1[sit]
                    j = bisect_left(hand, hi)
                    # the two usual outcomes are played right here: the tile's place in the hand is known
                    if j and hand[j - 1] >= lo and random_() < beat_share:
                        # the cheapest beat goes up and leads the trick now
                        _up, high_faces, high_type, high_rank, sit = _PLAY1[hand[j - 1]].code
                        high_seat = t
                        hands[t] = hand[:j - 1] + hand[j:]
                        cur += ((t, 1, high_faces),)
                        move = None
                    elif random_() < down_share:
                        # the weakest tile goes down
                        hands[t] = hand[:-1]
                        cur += ((t, 0, _DISCARD1[hand[-1]].code[1]),)
                        move = None
                    else:
                        # otherwise uniform over the whole list, which is the single of each distinct face
                        # of the run that beats (in face order), then the discard of each distinct face
                        distinct = tuple(dict.fromkeys(hand))
                        i = bisect_left(distinct, lo)
                        n_beats = bisect_left(distinct, hi) - i
                        r = below(rng, n_beats + len(distinct))
                        move = _PLAY1[distinct[i + r]] if r < n_beats else _DISCARD1[distinct[r - n_beats]]
                else:
                    # the follow of a group (its beats, then the discards in combination order): mostly the
                    # cheapest beat, the last beat listed; else the last discard, which is the hand's weakest
                    # n tiles; else the whole list
                    beats = beats_for(hand, sit)
                    if beats and random_() < beat_share:
                        move = beats[-1]
                    elif random_() < down_share:
                        move = _discard_of(hand[-_SIZE[sit]:])
                    else:
                        moves = moves_for(hand, sit)
                        move = moves[below(rng, len(moves))]
                if move is not None:
                    # the play itself, as ``_apply`` does it
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
                    # the end of a trick that neither ends the deal nor pays money at once, as _end_trick
                    # does it: the winner takes its columns and leads the next trick
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

    return rollout


#: the names ``ai/`` may use of this module besides the ``State`` protocol: the search kit
SEARCH_KIT = ("BEAT_RUN1", "DEAD", "DISCARD1", "GROUPS", "LEAD", "TienGowState", "beats_for", "discard_of",
              "follow_of", "hand_names", "leads_for", "moves_for", "observer", "rollout_of", "situations")
