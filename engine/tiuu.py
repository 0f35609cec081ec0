"""Tiu U (釣魚, "fishing"), the Chinese domino fishing game for 2 or 3 players.

Rules: ``docs/rules/tiuu.md`` (seed 000, the Serbian "Pecanje (Tiu-U)") with its options and
decisions; every interpretation it states is followed.  Below, § numbers are the sections of the
seed's own write-up; the rules page states every rule they name.

Layout (§1): the 64 tiles of two Chinese sets are shuffled into 16 stacks of 4.  Counting from the right
(drawing) end: 4 stacks (16 tiles) are turned face up as the *pool*; the players take stacks one at a time
in turn order (3 each with 2 players, 2 each with 3 players); the remaining 24 tiles are the *stock*.

Turn (§4), two parts:

* Part 1, a move from hand: ``capture:<hand tile>+<pool tile>`` (the player chooses the pool tile when
  his tile matches several), ``triple:<face>`` (two identical pool tiles and a third from hand go face up
  to the left end of the stock, the player takes the three right-end stock tiles into his hand),
  ``fourth:<face>`` (the fourth copy goes on that face-up triple; the player takes three tiles), or
  ``flip`` -- going straight to part 2, legal only when none of the others is (a capture is compulsory).
* Part 2: the right-end stock tile is turned; when it matches pool tiles the player takes it with one of
  them and turns the next (a chain).  When the flipped tile matches pool tiles of several different faces
  the player chooses (``take:<flipped>+<pool tile>``); a choice between copies of one face is no choice
  and is resolved at once.

Interpretations and decisions (§9 and the decisions):

* 4-2 matches only 2-1 and 2-1 only 4-2 (``supreme_extra``: 4-2 also matches every 6-pip tile, 2-1 also
  matches 2-1).
* The opening 6-6 pairs are mandatory, one pair per two 6-6 held.  They are laid out before the first turn.
* Tripling needs two identical pool tiles, one in hand, the fourth copy "not played" (not in the pool, a
  catch or a face-up stack) and at least 4 stock tiles.  The fourth-tile move needs a complete face-up
  triple of that face in the stock (not partly drawn) and at least 4 stock tiles.  Several face-up stacks:
  the newest is at the left end and is drawn last.  Tiles of face-up stacks are public even when they are
  drawn into a hand (the engine keeps a per-seat count of such *known* hand tiles).
* The game ends the moment the stock is empty, after the current tile is resolved.  Hands and pool do not
  score.  Exact multiples of ten are not rounded up.
* Settlement: every player whose rounded score is below the top pays each top scorer the difference
  (2 players: the loser pays the winner; equal rounded scores are a draw).
* First player: the first game's is drawn from the seed; a later game is opened by the previous game's
  winner -- when several players tie on top, by the first of them in turn order counting from the previous
  game's first player.  Seats are in turn order, the next player is seat + 1.
* ``profile = "classic"`` (§8, pagat/Culin/navpil): one flip per turn (a matching flip captures, then
  the turn ends), a hand capture is optional (``flip`` is always legal in part 1), only the small-fish sum
  is rounded up (score = big fish + small fish rounded up), and the fourth tile captures the face-up three
  (all four go to the catch; no tiles are drawn, so the 4-tile stock minimum does not apply to it).
* ``games`` > 1: points (the net payments) accumulate over the games.

Resigning (not in the sources): the game in progress is abandoned and the resigning seat pays every
other seat that seat's rounded catch of this game so far, at least 10 (the smallest stake: scores are
rounded to tens) -- what it would pay a top scorer holding that catch with its own catch counted as empty.
Points of finished games stand.  The result's ``reason`` is ``"resigned"``; the resigning seat ranks last.

Hidden information: other hands and the face-down stock.  What a seat can infer is kept in public
per-seat bounds: ``known`` (tiles a seat drew from a face-up stack) and ``caps`` (the most copies of a
face the unknown part of a hand can hold: at most one 6-6 after the opening pairs; none of any face that
would have allowed a capture, tripling or fourth-tile move when the seat played ``flip`` with tiles in
hand under the seed's compulsory capture; relaxed by one per hidden tile drawn).  ``determinize``
resamples exactly the unseen tiles under these bounds.  What a seat *chose* is public too: ``history``
records the game's part-1 moves with the table each was chosen at (``Part1``), for inference to weigh
worlds by (``part1_replay``); a search's own sample keeps no record.

Search kit (``SEARCH_KIT``, at the end of the module): what ``ai/`` may use of this engine beyond the
protocol -- the move kinds, ``PART1`` (part 1's phase) and ``FISH``, ``part1_moves`` (part 1's legality, the one function that decides
it), ``rollout_of(playout, explore=, growth=, growth_stock=)`` (the policy played to the end of the game on
local variables, counting part 1's moves as ``part1_moves`` lists them) and ``part1_replay`` (the game's
part-1 choices as a world holds the hands, for inference).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import lt, mul, sub
from typing import Any, cast

from engine.exceptions import BadState, InvalidMove
from engine.game import (
    Event,
    Move,
    Option,
    RuleSet,
    Seat,
    State,
    below,
    event,
    get_rules,
    play_to_deal_end,
    ranking_from,
    register,
    resigned_ranking,
    shuffle,
)
from engine.tiles import (
    BIG_SIX,
    CF_CIVIL,
    CF_NAME,
    CF_PIPS,
    CF_RED_PIPS,
    FACES,
    HEAVEN,
    LITTLE_THREE,
    NUM_FACES,
    Face,
    chinese_set,
    parse_chinese,
)

NF = NUM_FACES
#: the 64-tile double set, in face order
ALL_TILES: tuple[Face, ...] = tuple(chinese_set(2))
#: copies of each face in the double set (4 civil, 2 military)
TOTAL: tuple[int, ...] = tuple(ALL_TILES.count(f) for f in FACES)
POOL_TILES = 16
STACK = 4
#: stacks per player by player count
HAND_STACKS = {2: 3, 3: 2}
#: tripling and the seed's fourth-tile move need this many stock tiles: three to take, one to flip
MIN_STOCK = 4
#: "no bound" for the caps on a hand's unknown tiles
NO_CAP = 4


def _matches(a: Face, b: Face, extra: bool) -> bool:
    supreme = {a, b} == {BIG_SIX, LITTLE_THREE}
    if supreme:
        return True
    if extra:
        # pagat "also": 4-2 keeps its 6-pip mates and 2-1 matches 2-1 (equal pips covers both)
        return CF_PIPS[a] == CF_PIPS[b]
    if a in (BIG_SIX, LITTLE_THREE) or b in (BIG_SIX, LITTLE_THREE):
        return False
    return CF_PIPS[a] == CF_PIPS[b]


def _match_table(extra: bool) -> tuple[tuple[Face, ...], ...]:
    return tuple(tuple(b for b in FACES if _matches(a, b, extra)) for a in FACES)


#: MATCH[extra][f]: the faces f pairs with (symmetric)
MATCH: dict[bool, tuple[tuple[Face, ...], ...]] = {False: _match_table(False), True: _match_table(True)}

#: points of a captured tile: big fish (8+ pips) 2 per pip, small fish its red pips
BIG: tuple[bool, ...] = tuple(CF_PIPS[f] >= 8 for f in FACES)
FISH: tuple[int, ...] = tuple(2 * CF_PIPS[f] if BIG[f] else CF_RED_PIPS[f] for f in FACES)


#: points per captured copy of each face, counting only big fish / only small fish (catch_scores sums in C)
_BIG_FISH: tuple[int, ...] = tuple(FISH[f] if BIG[f] else 0 for f in FACES)
_SMALL_FISH: tuple[int, ...] = tuple(0 if BIG[f] else FISH[f] for f in FACES)


def round_up(points: int) -> int:
    """Up to the next multiple of ten; an exact multiple stays (§7, interpretation 10)."""
    return -(-points // 10) * 10


def catch_scores(catch: Sequence[int], classic: bool) -> tuple[int, int]:
    """``(raw, settled)`` points of a catch given as face counts.  Seed: the total is rounded up to the ten;
    classic: only the small-fish sum is rounded up."""
    big = sum(map(mul, _BIG_FISH, catch))
    small = sum(map(mul, _SMALL_FISH, catch))
    raw = big + small
    return raw, (big + round_up(small) if classic else round_up(raw))


def settle(rounded: Sequence[int]) -> tuple[list[int], list[dict[str, int]]]:
    """Net points per seat and the payments: every seat below the top pays each top scorer the difference."""
    top = max(rounded)
    winners = [s for s, r in enumerate(rounded) if r == top]
    net = [0] * len(rounded)
    payments: list[dict[str, int]] = []
    for s, r in enumerate(rounded):
        if r == top:
            continue
        for w in winners:
            net[s] -= top - r
            net[w] += top - r
            payments.append({"from": s, "to": w, "amount": top - r})
    return net, payments


# --------------------------------------------------------------------------- interned moves

CAPTURE, TRIPLE, FOURTH, FLIP, TAKE = range(5)


def _tile_move(action: str, kind: int, a: Face, b: Face, first: str, second: str) -> Move:
    return Move(f"{action}:{CF_NAME[a]}+{CF_NAME[b]}", action, (CF_NAME[a], CF_NAME[b]),
                {first: CF_NAME[a], second: CF_NAME[b]}, code=(kind, a, b))


#: built once: legal_moves() only indexes these tables
CAPTURE_MOVES: tuple[tuple[Move, ...], ...] = tuple(
    tuple(_tile_move("capture", CAPTURE, h, t, "hand", "pool") for t in FACES) for h in FACES)
TAKE_MOVES: tuple[tuple[Move, ...], ...] = tuple(
    tuple(_tile_move("take", TAKE, s, t, "flipped", "pool") for t in FACES) for s in FACES)
TRIPLE_MOVES: tuple[Move, ...] = tuple(
    Move(f"triple:{CF_NAME[f]}", "triple", (CF_NAME[f],), code=(TRIPLE, f, f)) for f in FACES)
FOURTH_MOVES: tuple[Move, ...] = tuple(
    Move(f"fourth:{CF_NAME[f]}", "fourth", (CF_NAME[f],), code=(FOURTH, f, f)) for f in FACES)
FLIP_MOVE = Move("flip", "flip", (), code=(FLIP, -1, -1))
_ARITY = {"capture": 2, "take": 2, "triple": 1, "fourth": 1}

#: phases
PART1, CHOOSE, OVER = 0, 1, 2

#: one part-1 move of the game's public record (``TiuUState.history``): the mover, the move's code
#: ``(kind, a, b)``, and the table it was chosen at: the pool, the played copies, the face-up stacks' counts
#: and faces (oldest first) and the stock's size, each as it was before the move
Part1 = tuple[Seat, int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], int]


#: no face capped: ``caps`` entries below it can bind
_UNCAPPED: tuple[int, ...] = (NO_CAP,) * NF


def _within(tiles: list[Face], cap: Sequence[int]) -> bool:
    """Whether ``tiles`` hold no face more often than ``cap`` allows."""
    return all(tiles.count(f) <= cap[f] for f in compress(FACES, map(lt, cap, _UNCAPPED)))


def _names(counts: Sequence[int]) -> list[str]:
    return [CF_NAME[f] for f in FACES for _ in range(counts[f])]


def _digits(counts: Sequence[int]) -> str:
    """A face-count vector (every count 0-4) as a string of 21 digits: the stored form of the record."""
    return "".join(map(str, counts))


def _undigits(text: str) -> tuple[int, ...]:
    counts = tuple(map(int, text))
    if len(counts) != NF:
        raise ValueError(f"a count vector has {NF} digits, not {len(counts)}")
    return counts


def _counts(names: Sequence[str]) -> list[int]:
    c = [0] * NF
    for n in names:
        c[parse_chinese(n)] += 1
    return c


def part1_moves(state: TiuUState, hand: Sequence[int]) -> list[Move]:
    """The legal moves of part 1 of a turn (§4) for ``hand`` (face counts) in ``state``: the one place
    Tiu U's part-1 legality is decided (``legal_moves`` in part 1, what a flip under compulsory capture
    reveals, ``_note_no_play``, and the playout policies, which choose from ``legal_moves``).  The search
    kit's rollout (``rollout_of``) counts these same moves in this same order on its own locals, without the
    list, for speed; ``tests/test_rollouts.py`` holds its moves and draws equal to the policy's on this
    list from sampled worlds of every variant.  In legal order: the captures (by hand face, then pool face),
    the specials (tripling, then the fourth tile, by face), then ``flip`` when it is legal.  A new list.

    * a capture: a hand tile and a pool tile that match;
    * tripling: two identical pool tiles and a third from hand, the fourth copy not played (not in the
      pool, a catch or a face-up stack), civil faces only, at least ``MIN_STOCK`` stock tiles;
    * the fourth tile: a complete face-up triple of the face in the stock and ``MIN_STOCK`` stock tiles
      (the classic profile's fourth tile captures the three and draws nothing: no stock minimum);
    * ``flip``: when none of these is legal (a capture is compulsory), or always in the classic profile."""
    pool = state.pool
    match = state.match
    played = state.played
    upc = state.upc
    # a face-up triple needs a face-up stack: mostly there is none, and a face's count need not be read
    upf = state.upf
    classic = state.classic
    long_stock = state.nstock >= MIN_STOCK
    out: list[Move] = []
    specials: list[Move] = []
    # the faces the hand holds, in face order, filtered in C
    for h in compress(FACES, hand):
        row = CAPTURE_MOVES[h]
        for t in match[h]:
            if pool[t]:
                out.append(row[t])
        if long_stock and pool[h] == 2 and not played[h] and CF_CIVIL[h]:
            specials.append(TRIPLE_MOVES[h])
        if upf and upc[h] == 3 and (long_stock or classic):
            specials.append(FOURTH_MOVES[h])
    if specials:
        out += specials
    if not out or classic:
        out.append(FLIP_MOVE)
    return out


class TiuUState(State):
    """A Tiu U match.  Hands, pool and catches are face-count vectors (21 ints); the stock is a face-down
    tuple read from ``dpos`` (shared between clones: it only ever shrinks from the right) followed by the
    face-up stacks ``upf`` (oldest first, so drawn first) whose sizes are in ``upc``."""

    move_fields = State.move_fields | {"hand", "pool", "flipped"}

    __slots__ = ("caps", "catches", "classic", "deals", "down", "dpos", "extra", "first", "game", "games",
                 "hands", "history", "hsize", "known", "match", "nstock", "options", "pending", "phase", "played",
                 "players", "points", "pool", "seed", "turn", "upc", "upf")

    players: int
    seed: int
    options: dict[str, Any]
    games: int
    extra: bool
    classic: bool
    match: tuple[tuple[Face, ...], ...]
    game: int
    first: int
    turn: int
    phase: int
    pending: int
    hands: list[list[int]]
    hsize: list[int]
    pool: list[int]
    catches: list[list[int]]
    #: per face: copies in any catch or face-up stack ("played" for the tripling rule)
    played: list[int]
    down: tuple[int, ...]
    dpos: int
    upf: list[int]
    upc: list[int]
    nstock: int
    known: list[list[int]]
    caps: list[list[int]]
    #: the current game's part-1 moves, public, each with the table it was chosen at (``Part1``)
    history: tuple[Part1, ...]
    points: list[int]
    deals: list[dict[str, Any]]

    # ------------------------------------------------------------------ construction

    def _init_common(self, players: int, seed: int, options: dict[str, Any]) -> None:
        self.players = players
        self.seed = seed
        self.options = dict(options)
        self.games = options["games"]
        self.extra = options["supreme_extra"]
        self.classic = options["profile"] == "classic"
        self.match = MATCH[self.extra]

    @classmethod
    def new(cls, players: int, seed: int, options: dict[str, Any]) -> TiuUState:
        st = cls.__new__(cls)
        st._init_common(players, seed, options)
        st.points = [0] * players
        st.deals = []
        first = random.Random(f"{seed}/first").randrange(players)
        st._deal(0, first, None)
        return st

    @classmethod
    def from_layout(cls, players: int, *, hands: Sequence[Sequence[str]], pool: Sequence[str],
                    stock: Sequence[str], catches: Sequence[Sequence[str]] | None = None,
                    stacks: Sequence[tuple[str, int]] = (), turn: int = 0, seed: int = 0,
                    options: Mapping[str, Any] | None = None) -> TiuUState:
        """A state in the middle of a game, built from chosen tiles (for tests and analysis).

        ``stock`` is the face-down stock, next tile first; ``stacks`` are face-up stacks ``(tile, count)``
        oldest (drawn first) to newest.  Tiles not listed are treated as out of play; nothing is laid out
        or checked beyond the tile names.  ``turn`` is to move in part 1.
        """
        opts = get_rules("tiuu").validate_options(options, players)
        st = cls.__new__(cls)
        st._init_common(players, seed, opts)
        st.points = [0] * players
        st.deals = []
        st.game = 0
        st.first = turn
        st.turn = turn
        st.phase = PART1
        st.pending = -1
        st.hands = [_counts(h) for h in hands]
        st.hsize = [sum(h) for h in st.hands]
        st.pool = _counts(pool)
        st.catches = [_counts(c) for c in catches] if catches else [[0] * NF for _ in range(players)]
        st.down = tuple(parse_chinese(t) for t in stock)
        st.dpos = 0
        st.upf = [parse_chinese(t) for t, _ in stacks]
        st.upc = [0] * NF
        for t, k in stacks:
            st.upc[parse_chinese(t)] += k
        st.played = [sum(c[f] for c in st.catches) + st.upc[f] for f in FACES]
        st.nstock = len(st.down) + sum(st.upc)
        st.known = [[0] * NF for _ in range(players)]
        st.caps = [[NO_CAP] * NF for _ in range(players)]
        st.history = ()
        return st

    def _deal(self, game: int, first: int, log: list[Event] | None) -> None:
        n = self.players
        rng = random.Random(f"{self.seed}/{game}")
        tiles = list(ALL_TILES)
        rng.shuffle(tiles)
        # tiles[0] is the right (drawing) end of the row of stacks
        self.game = game
        self.first = first
        self.turn = first
        self.phase = PART1
        self.pending = -1
        self.pool = [0] * NF
        for f in tiles[:POOL_TILES]:
            self.pool[f] += 1
        self.hands = [[0] * NF for _ in range(n)]
        pos = POOL_TILES
        for k in range(HAND_STACKS[n] * n):
            hand = self.hands[(first + k) % n]
            for f in tiles[pos:pos + STACK]:
                hand[f] += 1
            pos += STACK
        self.down = tuple(tiles[pos:])
        self.dpos = 0
        self.upf = []
        self.upc = [0] * NF
        self.nstock = len(self.down)
        self.catches = [[0] * NF for _ in range(n)]
        self.played = [0] * NF
        self.known = [[0] * NF for _ in range(n)]
        caps = [NO_CAP] * NF
        # after the mandatory 6-6 pairs every hand holds at most one 6-6, and everyone knows it
        caps[HEAVEN] = 1
        self.caps = [caps[:] for _ in range(n)]
        self.history = ()
        if log is not None:
            log.append(event("deal", None, {s: {"hand": _names(self.hands[s])} for s in range(n)},
                             game=game + 1, first=first, pool=_names(self.pool),
                             hand_sizes=[sum(h) for h in self.hands], stock=self.nstock))
        for k in range(n):
            s = (first + k) % n
            pairs = self.hands[s][HEAVEN] // 2
            if pairs:
                self.hands[s][HEAVEN] -= 2 * pairs
                self.catches[s][HEAVEN] += 2 * pairs
                self.played[HEAVEN] += 2 * pairs
                if log is not None:
                    log.append(event("six_six_pairs", s, tiles=["6-6"] * (2 * pairs)))
        self.hsize = [sum(h) for h in self.hands]

    # ------------------------------------------------------------------ serialization

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": "tiuu", "version": 1, "players": self.players, "seed": self.seed,
            "options": dict(self.options), "game": self.game, "first": self.first, "turn": self.turn,
            "phase": self.phase, "pending": self.pending,
            "hands": [h[:] for h in self.hands], "pool": self.pool[:],
            "catches": [c[:] for c in self.catches], "down": list(self.down[self.dpos:]),
            "stacks": [[f, self.upc[f]] for f in self.upf],
            "known": [k[:] for k in self.known], "caps": [c[:] for c in self.caps],
            # a face's count is 0-4, so each count vector is stored as a string of 21 digits
            "history": [[s, k, a, b, _digits(pool), _digits(played), _digits(upc), list(upf), nstock]
                        for s, k, a, b, pool, played, upc, upf, nstock in self.history],
            "points": self.points[:], "deals": [dict(d) for d in self.deals],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TiuUState:
        if d.get("rules") != "tiuu" or d.get("version") != 1:
            raise BadState("not a version-1 tiuu state")
        try:
            n = d["players"]
            opts = get_rules("tiuu").validate_options(d["options"], n)
            st = cls.__new__(cls)
            st._init_common(n, int(d["seed"]), opts)
            st.game = int(d["game"])
            st.first = int(d["first"])
            st.turn = int(d["turn"])
            st.phase = int(d["phase"])
            st.pending = int(d["pending"])
            st.hands = [[int(x) for x in h] for h in d["hands"]]
            st.pool = [int(x) for x in d["pool"]]
            st.catches = [[int(x) for x in c] for c in d["catches"]]
            st.down = tuple(int(x) for x in d["down"])
            st.dpos = 0
            st.upf = [int(f) for f, _ in d["stacks"]]
            st.upc = [0] * NF
            for f, k in d["stacks"]:
                st.upc[int(f)] = int(k)
            st.known = [[int(x) for x in k] for k in d["known"]]
            st.caps = [[int(x) for x in c] for c in d["caps"]]
            # states stored before the history was kept have none: inference then has nothing to weigh
            st.history = tuple((int(s), int(k), int(a), int(b), _undigits(pool), _undigits(played), _undigits(upc),
                                tuple(int(x) for x in upf), int(nstock))
                               for s, k, a, b, pool, played, upc, upf, nstock in d.get("history", ()))
            st.points = [int(x) for x in d["points"]]
            st.deals = [dict(x) for x in d["deals"]]
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise BadState(f"unreadable tiuu state: {e}") from None
        vectors = [st.pool, st.upc, *st.hands, *st.catches, *st.known, *st.caps]
        if (len(st.hands) != n or len(st.catches) != n or len(st.points) != n
                or any(len(v) != NF for v in vectors)):
            raise BadState("tiuu state has the wrong shape")
        st.hsize = [sum(h) for h in st.hands]
        st.played = [sum(c[f] for c in st.catches) + st.upc[f] for f in FACES]
        st.nstock = len(st.down) + sum(st.upc)
        return st

    def clone(self) -> TiuUState:
        c = object.__new__(TiuUState)
        c.players = self.players
        c.seed = self.seed
        c.options = self.options  # never mutated after construction
        c.games = self.games
        c.extra = self.extra
        c.classic = self.classic
        c.match = self.match
        c.game = self.game
        c.first = self.first
        c.turn = self.turn
        c.phase = self.phase
        c.pending = self.pending
        c.hands = [h[:] for h in self.hands]
        c.hsize = self.hsize[:]
        c.pool = self.pool[:]
        c.catches = [x[:] for x in self.catches]
        c.played = self.played[:]
        c.down = self.down  # immutable tuple: shared
        c.dpos = self.dpos
        c.upf = self.upf[:]
        c.upc = self.upc[:]
        c.nstock = self.nstock
        c.known = [k[:] for k in self.known]
        c.caps = [k[:] for k in self.caps]
        c.history = self.history  # a tuple, replaced on every record: shared
        c.points = self.points[:]
        c.deals = self.deals[:]  # finished summaries are never mutated
        return c

    # ------------------------------------------------------------------ moves

    @property
    def to_move(self) -> Seat | None:
        return None if self.phase == OVER else self.turn

    def legal_moves(self) -> list[Move]:
        phase = self.phase
        pool = self.pool
        if phase == CHOOSE:
            row = TAKE_MOVES[self.pending]
            return [row[t] for t in self.match[self.pending] if pool[t]]
        if phase == OVER:
            return []
        return part1_moves(self, self.hands[self.turn])

    def canonical_move_id(self, move_id: str) -> str:
        # tile order carries meaning here (hand or flipped tile first), so only the halves are normalized
        if not isinstance(move_id, str):
            raise InvalidMove("a move id is a string")
        action, sep, rest = move_id.strip().partition(":")
        if action == "flip" and not rest:
            return "flip"
        arity = _ARITY.get(action)
        if arity is None or not sep:
            raise InvalidMove(f"{move_id!r} is not a Tiu U move (capture:H+P, take:F+P, triple:T, fourth:T, flip)")
        parts = rest.split("+")
        if len(parts) != arity:
            raise InvalidMove(f"{move_id!r}: {action} names {arity} tile(s)")
        try:
            names = [CF_NAME[parse_chinese(p)] for p in parts]
        except ValueError as e:
            raise InvalidMove(f"{move_id!r}: {e}") from None
        return f"{action}:{'+'.join(names)}"

    def _apply(self, move: Move, log: list[Event] | None = None) -> None:
        kind, a, b = move.code
        seat = self.turn
        if not self.halt_at_deal_end and self.phase == PART1:
            # the public record of part 1 (a search's own sample keeps none: it never reads it)
            self.history += ((seat, kind, a, b, tuple(self.pool), tuple(self.played), tuple(self.upc),
                              tuple(self.upf), self.nstock),)
        if kind == CAPTURE:
            self._out_of_hand(seat, a)
            self.pool[b] -= 1
            self._catch(seat, a, b)
            if log is not None:
                log.append(event("capture", seat, hand=CF_NAME[a], pool=CF_NAME[b]))
        elif kind == TAKE:
            self.pending = -1
            self.phase = PART1
            self.pool[b] -= 1
            self._catch(seat, a, b)
            if log is not None:
                log.append(event("take", seat, flipped=CF_NAME[a], pool=CF_NAME[b]))
            if self.classic or not self.nstock:
                self._end_turn(log)
            else:
                self._part2(log)
            return
        elif kind == TRIPLE:
            self._out_of_hand(seat, a)
            self.pool[a] -= 2
            self.upf.append(a)
            self.upc[a] = 3
            self.played[a] += 3
            self.nstock += 3
            if log is not None:
                log.append(event("triple", seat, tile=CF_NAME[a], stack_count=3))
            self._draw_three(seat, log)
        elif kind == FOURTH:
            self._out_of_hand(seat, a)
            if self.classic:
                # the fourth copy captures the face-up three: the stack leaves the stock for the catch
                self.upf.remove(a)
                self.upc[a] = 0
                self.nstock -= 3
                self.catches[seat][a] += 4
                self.played[a] += 1
                if log is not None:
                    log.append(event("fourth", seat, tile=CF_NAME[a], captured=[CF_NAME[a]] * 3))
            else:
                self.upc[a] = 4
                self.played[a] += 1
                self.nstock += 1
                if log is not None:
                    log.append(event("fourth", seat, tile=CF_NAME[a], stack_count=4))
                self._draw_three(seat, log)
        else:  # FLIP
            if not self.classic and self.hsize[seat]:
                self._note_no_play(seat)
            if log is not None:
                log.append(event("no_hand_play", seat))
        self._part2(log)

    #: ``apply`` is ``_apply`` itself (``log`` defaults to ``None``): the search path saves a call per move
    apply = _apply

    def _out_of_hand(self, seat: Seat, f: Face) -> None:
        self.hands[seat][f] -= 1
        self.hsize[seat] -= 1
        known = self.known[seat]
        if known[f]:
            known[f] -= 1
        else:
            cap = self.caps[seat]
            if cap[f]:
                cap[f] -= 1

    def _catch(self, seat: Seat, a: Face, b: Face) -> None:
        c = self.catches[seat]
        c[a] += 1
        c[b] += 1
        played = self.played
        played[a] += 1
        played[b] += 1

    def _note_no_play(self, seat: Seat) -> None:
        """Compulsory capture: a seat that skips part 1 with tiles in hand holds no face that has a part-1
        move (``part1_moves``: nothing that matches the pool, nothing to triple and no fourth copy).
        Everyone can infer it, so it bounds determinizations.  Only the seed's rules compel: ``flip`` is
        listed only when nothing else is."""
        cap = self.caps[seat]
        # the faces the cap still allows, as a hand: those of them that have a move are capped to none
        moves = part1_moves(self, cap)
        if moves[-1] is not FLIP_MOVE:
            for m in moves:
                cap[m.code[1]] = 0

    def _draw(self) -> tuple[Face, bool]:
        """Take the right-end stock tile: ``(face, was face up)``."""
        self.nstock -= 1
        if self.dpos < len(self.down):
            f = self.down[self.dpos]
            self.dpos += 1
            return f, False
        f = _face_up_draw(self.upf, self.upc)
        self.played[f] -= 1
        return f, True

    def _draw_three(self, seat: Seat, log: list[Event] | None) -> None:
        hand = self.hands[seat]
        known = self.known[seat]
        hidden: list[str] = []
        public: list[str] = []
        for _ in range(3):
            f, up = self._draw()
            hand[f] += 1
            if up:
                known[f] += 1
                public.append(CF_NAME[f])
            else:
                hidden.append(CF_NAME[f])
        self.hsize[seat] += 3
        if hidden:
            # each hidden tile may be any face: loosen what others could infer about this hand
            k = len(hidden)
            cap = self.caps[seat]
            for f in FACES:
                if cap[f] < NO_CAP:
                    cap[f] = min(NO_CAP, cap[f] + k)
        if log is not None:
            log.append(event("draw", seat, {seat: {"tiles": hidden + public}}, count=3, face_up=public))

    def _part2(self, log: list[Event] | None) -> None:
        """Turn stock tiles until one stays in the pool, a choice is needed, or the stock runs out."""
        seat = self.turn
        pool = self.pool
        match = self.match
        down = self.down
        while self.nstock:
            dpos = self.dpos
            if dpos < len(down):
                # a face-down tile, as ``_draw`` takes it (spelled out: most flips are of these)
                self.nstock -= 1
                s = down[dpos]
                self.dpos = dpos + 1
                up = False
            else:
                s, up = self._draw()
            found = -1
            several = False
            for t in match[s]:
                if pool[t]:
                    if found >= 0:
                        several = True
                        break
                    found = t
            if log is not None:
                log.append(event("flip", seat, tile=CF_NAME[s], was_face_up=up))
            if found < 0:
                pool[s] += 1
                break
            if several:
                self.pending = s
                self.phase = CHOOSE
                return
            pool[found] -= 1
            self._catch(seat, s, found)
            if log is not None:
                log.append(event("take", seat, flipped=CF_NAME[s], pool=CF_NAME[found]))
            if self.classic:
                break
        self._end_turn(log)

    def _end_turn(self, log: list[Event] | None) -> None:
        if self.nstock:
            self.turn = (self.turn + 1) % self.players
        else:
            self._end_game(log)

    def _end_game(self, log: list[Event] | None) -> None:
        n = self.players
        if self.halt_at_deal_end and log is None:
            # a search's sample: the points are all it reads; the game counts as done (an entry in
            # ``deals``) without its summary, and the world stops here
            net, _payments = settle([catch_scores(c, self.classic)[1] for c in self.catches])
            points = self.points
            for s in range(n):
                points[s] += net[s]
            self.deals.append({"game": self.game + 1, "halted": True})
            self.phase = OVER
            return
        scored = [catch_scores(c, self.classic) for c in self.catches]
        raw = [r for r, _ in scored]
        rounded = [s for _, s in scored]
        net, payments = settle(rounded)
        for s in range(n):
            self.points[s] += net[s]
        top = max(rounded)
        winners = [s for s in range(n) if rounded[s] == top]
        summary: dict[str, Any] = {"game": self.game + 1, "first": self.first, "catches": [_names(c) for c in self.catches],
                   "raw": raw, "rounded": rounded, "winners": winners if len(winners) < n else [],
                   "payments": payments, "net": net, "points": self.points[:]}
        self.deals.append(summary)
        if log is not None:
            log.append(event("game_end", None, **summary))
        if len(self.deals) < self.games and self.halt_at_deal_end:
            self.phase = OVER
        elif len(self.deals) < self.games:
            # the winner opens the next game; among tied top scorers the first in turn order from the last opener
            nxt = next(s for s in ((self.first + k) % n for k in range(n)) if rounded[s] == top)
            self._deal(self.game + 1, nxt, log)
        else:
            self.phase = OVER
            if log is not None:
                log.append(event("match_end", None, points=self.points[:]))

    # ------------------------------------------------------------------ information

    def view(self, seat: Seat | None) -> dict[str, Any]:
        n = self.players
        seats = []
        for s in range(n):
            raw, rounded = catch_scores(self.catches[s], self.classic)
            seats.append({"seat": s, "hand_size": self.hsize[s], "score": self.points[s],
                          "catch": _names(self.catches[s]), "catch_points": raw, "catch_rounded": rounded,
                          "known_hand": _names(self.known[s])})
        # stacks listed from the left end of the stock (newest first), with the tiles to their left
        stacks = []
        offset = 0
        for f in reversed(self.upf):
            stacks.append({"tile": CF_NAME[f], "count": self.upc[f], "from_left": offset})
            offset += self.upc[f]
        table = {"game": self.game + 1, "games": self.games, "profile": self.options["profile"],
                 "supreme_extra": self.extra, "first": self.first,
                 "part": 2 if self.phase == CHOOSE else 1, "pool": _names(self.pool),
                 "flipped": CF_NAME[self.pending] if self.pending >= 0 else None,
                 "stock_size": self.nstock, "stock_face_down": len(self.down) - self.dpos,
                 "stacks": stacks}
        return {"rules": "tiuu", "players": n, "to_move": self.to_move, "finished": self.phase == OVER,
                "you": seat, "hand": None if seat is None else _names(self.hands[seat]),
                "seats": seats, "table": table, "result": self.result() if self.phase == OVER else None}

    def restocked(self, rng: random.Random) -> TiuUState:
        """Every hand kept, the face-down stock's order and the seed of later games redrawn
        (``State.restocked``); the face-up stacks stay where they are, as everybody has seen them."""
        w = cast(TiuUState, super().restocked(rng))
        rest = sorted(self.down[self.dpos:])  # the same copy whatever the stock's true order
        shuffle(rest, rng)
        w.down = tuple(rest)
        w.dpos = 0
        return w

    def determinize(self, seat: Seat, rng: random.Random) -> TiuUState:
        return self.determinizer(seat)(rng)

    def determinizer(self, seat: Seat) -> Callable[[random.Random], TiuUState]:
        """``determinize(seat, rng)`` as a function of ``rng``: the tiles ``seat`` has not seen are counted
        once (the copies not in the pool, not played, not in its hand and not known in another hand), and
        each call shuffles them and deals them to the other hands within their caps and to the face-down
        stock (a search calls it once per iteration)."""
        n = self.players
        # per face: the copies not in the pool, not played (catches, face-up stacks), not in the own hand
        unseen = [t - p - q - o
                  for t, p, q, o in zip(TOTAL, self.pool, self.played, self.hands[seat], strict=True)]
        if self.pending >= 0:
            unseen[self.pending] -= 1
        others = [s for s in range(n) if s != seat]
        need = []
        for s in others:
            k = self.known[s]
            unseen = list(map(sub, unseen, k))
            need.append(self.hsize[s] - sum(k))
        # each face as many times as it is unseen, in face order: where every shuffle starts
        canonical = list(chain.from_iterable(map(repeat, FACES, unseen)))
        dealt = sum(need)
        stock = len(self.down) - self.dpos
        known = [self.known[s] for s in others]
        over = self.phase == OVER

        def deal(rng: random.Random) -> TiuUState:
            w = self.clone()
            w.seed = rng.getrandbits(63)
            if over:
                return w
            flat = canonical[:]
            shuffle(flat, rng)
            hidden = self._assign(flat, others, need, rng)
            for s, base, tiles in zip(others, known, hidden, strict=True):
                hand = base[:]
                for f in tiles:
                    hand[f] += 1
                w.hands[s] = hand
            w.down = tuple(flat[dealt:dealt + stock])
            w.dpos = 0
            return w

        return deal

    def _assign(self, flat: list[Face], others: list[Seat], need: list[int],
                rng: random.Random) -> list[list[Face]]:
        """Deal the shuffled unseen tiles into the other hands within their caps; ``flat`` is reordered so
        that its first ``sum(need)`` tiles are the hands' and the rest is the stock in draw order."""
        caps = [self.caps[s] for s in others]
        # When the first ``need[0]`` tiles fit the first hand's caps, the next ``need[1]`` the
        # second's and so on, the deal below gives each hand exactly that run and leaves ``flat`` as it is
        # (every hand takes the tiles it can in order, the rest go on to the next): the caps are checked
        # with a count per capped face, not tile by tile
        hands: list[list[Face]] = []
        start = 0
        for k, cap in zip(need, caps, strict=True):
            run = flat[start:start + k]
            if not _within(run, cap):
                break
            hands.append(run)
            start += k
        else:
            return hands
        return self._assign_by_draws(flat, caps, need, rng)

    @classmethod
    def _assign_by_draws(cls, flat: list[Face], caps: list[list[int]], need: list[int],
                         rng: random.Random) -> list[list[Face]]:
        """``_assign`` tile by tile: each tile to the first hand with room whose cap allows it, else to the
        stock; reshuffled when the hands are not full at the end, up to 30 times, then by flow."""
        wanted = sum(need)
        for _ in range(30):
            hands: list[list[Face]] = [[] for _ in caps]
            counts = [[0] * NF for _ in caps]
            rest: list[Face] = []
            placed = 0
            for j, f in enumerate(flat):
                if placed == wanted:
                    # every hand is full: the rest of the tiles go to the stock as they come (the
                    # stock is most of the unseen tiles, and each of them used to try every hand first)
                    rest += flat[j:]
                    break
                for i, cap in enumerate(caps):
                    if len(hands[i]) < need[i] and counts[i][f] < cap[f]:
                        hands[i].append(f)
                        counts[i][f] += 1
                        placed += 1
                        break
                else:
                    rest.append(f)
            if placed == wanted:
                flat[:] = [f for h in hands for f in h] + rest
                return hands
            shuffle(flat, rng)
        return cls._assign_by_flow(flat, caps, need, rng)

    @staticmethod
    def _assign_by_flow(flat: list[Face], caps: list[list[int]], need: list[int],
                        rng: random.Random) -> list[list[Face]]:
        """Exact fallback when random dealing keeps failing tight caps: unit augmenting paths on
        faces -> hands (a tiny transportation problem); the true deal proves a solution exists."""
        supply = [0] * NF
        for f in flat:
            supply[f] += 1
        m = len(need)
        flow = [[0] * NF for _ in range(m)]
        used = [0] * NF
        filled = [0] * m

        def augment(i: int, seen: set[tuple[int, int]]) -> bool:
            # hand i wants one more tile: a free unit of some face, or one taken back from another hand
            for f in FACES:
                if flow[i][f] >= caps[i][f] or (i, f) in seen:
                    continue
                seen.add((i, f))
                if used[f] < supply[f]:
                    used[f] += 1
                    flow[i][f] += 1
                    return True
                for j in range(m):
                    if j != i and flow[j][f] and (j, f) not in seen:
                        flow[j][f] -= 1
                        if augment(j, seen):
                            flow[i][f] += 1
                            return True
                        flow[j][f] += 1
            return False

        for i in range(m):
            while filled[i] < need[i]:
                if not augment(i, set()):
                    raise BadState("no deal of the unseen tiles fits what the players revealed")
                filled[i] += 1
        hands = [[f for f in FACES for _ in range(flow[i][f])] for i in range(m)]
        left = supply[:]
        for h in hands:
            for f in h:
                left[f] -= 1
        rest = [f for f in FACES for _ in range(left[f])]
        shuffle(rest, rng)
        flat[:] = [f for h in hands for f in h] + rest
        return hands

    # ------------------------------------------------------------------ scoring

    @property
    def deals_done(self) -> int:
        return len(self.deals)

    def running_payoffs(self) -> list[float]:
        return [float(p) for p in self.points]

    def result(self) -> dict[str, Any]:
        resigned = self.deals[-1].get("resigned") if self.deals else None
        ranking = ranking_from([float(p) for p in self.points])
        out = {"reason": "all games played" if self.phase == OVER else None,
               "scores": self.points[:], "payoffs": self.running_payoffs(),
               "ranking": ranking,
               "deals": [dict(d) for d in self.deals]}
        if resigned is not None:
            out.update(reason="resigned", resigned=resigned, ranking=resigned_ranking(ranking, [resigned]))
        return out

    def _resign(self, seat: Seat, log: list[Event]) -> None:
        """The resigning seat pays each other seat its rounded catch so far, at least 10."""
        n = self.players
        rounded = [catch_scores(c, self.classic)[1] for c in self.catches]
        net = [0] * n
        payments = []
        for q in range(n):
            if q != seat:
                amount = max(10, rounded[q])
                net[seat] -= amount
                net[q] += amount
                payments.append({"from": seat, "to": q, "amount": amount})
        for s in range(n):
            self.points[s] += net[s]
        self.deals.append({"game": self.game + 1, "first": self.first, "resigned": seat, "rounded": rounded,
                           "payments": payments, "net": net, "points": self.points[:]})
        self.phase = OVER
        log.append(event("resign", seat, payments=payments, points=self.points[:]))
        log.append(event("match_end", None, points=self.points[:], resigned=seat))


register(RuleSet(
    id="tiuu",
    title="Tiu U (fishing)",
    min_players=2,
    max_players=3,
    options=(
        Option("games", int, 1, "games in the match; points (net payments) accumulate", minimum=1, maximum=100),
        Option("supreme_extra", bool, False, "4-2 also matches every 6-pip tile and 2-1 also matches 2-1"),
        Option("profile", str, "seed", "seed: seed 000's rules; classic: one flip per turn, optional capture, "
               "only the small-fish sum rounded, the fourth tile captures the face-up three",
               choices=("seed", "classic")),
    ),
    state_class=TiuUState,
    description="Chinese domino fishing game with a double set: pair tiles of equal pips from hand and stock; "
                "big fish score 2 per pip, small fish their red pips (seed 000).",
    default_players=2,
    variants=((2, {"profile": "classic"}), (3, {"profile": "classic"}), (2, {"supreme_extra": True}),
              (2, {"games": 2}), (3, {"games": 2})),
))


# --------------------------------------------------------------------------- search kit
# What ``ai/`` may use of this engine beyond the protocol (``SEARCH_KIT``): tables to read, part 1's
# legality, and a rollout that plays a search's sampled world, built for a policy.

Policy = Callable[[State, random.Random], Move]
Rollout = Callable[[State, random.Random], None]


#: per match table and face: its mates, each with the fish of the pair, in legal order (the rollout's capture scan)
_PAIRS: dict[bool, tuple[tuple[tuple[Face, int], ...], ...]] = {
    extra: tuple(tuple((t, FISH[h] + FISH[t]) for t in table[h]) for h in FACES) for extra, table in MATCH.items()}


def _face_up_draw(upf: list[Face], upc: list[int]) -> Face:
    """The draw once the face-down stock is gone: a tile of the oldest face-up stack, which leaves the stock
    when it is the last (``_draw`` also counts it out of ``played``, which the rollout does not keep)."""
    f = upf[0]
    upc[f] -= 1
    if not upc[f]:
        del upf[0]
    return f


def rollout_of(playout: Policy, *, explore: float, growth: int, growth_stock: int) -> Rollout:
    """``rollout(state, rng)``: ``playout`` move after move until the current game ends, in one call, with
    the same moves and draws as the loop of ``playout`` and ``apply``.  ``playout`` must be this policy,
    drawing from ``rng`` as follows: one legal move is played without a draw; else, when ``rng.random() <
    explore``, a uniform legal move (``below``); else the first legal move of the highest value: a capture
    or take its fish (``FISH`` of both tiles), ``flip`` 0, the classic fourth tile four times its fish,
    tripling and the seed's fourth tile ``growth`` while the stock holds more than ``growth_stock`` tiles,
    else 1.  On a state that does not halt at the end of the game it plays ``playout`` itself.

    On a search's sample (a state that halts at the end of the game) the whole game is played on local
    variables: part 1's legal moves (``part1_moves``, in its order) are counted and the best of them found
    in one scan of the hand, without a move list (the uniform move is found by a second scan), and the
    moves change only the hands, the pool, the catches and the stock.  So the sample ends with its points,
    phase and ``deals`` as ``apply`` leaves them, with the same hands, pool, catches, stock and turn, but
    with the bookkeeping that only determinizing, ``view`` and the public record read left as it was: what
    is known of each hand (``known``, ``caps``), the counts derived from the rest (``hsize``, ``played``)
    and ``history``.  A search throws its sample away once its points are read."""

    def rollout(state: State, rng: random.Random) -> None:
        st = cast(TiuUState, state)
        if not st.halt_at_deal_end:
            play_to_deal_end(st, playout, rng)
            return
        if st.phase == OVER:
            # the search's tree played the game to its end: nothing is left to play
            return
        random_ = rng.random
        classic = st.classic
        match = st.match
        pairs = _PAIRS[st.extra]
        hands = st.hands
        pool = st.pool
        catches = st.catches
        upf = st.upf
        upc = st.upc
        down = st.down
        ndown = len(down)
        dpos = st.dpos
        nstock = st.nstock
        players = st.players
        turn = st.turn
        # a flipped tile waiting for its take (``CHOOSE``) is where the game resumes
        pending = st.pending if st.phase == CHOOSE else -1
        while True:
            catch = catches[turn]
            if pending < 0:
                # --- part 1: the number of legal moves and the first of the highest value, in one scan
                hand = hands[turn]
                long_stock = nstock >= MIN_STOCK
                n = 0
                best = -1
                a = b = -1
                specials: list[tuple[int, Face]] | None = None
                for h in compress(FACES, hand):
                    for t, v in pairs[h]:
                        if pool[t]:
                            n += 1
                            if v > best:
                                best = v
                                a = h
                                b = t
                    # tripling: two in the pool, civil, the fourth copy not played (no catch, no face-up stack)
                    if (long_stock and pool[h] == 2 and CF_CIVIL[h] and not upc[h]
                            and not any(c[h] for c in catches)):
                        if specials is None:
                            specials = []
                        specials.append((TRIPLE, h))
                if upf:
                    for h in upf:
                        if upc[h] == 3 and hand[h] and (long_stock or classic):
                            if specials is None:
                                specials = []
                            specials.append((FOURTH, h))
                    if specials is not None and len(specials) > 1:
                        # legal order: by face, tripling before the fourth tile
                        specials.sort(key=lambda m: (m[1], m[0]))
                kind = FLIP if a < 0 else CAPTURE
                if specials is not None:
                    grow = growth if nstock > growth_stock else 1
                    for k, h in specials:
                        n += 1
                        v = 4 * FISH[h] if (k == FOURTH and classic) else grow
                        if v > best:
                            best = v
                            kind = k
                            a = h
                if not n or classic:
                    n += 1  # flip
                if n > 1 and random_() < explore:
                    # the uniform move: the i-th of the legal order
                    i = below(rng, n)
                    kind = FLIP
                    for h in compress(FACES, hand):
                        for t in match[h]:
                            if pool[t]:
                                if not i:
                                    kind = CAPTURE
                                    break
                                i -= 1
                        if kind == CAPTURE:
                            a = h
                            b = t
                            break
                    else:
                        if specials is not None and i < len(specials):
                            kind, a = specials[i]
                if kind == CAPTURE:
                    hand[a] -= 1
                    pool[b] -= 1
                    catch[a] += 1
                    catch[b] += 1
                elif kind != FLIP:
                    hand[a] -= 1
                    if kind == FOURTH and classic:
                        # the fourth copy captures the face-up three; nothing is drawn
                        upf.remove(a)
                        upc[a] = 0
                        nstock -= 3
                        catch[a] += 4
                    else:
                        if kind == TRIPLE:
                            pool[a] -= 2
                            upf.append(a)
                            upc[a] = 3
                            nstock += 3
                        else:
                            upc[a] = 4
                            nstock += 1
                        for _ in range(3):
                            nstock -= 1
                            if dpos < ndown:
                                f = down[dpos]
                                dpos += 1
                            else:
                                f = _face_up_draw(upf, upc)
                            hand[f] += 1
            # --- part 2: flips until one stays in the pool (a pending choice first)
            while pending >= 0 or nstock:
                if pending >= 0:
                    s = pending
                    pending = -1
                    several = True
                else:
                    nstock -= 1
                    if dpos < ndown:
                        s = down[dpos]
                        dpos += 1
                    else:
                        s = _face_up_draw(upf, upc)
                    # the flipped tile's mates as ``_part2`` finds them, spelled out (a call per flip costs more)
                    found = -1
                    several = False
                    for t in match[s]:
                        if pool[t]:
                            if found >= 0:
                                several = True
                                break
                            found = t
                    if found < 0:
                        pool[s] += 1
                        break
                if several:
                    # the take: a uniform one when exploring, else the first of the most fish
                    options = [t for t in match[s] if pool[t]]
                    if random_() < explore:
                        found = options[below(rng, len(options))]
                    else:
                        found = options[0]
                        for t in options:
                            if FISH[t] > FISH[found]:
                                found = t
                pool[found] -= 1
                catch[s] += 1
                catch[found] += 1
                if classic:
                    break
            if not nstock:
                break
            turn = (turn + 1) % players
        st.dpos = dpos
        st.nstock = 0
        st.turn = turn
        st.pending = -1
        if players == 2 and not classic:
            # the seed's two-player settlement, as ``settle`` pays it
            mine = round_up(sum(map(mul, FISH, catches[0])))
            theirs = round_up(sum(map(mul, FISH, catches[1])))
            net = [mine - theirs, theirs - mine]
        else:
            net, _payments = settle([catch_scores(c, classic)[1] for c in catches])
        points = st.points
        for seat in range(players):
            points[seat] += net[seat]
        st.deals.append({"game": st.game + 1, "halted": True})
        st.phase = OVER

    return rollout


def _part1_move(kind: int, a: Face, b: Face) -> Move:
    if kind == CAPTURE:
        return CAPTURE_MOVES[a][b]
    if kind == TRIPLE:
        return TRIPLE_MOVES[a]
    if kind == FOURTH:
        return FOURTH_MOVES[a]
    return FLIP_MOVE


def part1_replay(world: State) -> Iterator[tuple[TiuUState, Seat, Move]]:
    """The current game's part-1 moves (``history``) as ``world``'s hands have them: for each, the position
    it was chosen at (one state, rewritten for every step: valid until the next), the mover and the move,
    oldest first -- what inference scores the other seats' choices on (``ai.inference``).

    A seat's hand at an earlier move is its hand now plus the tiles it has played from hand since (a
    capture's hand tile, the tile that triples or completes a face-up stack): hands only grow by the three
    tiles of tripling and of the seed's fourth tile, whose hidden ones the world cannot place in time.  So a
    seat's moves are given back to its last such draw, not before it (the drawing move itself neither).  The
    table of each move is the public record's; the rest of the position is ``world``'s now, which part 1's
    legality (``part1_moves``) and the heuristics' values do not read."""
    w = cast(TiuUState, world)
    hist = w.history
    if not hist:
        return
    hands = [h[:] for h in w.hands]
    open_seats = [True] * w.players
    steps: list[tuple[int, list[int]]] = []
    for i in range(len(hist) - 1, -1, -1):
        s, kind, a, _b = hist[i][:4]
        if not open_seats[s]:
            continue
        if kind == TRIPLE or (kind == FOURTH and not w.classic):
            open_seats[s] = False
            continue
        if kind != FLIP:
            hands[s][a] += 1
        steps.append((i, hands[s][:]))
    before = w.clone()
    before.phase = PART1
    before.pending = -1
    for i, hand in reversed(steps):
        s, kind, a, b, pool, played, upc, upf, nstock = hist[i]
        before.turn = s
        before.hands[s] = hand
        before.hsize[s] = sum(hand)
        before.pool = list(pool)
        before.played = list(played)
        before.upc = list(upc)
        before.upf = list(upf)
        before.nstock = nstock
        yield before, s, _part1_move(kind, a, b)


#: the names ``ai/`` may use of this module besides the ``State`` protocol: the search kit
SEARCH_KIT = ("CAPTURE", "FISH", "FLIP", "FOURTH", "PART1", "TAKE", "TRIPLE", "TiuUState", "part1_moves",
              "part1_replay", "rollout_of")
