"""Kozel (Козёл, "Goat"): the Russian draw-domino game of seed 002, individual and team play.

Rules: ``docs/rules/kozel.md`` (seed 002, Latvian translation of a Russian how-to article, with the
English copy of the same article where the Latvian is garbled), with its **Choice** decisions.

Individual play (kozel.md §1-§8): 2-4 players, 7 tiles each for 2 players and 5 for 3-4, the rest is the
bazaar.  The holder of the highest double leads it (no double dealt: the highest non-double, ordered by
high half then low half, INTERPRETATION §3), play goes to seat + 1.  A player must play a tile that
matches an end when he has one; holding ``L-L`` and ``R-R`` (``L != R``) he may lay both in one move.
With nothing playable he draws (one tile per ``draw`` move, a decision) and, once the bazaar is empty,
passes.  The round ends when a player goes out or in a *fish* (bazaar empty and nobody can play).  Everybody
records the pips left in his hand (a lone 0-0 counts 25; option ``zero_zero_always_25``), except that a
record is only *opened* by an amount of at least ``opening_threshold`` (13); a smaller amount before that
is lost (option ``carry_unopened``: it hangs and is added to the next amount).  The match ends after the
round in which somebody reaches ``target`` (101): the highest total is the goat, equal highest share it.

Team play (``teams``, kozel.md §9): four players, partners opposite (seats 0 & 2 against 1 & 3), seven tiles
each, no bazaar.  The holder of 1-1 leads it in the first round, the previous round's winner leads any tile
later.  When a player goes out the other side records the sum of its two hands; in a fish the side with the
smaller total wins and the other records its own total; equal totals are "eggs": nobody records and the
amount goes to the loser of the next round.  The 13 rule applies per side; the first side to reach the
target is the pair of goats.

Interpretations where the texts are silent (each documented in ``docs/rules/kozel.md``):

* A drawn playable tile is *not* played automatically: the player's next move plays it.  It is then the only
  playable tile (the ends have not changed since he drew), so the legal moves are just its placements.
  Keeping it a separate move lets a frontend show the draw and keeps ``apply`` one step per move.
* A tile that fits both ends (also when both ends show the same number) may go to either end: both are
  listed (``play:6-3@left`` and ``play:6-3@right``); the player chooses, as kozel.md §4.1 says.
* The first tile of a round is laid with its high half on the left.
* ``next_round_starter = "previous_winner"``: the player who went out leads any tile.  The winner of a fish
  (individual play) is the player with the smallest hand; ties go to the first of them in turn order,
  starting with the player who laid the last tile (the one who "made the fish", [KOZ-livegames]).  In team
  play later rounds are always led by the previous winner (kozel.md §9, so ``next_round_starter`` only
  concerns individual play); the winner of a team fish is the player of the winning side with the smaller
  hand (same tie rule); after "eggs" nobody won, so the next round is opened like the first one (1-1).
* Eggs are added to what the next losing side records before the 13 rule is applied.
* The first round with ``previous_winner`` (nobody has won yet) is opened by the highest-double rule.

Resigning (not in the sources): the resigning seat's side writes down whatever brings its total up to
the target (nothing when it is there already), so it is the goat -- in team play the pair of goats -- and the
match ends; the other totals stand.  Payoffs stay mean-centred (zero-sum).  The round in progress gets a
summary with ``reason: "resign"``; the result's ``reason`` is ``"resigned"``.

Hidden information.  Hands and the bazaar are hidden; how many tiles each player drew this round is public.
Every ``draw`` and ``pass`` shows that the player held no tile matching either end at that moment; the forced
first lead shows that nobody was dealt a tile that ranks above it.  Those facts are kept per seat in a compact
public form, ``slots``: one forbidden-tile mask per tile of the hand, ordered from the oldest acquisition to
the newest, stored as "suffix" entries (the mask of slot ``i`` is the OR of ``slots[s][i:]``) so that a void,
which applies to every tile held at that moment, is one OR into the last entry.  A draw appends a free slot;
a play removes the strictest slot that allows the played tile (after a draw that is the drawn tile's slot,
and a tile only a drawn tile can be uses up that draw).  Which held tile was played is not always known;
this choice is the loosest one that is still exact about what the tile shows, so the constraints stay true
of the real hand (never too strict) while every revealed void is kept for the tiles it concerns.  ``determinize`` fills the slots of the other seats from the unseen tiles
with a randomized bipartite matching (most constrained slots first, each drawing uniformly among the free
tiles it allows, augmenting paths on dead ends), which always finds an assignment when one exists, never
gives a seat a tile it has shown it did not hold, and draws every allowed assignment equally often when the
masks are nested (one other seat's always are: two players).  With several seats' voids (three or four
players) random swaps between slots and the bazaar follow the matching (``_mix``), which make every allowed
assignment equally likely too (to within sampling noise at 8 swaps a slot; tested against rejection
sampling).
The round's moves are kept too, public as they are (``history``: mover, move code and, for a play, the
acquisition its tile was taken from), with each slot's acquisition (``origin``: 0 dealt, ``k`` the ``k``-th
draw of the round), so that ``round_replay`` can rebuild the round as any world of the information set has
it: the search's inference (``ai.inference``) scores the other seats' choices on those rebuilt positions.

Search kit (``SEARCH_KIT``, at the end of the module): what ``ai/`` may use of this engine beyond the
protocol -- tables (``NUM_TILES``, ``DOUBLES_BASE``, ``FIRST``, ``LEFT``, ``ZERO_ZERO``), ``pips`` and
``rollout_of(playout, shed=, explore=)`` (the shedding policy played to the end of the round on the
state's own fields) and ``round_replay`` (the round's plays as a world has them, for inference).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial, reduce
from itertools import accumulate, pairwise
from math import inf
from operator import or_
from typing import Any, NamedTuple, cast

from engine.exceptions import BadOptions, BadState, InvalidMove
from engine.game import (
    Event,
    Move,
    Option,
    RuleSet,
    Seat,
    State,
    below,
    event,
    mean_centered,
    play_to_deal_end,
    ranking_from,
    register,
    shuffle,
)
from engine.tiles import D_HI, D_LO, D_NAME, D_OTHER, D_PIPS, NUM_DOMINOES, domino, parse_domino

Tile = int  # a double-six tile id (engine.tiles): 0-0 = 0 ... 6-6 = 27
Mask = int  # a set of tiles as a 28-bit integer

# --------------------------------------------------------------------------- tables (built once)

ALL_TILES: Mask = (1 << NUM_DOMINOES) - 1
ZERO_ZERO: Tile = domino(0, 0)
ONE_ONE: Tile = domino(1, 1)
#: NUM_TILES[n]: the seven tiles that show the number n
NUM_TILES: tuple[Mask, ...] = tuple(
    sum(1 << t for t in range(NUM_DOMINOES) if n in (D_HI[t], D_LO[t])) for n in range(7))
#: who starts (kozel.md §3): doubles from 6-6 down, then non-doubles by high half, then low half
OPENING_ORDER: tuple[Tile, ...] = (
    tuple(domino(n, n) for n in range(6, -1, -1))
    + tuple(domino(h, lo) for h in range(6, 0, -1) for lo in range(h - 1, -1, -1)))
#: OUTRANKED_BY[t]: the tiles that come before t in OPENING_ORDER (nobody was dealt them if t leads)
OUTRANKED_BY: tuple[Mask, ...] = tuple(
    sum(1 << u for u in OPENING_ORDER[:OPENING_ORDER.index(t)]) for t in range(NUM_DOMINOES))
# Pip sums of a hand mask by 7-bit chunks: a round end is on every playout, a bit loop is not needed there.
_PIP_CHUNKS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(D_PIPS[base + i] for i in range(7) if c >> i & 1) for c in range(128)) for base in (0, 7, 14, 21))
#: _CHUNK_TILES[k][c]: the tiles of the 7-bit chunk ``c`` of a mask's bits 7k..7k+6, ascending
_CHUNK_TILES: tuple[tuple[tuple[Tile, ...], ...], ...] = tuple(
    tuple(tuple(base + i for i in range(7) if c >> i & 1) for c in range(128)) for base in (0, 7, 14, 21))

HAND_SIZE = {2: 7, 3: 5, 4: 5}
TEAM_HAND_SIZE = 7

OUT, FISH = "out", "fish"
LEFT, RIGHT, FIRST = 0, 1, 2
_END_NAMES = ("left", "right", "first")

# Move codes (Move.code): t * 4 + end for a tile play; 200 + L * 7 + R for two doubles; -1 draw, -2 pass.
DOUBLES_BASE = 200
_DRAW_CODE, _PASS_CODE = -1, -2


def pips(hand: Mask) -> int:
    """Plain pip total of a hand mask."""
    return (_PIP_CHUNKS[0][hand & 127] + _PIP_CHUNKS[1][hand >> 7 & 127]
            + _PIP_CHUNKS[2][hand >> 14 & 127] + _PIP_CHUNKS[3][hand >> 21 & 127])


def hand_value(hand: Mask, zero_zero_always_25: bool) -> int:
    """What a hand left at the end of a round counts (kozel.md §6.2): pips, with 0-0 worth 25 when it is
    the only tile left (or whenever it is held, with ``zero_zero_always_25``)."""
    if hand >> ZERO_ZERO & 1 and (zero_zero_always_25 or hand == 1 << ZERO_ZERO):
        return pips(hand) + 25
    return pips(hand)


def is_fish(left: int, right: int, table: Mask) -> bool:
    """With the bazaar empty: whether nobody can play on a line with these ends and these tiles on the
    table (``KozelState._is_fish``)."""
    return left == right and not NUM_TILES[left] & ~table


def tiles_of(mask: Mask) -> list[Tile]:
    """The tile ids of a mask, ascending."""
    # by 7-bit chunks from a table, not bit by bit: every determinization lists the unseen tiles
    return [*_CHUNK_TILES[0][mask & 127], *_CHUNK_TILES[1][mask >> 7 & 127],
            *_CHUNK_TILES[2][mask >> 14 & 127], *_CHUNK_TILES[3][mask >> 21 & 127]]


def mask_of(tiles: Iterable[Tile]) -> Mask:
    # ``1 << t`` OR-ed together in C (every determinization builds the hands from tile lists)
    return reduce(or_, map(_BIT, tiles), 0)


_BIT = (1).__lshift__


def names(mask: Mask) -> list[str]:
    """A hand as tile strings, highest tile first."""
    return [D_NAME[t] for t in sorted(tiles_of(mask), key=lambda t: (-D_HI[t], -D_LO[t]))]


def find_opener(hands: Sequence[Mask]) -> tuple[Seat, Tile]:
    """The seat that opens a round by the seed's rule and the tile it must lead (kozel.md §3)."""
    dealt = 0
    for h in hands:
        dealt |= h
    for t in OPENING_ORDER:
        if dealt >> t & 1:
            bit = 1 << t
            for s, h in enumerate(hands):
                if h & bit:
                    return s, t
    raise ValueError("nobody holds a tile")


# --------------------------------------------------------------------------- interned moves

FIRST_MOVES: tuple[Move, ...] = tuple(
    Move(f"play:{D_NAME[t]}", "play", (D_NAME[t],), code=t * 4 + FIRST) for t in range(NUM_DOMINOES))
END_MOVES: tuple[tuple[Move, Move], ...] = tuple(
    (Move(f"play:{D_NAME[t]}@left", "play", (D_NAME[t],), {"end": "left"}, code=t * 4 + LEFT),
     Move(f"play:{D_NAME[t]}@right", "play", (D_NAME[t],), {"end": "right"}, code=t * 4 + RIGHT))
    for t in range(NUM_DOMINOES))
DRAW = Move("draw", "draw", code=_DRAW_CODE)
PASS = Move("pass", "pass", code=_PASS_CODE)


def _doubles_move(left: int, right: int) -> Move:
    a, b = D_NAME[domino(left, left)], D_NAME[domino(right, right)]
    hi, lo = (a, b) if left > right else (b, a)
    return Move(f"doubles:{hi}+{lo}", "doubles", (hi, lo), {"left": a, "right": b},
                code=DOUBLES_BASE + left * 7 + right)


#: DOUBLES[L * 7 + R] (L != R): lay L-L on the left end and R-R on the right end in one move
DOUBLES: dict[int, Move] = {a * 7 + b: _doubles_move(a, b) for a in range(7) for b in range(7) if a != b}
#: DOUBLE_PAIR[L][R]: the mask of L-L and R-R
DOUBLE_PAIR: tuple[tuple[Mask, ...], ...] = tuple(
    tuple((1 << domino(a, a)) | (1 << domino(b, b)) for b in range(7)) for a in range(7))


def _placements(end: int) -> tuple[dict[Mask, list[Move]], ...]:
    # For every end number, every subset of its seven tiles -> the moves that lay them on that end, so that
    # legal_moves() is two dict lookups and a list concatenation (no loop over the hand on the search path).
    out = []
    for n in range(7):
        ts = tiles_of(NUM_TILES[n])
        table: dict[Mask, list[Move]] = {}
        for sub in range(1 << len(ts)):
            chosen = [ts[i] for i in range(len(ts)) if sub >> i & 1]
            table[mask_of(chosen)] = [END_MOVES[t][end] for t in chosen]
        out.append(table)
    return tuple(out)


LEFT_PLAYS = _placements(LEFT)
RIGHT_PLAYS = _placements(RIGHT)


def _scored(plays: tuple[dict[Mask, list[Move]], ...]) -> tuple[dict[Mask, tuple[tuple[Move, Tile, Mask, Mask], ...]], ...]:
    """The same tables, each play as ``(move, tile, the tile's bit, the tiles that match the number it leaves
    showing at its end)``: what a rollout's greedy choice reads of a play (``rollout_of``)."""
    return tuple({sub: tuple((m, m.code >> 2, 1 << (m.code >> 2), NUM_TILES[D_OTHER[m.code >> 2][n]]) for m in moves)
                  for sub, moves in table.items()}
                 for n, table in enumerate(plays))


#: ``LEFT_PLAYS`` / ``RIGHT_PLAYS`` as the greedy rollout reads them (``_scored``): built once, shared by every
#: ``rollout_of``
LEFT_SCORED = _scored(LEFT_PLAYS)
RIGHT_SCORED = _scored(RIGHT_PLAYS)
_NEXT = {n: tuple((s + 1) % n for s in range(n)) for n in (2, 3, 4)}


# --------------------------------------------------------------------------- the state

class KozelState(State):
    """One Kozel match.  Hands are tile masks; ``line`` is the list of placements (move codes) in order;
    ``history`` the round's moves as ``(seat, move code, origin, origin)`` (the acquisitions a play's tiles
    were taken from, -1 where there is none) and ``origin`` each hand slot's acquisition.

    Scores are kept per *side*: a side is a seat in individual play and a partnership (seat % 2) in team
    play.  ``totals``, ``opened``, ``carry`` and ``deals`` are replaced, never mutated, so ``clone`` shares
    them.
    """

    move_fields = State.move_fields | {"end", "left", "right"}

    players: int
    seed: int
    options: dict[str, Any]
    teams: bool
    target: int
    threshold: int
    carry_on: bool
    zz25: bool
    winner_leads: bool
    nsides: int
    next: tuple[Seat, ...]
    round: int
    hands: list[Mask]
    bazaar: list[Tile]
    line: list[int]
    table: Mask
    left: int
    right: int
    turn: int
    drawn: list[int]
    slots: list[list[Mask]]
    origin: list[list[int]]
    history: list[tuple[Seat, int, int, int]]
    lead: int
    opener: Seat
    last_player: int
    winner: int
    totals: list[int]
    opened: list[bool]
    carry: list[int]
    eggs: int
    deals: list[dict[str, Any]]

    # ---- construction

    @classmethod
    def check_options(cls, options: dict[str, Any], players: int) -> None:
        if options["teams"] and players != 4:
            raise BadOptions(f"option 'teams' needs exactly 4 players, not {players}", "teams")

    @classmethod
    def new(cls, players: int, seed: int, options: dict[str, Any]) -> KozelState:
        st = cls._blank(players, seed, options)
        st._deal_round(None)
        return st

    @classmethod
    def _blank(cls, players: int, seed: int, options: dict[str, Any]) -> KozelState:
        st = cls.__new__(cls)
        st.players = players
        st.seed = seed
        st.options = dict(options)
        st.teams = bool(options["teams"])
        st.target = int(options["target"])
        st.threshold = int(options["opening_threshold"])
        st.carry_on = bool(options["carry_unopened"])
        st.zz25 = bool(options["zero_zero_always_25"])
        st.winner_leads = options["next_round_starter"] == "previous_winner"
        st.nsides = 2 if st.teams else players
        st.next = _NEXT[players]
        st.round = 0
        st.hands = [0] * players
        st.bazaar = []
        st.line = []
        st.table = 0
        st.left = st.right = -1
        st.turn = -1
        st.drawn = [0] * players
        st.slots = [[] for _ in range(players)]
        st.origin = [[] for _ in range(players)]
        st.history = []
        st.lead = -1
        st.opener = -1
        st.last_player = -1
        st.winner = -1
        st.totals = [0] * st.nsides
        st.opened = [False] * st.nsides
        st.carry = [0] * st.nsides
        st.eggs = 0
        st.deals = []
        return st

    @classmethod
    def from_position(cls, hands: Sequence[Sequence[str]], *, bazaar: Sequence[str] = (),
                      line: Sequence[tuple[str, str]] = (), to_move: Seat | None = None,
                      options: Mapping[str, Any] | None = None, seed: int = 0, round_no: int = 0,
                      totals: Sequence[int] | None = None, opened: Sequence[bool] | None = None,
                      carry: Sequence[int] | None = None, eggs: int = 0, previous_winner: Seat = -1,
                      drawn: Sequence[int] | None = None) -> KozelState:
        """A state built from chosen hands, bazaar (drawn from the end of the list) and line (placements
        ``(tile, "first" | "left" | "right")`` in the order they were laid), for tests and analysis.

        With an empty line the opener follows the rules (``previous_winner`` as the last round's winner);
        otherwise ``to_move`` says whose turn it is.  Nothing about voids is assumed known.
        """
        n = len(hands)
        opts = KOZEL.validate_options(options, n)
        st = cls._blank(n, seed, opts)
        st.round = round_no
        st.hands = [mask_of([parse_domino(t) for t in h]) for h in hands]
        st.bazaar = [parse_domino(t) for t in bazaar]
        st.winner = previous_winner
        seen = [t for h in st.hands for t in tiles_of(h)] + st.bazaar
        if len(set(seen)) != len(seen):
            raise ValueError("a tile is given twice")
        for s in range(n):
            st.slots[s] = [0] * len(tiles_of(st.hands[s]))
            st.origin[s] = [0] * len(st.slots[s])
        if totals is not None:
            st.totals = list(totals)
            st.opened = [t > 0 for t in totals] if opened is None else list(opened)
        if carry is not None:
            st.carry = list(carry)
        if drawn is not None:
            st.drawn = list(drawn)
        st.eggs = eggs
        if not line:
            st._set_opener()
            return st
        for k, (name, end) in enumerate(line):
            t = parse_domino(name)
            if t in seen or st.table >> t & 1:
                raise ValueError(f"{name} is both on the table and in a hand or the bazaar")
            if k == 0:
                st.left, st.right = D_HI[t], D_LO[t]
                st.line.append(t * 4 + FIRST)
            elif end == "left" and D_OTHER[t][st.left] >= 0:
                st.left = D_OTHER[t][st.left]
                st.line.append(t * 4 + LEFT)
            elif end == "right" and D_OTHER[t][st.right] >= 0:
                st.right = D_OTHER[t][st.right]
                st.line.append(t * 4 + RIGHT)
            else:
                raise ValueError(f"{name} does not fit the {end} end")
            st.table |= 1 << t
        if to_move is None:
            raise ValueError("a position with tiles on the table needs to_move")
        st.turn = st.opener = to_move
        return st

    def _deal_round(self, log: list[Event] | None) -> None:
        """Deal the round ``self.round`` from its own seeded generator and find the opener."""
        n = self.players
        rng = random.Random(f"{self.seed}/{self.round}")
        rnd = rng.random
        # Sorting by random keys: a deterministic uniform shuffle, about twice as fast as rng.shuffle.
        order = sorted(range(NUM_DOMINOES), key=lambda _: rnd())
        k = TEAM_HAND_SIZE if self.teams else HAND_SIZE[n]
        hands = []
        for s in range(n):
            m = 0
            for t in order[s * k:(s + 1) * k]:
                m |= 1 << t
            hands.append(m)
        self.hands = hands
        self.bazaar = order[n * k:]
        self.line = []
        self.table = 0
        self.left = self.right = -1
        self.drawn = [0] * n
        self.slots = [[0] * k for _ in range(n)]
        self.origin = [[0] * k for _ in range(n)]
        self.history = []
        self._set_opener()
        if log is not None:
            log.append(event("deal", None, secret={s: {"hand": names(hands[s])} for s in range(n)},
                             round=self.round + 1, hand_sizes=[k] * n, bazaar_size=len(self.bazaar),
                             opener=self.opener, lead=D_NAME[self.lead] if self.lead >= 0 else None))

    def _set_opener(self) -> None:
        """Who leads this round and with what (kozel.md §3, §9); records what the forced lead reveals."""
        hands = self.hands
        excluded = 0
        if self.round > 0 and self.winner >= 0 and (self.teams or self.winner_leads):
            self.opener, self.lead = self.winner, -1
        elif self.teams:
            holder = next((s for s in range(self.players) if hands[s] >> ONE_ONE & 1), -1)
            if holder < 0:
                # Only a hand-made position can lack 1-1 in the hands; fall back to the seed's rule.
                self.opener, self.lead = find_opener(hands)
                excluded = OUTRANKED_BY[self.lead]
            else:
                self.opener, self.lead = holder, ONE_ONE
        else:
            self.opener, self.lead = find_opener(hands)
            # Nobody was dealt a tile that ranks above the forced lead: a void of every dealt slot.
            excluded = OUTRANKED_BY[self.lead]
        if excluded:
            for sl in self.slots:
                if sl:
                    sl[-1] |= excluded
        self.turn = self.opener

    def clone(self) -> KozelState:
        st = KozelState.__new__(KozelState)
        # One C-level dict copy, then fresh copies of the containers that moves mutate in place.
        st.__dict__.update(self.__dict__)
        st.hands = self.hands[:]
        st.bazaar = self.bazaar[:]
        st.line = self.line[:]
        st.drawn = self.drawn[:]
        st.slots = [sl[:] for sl in self.slots]
        st.origin = [o[:] for o in self.origin]
        st.history = self.history[:]
        return st

    # ---- serialization

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": "kozel", "format": 1, "players": self.players, "seed": self.seed,
            "options": dict(self.options), "round": self.round,
            "hands": [names(h) for h in self.hands], "bazaar": [D_NAME[t] for t in self.bazaar],
            "line": [[D_NAME[c >> 2], _END_NAMES[c & 3]] for c in self.line],
            "left": self.left, "right": self.right, "turn": self.turn,
            "drawn": list(self.drawn), "slots": [list(sl) for sl in self.slots],
            "origin": [list(o) for o in self.origin], "history": [list(h) for h in self.history],
            "lead": D_NAME[self.lead] if self.lead >= 0 else None, "opener": self.opener,
            "last_player": self.last_player, "winner": self.winner,
            "totals": list(self.totals), "opened": list(self.opened), "carry": list(self.carry),
            "eggs": self.eggs, "deals": [dict(d) for d in self.deals],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> KozelState:
        try:
            if d.get("rules") != "kozel" or d.get("format") != 1:
                raise BadState("not a stored Kozel state of format 1")
            n = d["players"]
            opts = KOZEL.validate_options(d["options"], n)
            st = cls._blank(n, int(d["seed"]), opts)
            st.round = int(d["round"])
            st.hands = [mask_of([parse_domino(t) for t in h]) for h in d["hands"]]
            st.bazaar = [parse_domino(t) for t in d["bazaar"]]
            ends = {"left": LEFT, "right": RIGHT, "first": FIRST}
            st.line = [parse_domino(t) * 4 + ends[e] for t, e in d["line"]]
            st.table = mask_of([c >> 2 for c in st.line])
            st.left, st.right, st.turn = int(d["left"]), int(d["right"]), int(d["turn"])
            st.drawn = [int(x) for x in d["drawn"]]
            st.slots = [[int(x) for x in sl] for sl in d["slots"]]
            # states stored before the round's history was kept: every slot dealt, no history
            st.origin = [[int(x) for x in o] for o in d.get("origin", [[0] * len(sl) for sl in st.slots])]
            st.history = [(int(a), int(b), int(c), int(e)) for a, b, c, e in d.get("history", [])]
            st.lead = parse_domino(d["lead"]) if d["lead"] is not None else -1
            st.opener, st.last_player, st.winner = int(d["opener"]), int(d["last_player"]), int(d["winner"])
            st.totals = [int(x) for x in d["totals"]]
            st.opened = [bool(x) for x in d["opened"]]
            st.carry = [int(x) for x in d["carry"]]
            st.eggs = int(d["eggs"])
            st.deals = [dict(x) for x in d["deals"]]
        except BadState:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            raise BadState(f"unreadable Kozel state: {e}") from None
        if (len(st.hands) != n or len(st.slots) != n or len(st.totals) != st.nsides
                or any(len(tiles_of(h)) != len(sl) for h, sl in zip(st.hands, st.slots, strict=True))
                or [len(o) for o in st.origin] != [len(sl) for sl in st.slots]):
            raise BadState("inconsistent Kozel state")
        return st

    # ---- moves

    @property
    def to_move(self) -> Seat | None:
        return self.turn if self.turn >= 0 else None

    @property
    def deals_done(self) -> int:
        return self.round

    def legal_moves(self) -> list[Move]:
        s = self.turn
        if s < 0:
            return []
        hand = self.hands[s]
        left = self.left
        if left < 0:
            if self.lead >= 0:
                return [FIRST_MOVES[self.lead]]
            return [FIRST_MOVES[t] for t in tiles_of(hand)]
        right = self.right
        a = hand & NUM_TILES[left]
        b = hand & NUM_TILES[right]
        if a or b:
            moves = LEFT_PLAYS[left][a] + RIGHT_PLAYS[right][b]
            if left != right:
                pair = DOUBLE_PAIR[left][right]
                if hand & pair == pair:
                    moves.append(DOUBLES[left * 7 + right])
            return moves
        return [DRAW] if self.bazaar else [PASS]

    def canonical_move_id(self, move_id: str) -> str:
        """``play:3-6@Left`` -> ``play:6-3@left``; ``doubles:3-3+5-5`` -> ``doubles:5-5+3-3``."""
        if not isinstance(move_id, str):
            raise InvalidMove(f"a move id is a string, not {move_id!r}")
        text = move_id.strip().lower()
        if text in ("draw", "pass"):
            return text
        action, sep, rest = text.partition(":")
        try:
            if action == "play" and sep:
                tile, at, end = rest.partition("@")
                name = D_NAME[parse_domino(tile)]
                if not at:
                    return f"play:{name}"
                if end not in ("left", "right"):
                    raise ValueError(f"the end is 'left' or 'right', not {end!r}")
                return f"play:{name}@{end}"
            if action == "doubles" and sep:
                parts = [parse_domino(t) for t in rest.split("+")]
                if len(parts) != 2 or not all(D_HI[t] == D_LO[t] for t in parts) or parts[0] == parts[1]:
                    raise ValueError("the two-doubles move names two different doubles")
                hi, lo = sorted(parts, reverse=True)
                return f"doubles:{D_NAME[hi]}+{D_NAME[lo]}"
        except ValueError as e:
            raise InvalidMove(f"{move_id!r}: {e}") from None
        raise InvalidMove(f"{move_id!r} is not a Kozel move (play:6-3@left, play:6-6, doubles:5-5+3-3, "
                          "draw, pass)")

    def _apply(self, move: Move, log: list[Event] | None = None) -> None:
        code = move.code
        s = self.turn
        if 0 <= code < DOUBLES_BASE:
            t = code >> 2
            end = code & 3
            hand = self.hands[s] ^ (1 << t)
            self.hands[s] = hand
            self.table |= 1 << t
            self.line.append(code)
            j = drop_slot(self.slots[s], t)
            self.history.append((s, code, self.origin[s].pop(j), -1))
            # ``_placed`` written out: this is the search's path, where a call per play costs about 3%
            if end == LEFT:
                self.left = D_OTHER[t][self.left]
            elif end == RIGHT:
                self.right = D_OTHER[t][self.right]
            else:
                self.left, self.right = D_HI[t], D_LO[t]
            self.last_player = s
            if log is not None:
                log.append(event("play", s, tile=D_NAME[t], end=_END_NAMES[end],
                                 ends=[self.left, self.right], hand_size=len(self.slots[s])))
            self._after_play(s, hand, log)
        elif code >= DOUBLES_BASE:
            a, b = _doubles_of(code)
            hand = self.hands[s] & ~((1 << a) | (1 << b))
            self.hands[s] = hand
            self.table |= (1 << a) | (1 << b)
            self.line.append(a * 4 + LEFT)
            self.line.append(b * 4 + RIGHT)
            o = self.origin[s]
            oa = o.pop(drop_slot(self.slots[s], a))
            self.history.append((s, code, oa, o.pop(drop_slot(self.slots[s], b))))
            self.last_player = s
            if log is not None:
                log.append(event("doubles", s, tiles=list(move.tiles), left=D_NAME[a], right=D_NAME[b],
                                 ends=[self.left, self.right], hand_size=len(self.slots[s])))
            self._after_play(s, hand, log)
        elif code == _DRAW_CODE:
            sl = self.slots[s]
            # The player held nothing matching either end: a void of every tile held now.
            sl[-1] |= NUM_TILES[self.left] | NUM_TILES[self.right]
            sl.append(0)
            t = self.bazaar.pop()
            self.hands[s] |= 1 << t
            self.drawn[s] += 1
            self.origin[s].append(self.drawn[s])
            self.history.append((s, code, -1, -1))
            if log is not None:
                log.append(event("draw", s, secret={s: {"tile": D_NAME[t]}}, drawn=self.drawn[s],
                                 bazaar_size=len(self.bazaar), hand_size=len(sl)))
            if not self.bazaar and self._is_fish():
                self._end_round(FISH, log)
        else:
            sl = self.slots[s]
            if sl:
                sl[-1] |= NUM_TILES[self.left] | NUM_TILES[self.right]
            self.history.append((s, code, -1, -1))
            if log is not None:
                log.append(event("pass", s))
            self.turn = self.next[s]

    #: ``apply`` is ``_apply`` itself (``log`` defaults to ``None``): the search path saves a call per move
    apply = _apply

    def _after_play(self, s: Seat, hand: Mask, log: list[Event] | None) -> None:
        if not hand:
            self._end_round(OUT, log)
        elif not self.bazaar and self._is_fish():
            self._end_round(FISH, log)
        else:
            self.turn = self.next[s]

    def _is_fish(self) -> bool:
        """Bazaar empty (checked by the caller) and nobody can play.  With the bazaar empty every tile off
        the table is in a hand, and a number shows on eight half-faces, so nobody can play exactly when
        both ends show the same number and all seven tiles of it are on the table (kozel.md §5)."""
        return is_fish(self.left, self.right, self.table)

    # ---- scoring

    def _record(self, side: int, amount: int) -> int:
        """The 13 rule (kozel.md §6.3): what ``side`` writes down for ``amount``; updates the copies."""
        if self.opened[side]:
            self.totals[side] += amount
            return amount
        amount += self.carry[side]
        if amount >= self.threshold and amount > 0:
            self.totals[side] += amount
            self.opened[side] = True
            self.carry[side] = 0
            return amount
        self.carry[side] = amount if self.carry_on else 0
        return 0

    def _first_in_turn_order(self, candidates: Sequence[Seat]) -> Seat:
        start = self.last_player if self.last_player >= 0 else self.opener
        n = self.players
        return next((start + k) % n for k in range(n) if (start + k) % n in candidates)

    def _end_round(self, reason: str, log: list[Event] | None) -> None:
        n = self.players
        hands = self.hands
        values = [hand_value(h, self.zz25) for h in hands]
        # Scores are replaced, never mutated in place, so clones may share them.
        self.totals = self.totals[:]
        self.opened = self.opened[:]
        self.carry = self.carry[:]
        if self.teams:
            side_values = [values[0] + values[2], values[1] + values[3]]
            if reason == OUT:
                win_side = self.last_player % 2
            elif side_values[0] != side_values[1]:
                win_side = 0 if side_values[0] < side_values[1] else 1
            else:
                win_side = -1
            recorded = [0, 0]
            eggs_used = self.eggs if win_side >= 0 else 0
            if win_side < 0:
                self.eggs += side_values[0]
                winner = -1
            else:
                lose = 1 - win_side
                recorded[lose] = self._record(lose, side_values[lose] + self.eggs)
                self.eggs = 0
                if reason == OUT:
                    winner = self.last_player
                else:
                    pair = (win_side, win_side + 2)
                    best = min(values[p] for p in pair)
                    winner = self._first_in_turn_order([p for p in pair if values[p] == best])
        else:
            side_values = values
            eggs_used = 0
            recorded = [self._record(s, values[s]) for s in range(n)]
            if reason == OUT:
                winner = self.last_player
            else:
                best = min(values)
                winner = self._first_in_turn_order([s for s in range(n) if values[s] == best])
        if self.halt_at_deal_end and log is None:
            # a search's sample: the totals are all it reads; no summary, no next round
            self.winner = winner
            self.round += 1
            self.turn = -1
            return
        summary = {"round": self.round + 1, "reason": reason, "out": self.last_player if reason == OUT else None,
                   "winner": winner if winner >= 0 else None, "hands": list(hands), "points": values,
                   "side_points": side_values, "recorded": recorded, "totals": self.totals[:],
                   "eggs_added": eggs_used,
                   "eggs": self.eggs, "ends": [self.left, self.right]}
        self.deals = [*self.deals, summary]
        self.winner = winner
        self.round += 1
        if log is not None:
            log.append(event("round_end", None, **self._deal_json(summary)))
        if max(self.totals) >= self.target:
            self.turn = -1
            if log is not None:
                res = self.result()
                log.append(event("match_end", None, reason=res["reason"], scores=res["scores"],
                                 goats=res["goats"], ranking=res["ranking"]))
            return
        if self.halt_at_deal_end:
            self.turn = -1
            return
        self._deal_round(log)

    def _deal_json(self, d: Mapping[str, Any]) -> dict[str, Any]:
        out = {"round": d["round"], "reason": d["reason"], "out": d["out"], "winner": d["winner"],
               "hands": [names(h) for h in d["hands"]], "points": list(d["points"]),
               "ends": list(d["ends"])}
        if self.teams:
            out.update(side_points=list(d["side_points"]), recorded=list(d["recorded"]),
                       totals=list(d["totals"]), eggs_added=d["eggs_added"], eggs=d["eggs"],
                       scores=[d["totals"][s % 2] for s in range(self.players)])
        else:
            out.update(recorded=list(d["recorded"]), totals=list(d["totals"]), scores=list(d["totals"]))
        return out

    def _side(self, seat: Seat) -> int:
        return seat % 2 if self.teams else seat

    def scores(self) -> list[int]:
        """Per seat: the recorded total of its side (low is good)."""
        # every seat's own total, or in team play (four seats) the total of side ``seat % 2``: no call per
        # seat, the search reads the payoffs twice an iteration
        return self.totals * 2 if self.teams else self.totals[:]

    def running_payoffs(self) -> list[float]:
        return mean_centered(self.scores(), sign=-1.0)

    def goats(self) -> list[Seat]:
        """The seats holding the highest total once somebody reached the target (empty before)."""
        sc = self.scores()
        top = max(sc)
        if top < self.target:
            return []
        return [s for s in range(self.players) if sc[s] == top]

    def result(self) -> dict[str, Any]:
        sc = self.scores()
        out = {"reason": "goat" if self.turn < 0 else None, "scores": sc, "payoffs": self.running_payoffs(),
               "ranking": ranking_from([float(x) for x in sc], high_is_good=False), "goats": self.goats(),
               "deals": [self._deal_json(d) for d in self.deals]}
        last = self.deals[-1] if self.deals else None
        if last is not None and last["reason"] == "resign":
            out.update(reason="resigned", resigned=last["out"])
        return out

    def _resign(self, seat: Seat, log: list[Event]) -> None:
        """The resigning seat's side is written up to the target: it is the goat."""
        side = self._side(seat)
        self.totals = self.totals[:]
        added = max(0, self.target - self.totals[side])
        self.totals[side] += added
        recorded = [0] * self.nsides
        recorded[side] = added
        values = [hand_value(h, self.zz25) for h in self.hands]
        side_values = [values[0] + values[2], values[1] + values[3]] if self.teams else values
        # ``out`` names the resigning seat in a resignation's summary (nobody went out)
        summary = {"round": self.round + 1, "reason": "resign", "out": seat, "winner": None,
                   "hands": list(self.hands), "points": values, "side_points": side_values, "recorded": recorded,
                   "totals": self.totals[:], "eggs_added": 0, "eggs": self.eggs, "ends": [self.left, self.right]}
        self.deals = [*self.deals, summary]
        self.round += 1
        self.turn = -1
        log.append(event("resign", seat, side=side, recorded=added, totals=self.totals[:]))
        res = self.result()
        log.append(event("match_end", None, reason=res["reason"], scores=res["scores"], goats=res["goats"],
                         ranking=res["ranking"], resigned=seat))

    # ---- information

    def _line_json(self) -> list[dict[str, Any]]:
        left: list[tuple[int, int, int]] = []
        right: list[tuple[int, int, int]] = []
        lo = hi = -1
        for c in self.line:
            t, end = c >> 2, c & 3
            if end == FIRST:
                right.append((t, D_HI[t], D_LO[t]))
                lo, hi = D_HI[t], D_LO[t]
            elif end == LEFT:
                other = D_OTHER[t][lo]
                left.append((t, other, lo))
                lo = other
            else:
                other = D_OTHER[t][hi]
                right.append((t, hi, other))
                hi = other
        return [{"tile": D_NAME[t], "halves": [a, b]} for t, a, b in [*reversed(left), *right]]

    def view(self, seat: Seat | None) -> dict[str, Any]:
        n = self.players
        seats = []
        for s in range(n):
            side = self._side(s)
            entry: dict[str, Any] = {"seat": s, "hand_size": len(self.slots[s]), "score": self.totals[side],
                                     "drawn": self.drawn[s], "opened": self.opened[side],
                                     "carried": self.carry[side]}
            if self.teams:
                entry["team"] = side
            seats.append(entry)
        table: dict[str, Any] = {
            "round": self.round + (0 if self.turn < 0 else 1),
            "line": self._line_json(),
            "ends": [self.left, self.right] if self.line else None,
            "bazaar_size": len(self.bazaar),
            "opener": self.opener,
            "lead": D_NAME[self.lead] if self.lead >= 0 and not self.line else None,
            "target": self.target,
            "opening_threshold": self.threshold,
        }
        if self.teams:
            table["teams"] = [{"team": k, "seats": [k, k + 2], "score": self.totals[k],
                               "opened": self.opened[k], "carried": self.carry[k]} for k in (0, 1)]
            table["eggs"] = self.eggs
        return {"rules": "kozel", "players": n, "to_move": self.to_move, "finished": self.turn < 0,
                "you": seat, "hand": names(self.hands[seat]) if seat is not None else None,
                "seats": seats, "table": table, "result": self.result() if self.turn < 0 else None}

    def slot_masks(self, seat: Seat) -> list[Mask]:
        """The forbidden-tile mask of each of ``seat``'s hand slots, oldest first (public knowledge)."""
        out = list(accumulate(reversed(self.slots[seat]), or_))
        out.reverse()
        return out

    def restocked(self, rng: random.Random) -> KozelState:
        """Every hand kept, the bazaar's order and the seed of later rounds redrawn (``State.restocked``): the
        same copy whatever the bazaar's true order."""
        world = cast(KozelState, super().restocked(rng))
        # from the sorted tiles: the order drawn depends on which tiles the bazaar holds, not on its true order
        world.bazaar = sorted(world.bazaar)
        shuffle(world.bazaar, rng)
        return world

    def determinize(self, seat: Seat, rng: random.Random) -> KozelState:
        return self._dealt(self._deal_plan(seat), rng)

    def determinizer(self, seat: Seat) -> Callable[[random.Random], State]:
        # what every world of ``seat``'s information set shares is worked out once (``_DealPlan``)
        return partial(self._dealt, self._deal_plan(seat))

    def _deal_plan(self, seat: Seat) -> _DealPlan | None:
        """What every determinization for ``seat`` shares; ``None`` once the match is over."""
        if self.turn < 0:
            return None
        unseen = ALL_TILES & ~self.hands[seat] & ~self.table
        fixed_seat = -1
        if not self.line and self.lead >= 0 and self.opener != seat:
            # The forced lead is public: the opener holds it.
            fixed_seat = self.opener
            unseen &= ~(1 << self.lead)
        sizes: list[tuple[Seat, int]] = []
        masks: list[Mask] = []
        for p in range(self.players):
            if p == seat:
                continue
            pm = self.slot_masks(p)
            if p == fixed_seat:
                pm = pm[1:]
            sizes.append((p, len(pm)))
            masks.extend(pm)
        # several seats' voids: the fill alone is not uniform over the allowed deals, swaps follow it
        mix = SWAPS_PER_SLOT * len(masks) if self.players > 2 and not _nested(masks) else 0
        return _DealPlan(seat, tiles_of(unseen), masks, _fill_order(unseen, masks), tuple(sizes), fixed_seat, mix)

    def _dealt(self, plan: _DealPlan | None, rng: random.Random) -> KozelState:
        """A world of ``plan``'s information set (``determinize``)."""
        world = self.clone()
        world.seed = rng.getrandbits(63)
        if plan is None:
            return world
        pool = plan.tiles[:]
        shuffle(pool, rng)
        _assign(pool, plan.masks, rng, plan.order)
        if plan.mix:
            _mix(pool, plan.masks, rng, plan.mix)
        hands = [0] * self.players
        hands[plan.seat] = self.hands[plan.seat]
        if plan.fixed_seat >= 0:
            hands[plan.fixed_seat] |= 1 << self.lead
        # the slots' tiles lead the pool, seat after seat; the rest is the bazaar
        start = 0
        for p, k in plan.sizes:
            hands[p] |= mask_of(pool[start:start + k])
            start += k
        world.hands = hands
        world.bazaar = pool[start:]
        return world


class _DealPlan(NamedTuple):
    """What the determinizations of one information set share (``KozelState._deal_plan``): the deciding
    seat, the unseen tiles (ascending), the other seats' slot masks in slot order, the order ``_assign`` fills
    the slots in, each other seat with its number of slots, the opener holding the public forced lead (-1:
    none) and ``_mix``'s swaps (0: none)."""

    seat: Seat
    tiles: list[Tile]
    masks: list[Mask]
    order: list[int]
    sizes: tuple[tuple[Seat, int], ...]
    fixed_seat: Seat
    mix: int


def _placed(left: int, right: int, tile: Tile, end: int) -> tuple[int, int]:
    """The ends after ``tile`` is laid at ``end`` (``LEFT``, ``RIGHT``, or ``FIRST``: high half left)."""
    if end == LEFT:
        return D_OTHER[tile][left], right
    if end == RIGHT:
        return left, D_OTHER[tile][right]
    return D_HI[tile], D_LO[tile]


def _doubles_of(code: int) -> tuple[Tile, Tile]:
    """The two doubles of a two-doubles move code: the one laid on the left end, then the right one's."""
    x = code - DOUBLES_BASE
    return domino(x // 7, x // 7), domino(x % 7, x % 7)


def _interned(code: int) -> Move:
    """The interned move of a tile play or two-doubles move code (``FIRST_MOVES``, ``END_MOVES``,
    ``DOUBLES``)."""
    if code >= DOUBLES_BASE:
        return DOUBLES[code - DOUBLES_BASE]
    return FIRST_MOVES[code >> 2] if code & 3 == FIRST else END_MOVES[code >> 2][code & 3]


def drop_slot(slots: list[Mask], tile: Tile) -> int:
    """Remove the slot a played ``tile`` is taken to come from: the strictest slot that allows it.

    The slots allowing a tile are the newest ones (masks only grow towards the oldest), and taking the
    strictest of them keeps the constraints true of the real hand: if the tile really sat in a looser slot,
    the tile matched to the removed slot fits that looser slot too.  After a draw this is the drawn tile's
    slot (every older slot forbids the ends), and a tile that only a drawn tile can be uses up that draw.
    """
    bit = 1 << tile
    j = len(slots)
    while j and not slots[j - 1] & bit:
        j -= 1
    if j:
        slots[j - 1] |= slots[j]  # slot j's own facts still hold for the older slots
    del slots[j]
    return j


def _fill_order(unseen: Mask, masks: Sequence[Mask]) -> list[int]:
    """The slots in the order ``_assign`` fills them, most constrained first (fewest of the ``unseen`` tiles
    allowed; ties in slot order); none when no slot forbids anything (the shuffle is then the deal)."""
    if not any(masks):
        return []
    return sorted(range(len(masks)), key=lambda i: ((unseen & ~masks[i]).bit_count(), i))


def _assign(pool: list[Tile], masks: list[Mask], rng: random.Random, order: Sequence[int]) -> None:
    """One tile of ``pool`` (a shuffled list) per slot, never a tile of the slot's forbidden mask: ``pool``
    is reordered so that it starts with the slots' tiles in slot order, the other tiles following in their
    order.

    Slots are filled in ``order`` (``_fill_order``: most constrained first), each with a free allowed tile
    drawn uniformly from ``rng``; a slot that finds none takes one by an augmenting path (Kuhn's
    algorithm), so an assignment is found whenever one exists, in at most slots x pool steps.  Raises ``BadState`` if none exists (the
    constraints are always true of the real hands, so this means a corrupted state).

    One seat's masks are nested (a void binds every older slot too), and for nested masks this draws every
    allowed assignment equally often: the i-th most constrained slot has the same number of choices in
    every assignment.  Taking the *first* allowed tile in pool order instead (as before 2026-12-04) is not
    uniform: a tile that only a newer slot allows then comes before the older slots' leftovers too often
    (up to 0.3 more probability for one tile of a Kozel hand; docs/ai-history.md, eighth look).  With
    several seats' masks (3 or 4 players) the masks need not be nested, and this draw alone put up to 0.2
    more probability on one tile (docs/ai-history.md, fourteenth look): ``determinize`` then follows it with
    ``_mix``, whose swaps bring every allowed assignment to equal likelihood.
    """
    k = len(masks)
    if not order:
        return  # nothing known: the shuffle is the deal
    owner: dict[Tile, int] = {}
    got = [-1] * k

    def augment(i: int, seen: set[Tile]) -> bool:
        m = masks[i]
        for t in pool:
            if m >> t & 1 or t in seen:
                continue
            seen.add(t)
            j = owner.get(t)
            if j is None or augment(j, seen):
                owner[t] = i
                got[i] = t
                return True
        return False

    # slots with the same mask (most of a seat's slots) draw from one list of their free allowed tiles,
    # without replacement: each draw is still uniform over the slot's free allowed tiles, and the list is
    # built once per mask instead of once per slot
    free: list[Tile] = []
    last = -1
    for i in order:
        m = masks[i]
        if m != last:
            free = [t for t in pool if not m >> t & 1 and t not in owner]
            last = m
        if free:
            r = below(rng, len(free))
            t = free[r]
            free[r] = free[-1]
            free.pop()
            owner[t] = i
            got[i] = t
        else:
            # no free tile fits this mask, so none will fit its later slots either: an augmenting path
            # reassigns owned tiles only, never to a tile this mask allows
            if not augment(i, set()):
                raise BadState("the revealed voids leave no possible deal")
    pool[:] = got + [t for t in pool if t not in owner]


#: swaps per slot of ``_mix`` after ``_assign``'s draw when the masks are not nested: at 8 the tile
#: frequencies of 12 three- and four-player positions match rejection sampling's to within sampling noise
#: (at most 0.017 apart over 10,000 worlds each; 0.048 at 4, 0.20 without; docs/ai-history.md, fourteenth look)
SWAPS_PER_SLOT = 8


def _nested(masks: Sequence[Mask]) -> bool:
    """Whether the masks form a chain under inclusion (one seat's masks always do, and so do any number of
    empty ones): then ``_assign``'s draw is exactly uniform."""
    distinct = sorted(set(masks), key=int.bit_count)
    return all(a & ~b == 0 for a, b in pairwise(distinct))


def _mix(pool: list[Tile], masks: Sequence[Mask], rng: random.Random, steps: int) -> None:
    """``steps`` random swaps of ``pool`` (its first ``len(masks)`` places are the slots, in slot order, the
    rest the bazaar): a slot and any other place, uniformly, their tiles swapped when each still fits its
    place's mask.  The proposal is symmetric and a refused swap keeps the arrangement, so every allowed
    arrangement is equally likely in the chain's stationary distribution: the steps take ``_assign``'s
    draw, exactly uniform for nested masks, towards uniform where several seats' masks are not nested."""
    k = len(masks)
    n = len(pool)
    # ``below(rng, k)`` and ``below(rng, n)`` spelled out: a determinization makes up to a few hundred
    getrandbits = rng.getrandbits
    bk = k.bit_length()
    bn = n.bit_length()
    for _ in range(steps):
        i = getrandbits(bk)
        while i >= k:
            i = getrandbits(bk)
        j = getrandbits(bn)
        while j >= n:
            j = getrandbits(bn)
        b = pool[j]
        if masks[i] >> b & 1:
            continue
        a = pool[i]
        if j < k and masks[j] >> a & 1:
            continue
        pool[i] = b
        pool[j] = a


KOZEL = register(RuleSet(
    id="kozel",
    title="Kozel",
    min_players=2,
    max_players=4,
    default_players=2,
    options=(
        Option("target", int, 101, "the match ends after the round in which a total reaches this; "
               "the highest total is the goat", minimum=1, maximum=1000),
        Option("opening_threshold", int, 13, "a record is opened only by an amount of at least this much",
               minimum=0, maximum=50),
        Option("carry_unopened", bool, False, "an amount too small to open the record is added to the "
               "next one instead of being lost"),
        Option("zero_zero_always_25", bool, False, "0-0 left in hand counts 25 even with other tiles "
               "(default: only when it is the last tile)"),
        Option("next_round_starter", str, "highest_double", "who leads later rounds: the highest double "
               "as in the first round, or the previous winner with any tile",
               choices=("highest_double", "previous_winner")),
        Option("teams", bool, False, "four players in two partnerships (seats 0 & 2 against 1 & 3), "
               "seven tiles each, no bazaar"),
    ),
    state_class=KozelState,
    description="The Russian draw game 'Goat' (seed 002): match the ends, draw from the bazaar, "
                "low totals are good and whoever reaches 101 is the goat. Individual or team play.",
    variants=(
        (4, {"teams": True}),
        (4, {"teams": True, "target": 40, "opening_threshold": 0, "zero_zero_always_25": True}),
        (3, {"carry_unopened": True, "target": 50}),
        (2, {"next_round_starter": "previous_winner", "target": 60}),
        (4, {"next_round_starter": "previous_winner", "carry_unopened": True, "opening_threshold": 25,
             "target": 40}),
    ),
))


# --------------------------------------------------------------------------- search kit
# What ``ai/`` may use of this engine beyond the protocol (``SEARCH_KIT``): tables to read, and a rollout
# that plays a search's sampled world on the state's own fields, built for a policy.

Policy = Callable[[State, random.Random], Move]
Rollout = Callable[[State, random.Random], None]


def _tops(table: dict[int, list[Move]],
          shed: Mapping[int, float]) -> dict[int, tuple[float, tuple[Move, ...]]]:
    """Per hand subset of an end's table (``LEFT_PLAYS[n]``, ``RIGHT_PLAYS[n]``): the heaviest ``shed``
    weight of its moves (-1 for none) and its moves of that weight in list order."""
    out = {}
    for sub, moves in table.items():
        best = max((shed[m.code] for m in moves), default=-1.0)
        out[sub] = (best, tuple(m for m in moves if shed[m.code] == best))
    return out


class GreedyScore(NamedTuple):
    """The weights of a one-ply greedy choice that sheds weight (``ai.heuristics.kozel.score_move``, and
    ``rollout_of`` with ``greedy``).  A move that empties the hand scores ``out``; any other scores the pips
    it sheds, plus ``zero_zero`` when it sheds 0-0 (``zero_zero_always`` under ``zero_zero_always_25``),
    ``doubles`` for the two-doubles move or ``double`` for a double tile, and ``fit`` per tile of the hand
    left that still matches an end after the move (at most ``fit_cap`` of them), or ``stuck`` when none
    does.  ``block`` is added when the next seat holds no tile that matches an end after the move: it reads
    another seat's hand, so it is for playouts on a search's sampled world only, never for a player
    (``score_move`` leaves it out).  ``shut`` and ``scarce`` read what the mover sees: of the tiles neither
    on the table nor in the mover's hand, those that match an end after the move cost ``scarce`` each, and
    when there is none the move earns ``shut`` (``ai.heuristics.kozel.sensed_score`` with no voids: a
    rollout does not keep the voids of its draws and passes).  All three are 0 in ``SCORE``."""

    out: float
    zero_zero: float
    zero_zero_always: float
    doubles: float
    double: float
    fit: float
    fit_cap: int
    stuck: float
    block: float = 0.0
    shut: float = 0.0
    scarce: float = 0.0


def rollout_of(playout: Policy, *, shed: Mapping[int, float] | None = None, explore: float = 0.0,
               greedy: GreedyScore | None = None) -> Rollout:
    """``rollout(state, rng)``: ``playout`` move after move until the current round ends, in one call, with
    the same moves and draws as the loop of ``playout`` and ``apply``.  ``playout`` must be one of two
    policies, drawing from ``rng`` as follows.

    * With ``shed`` (the cheap playout): one legal move is played (``below(rng, 1)`` is still drawn); else,
      when ``rng.random() < explore``, a uniform legal move (``below``); else the heaviest by ``shed`` (move
      code -> weight; every play and the two-doubles move have one), ties in legal order drawn by ``below``.
    * With ``greedy`` instead (the greedy engine's choice): one legal move is played without a draw; else
      the best by the ``GreedyScore`` of each move, ties in legal order drawn by ``below`` (as
      ``rng.choice`` draws, one tie included).

    On a state that does not halt at the end of the round it plays ``playout`` itself.

    The moves of a player who can match an end are built from the tables (``LEFT_PLAYS``, ``RIGHT_PLAYS``)
    as ``legal_moves`` builds them, the heaviest at either end looked up per end and hand subset, and a
    tile played at an end -- most moves of a round -- is applied here as ``_apply`` does it (hand, table,
    line, the new end, then going out, fish or the next seat); so are the two-doubles move, draws and
    passes.  The lead (only ever the rollout's first move) and the end of the round go through the
    engine's own ``legal_moves``, ``apply`` and ``_end_round``.

    On a halting world (a search's sample) the rollout does not keep the hand slots (``slots``, the public
    void facts that only ``determinize``, ``view`` and ``_apply``'s own slot bookkeeping read) nor the
    round's history (``history`` and ``origin``, which only ``round_replay`` reads): a play does not drop
    its slot, a draw or pass does not record its void, no move is added to the history.  A search throws the world away after the
    rollout and reads only its ``running_payoffs`` (totals); ``_end_round`` reads the hands, not the slots;
    ``apply`` is called only for a lead, before the rollout has changed anything."""
    if (shed is None) == (greedy is None):
        raise ValueError("a rollout plays either the heaviest tile (shed) or the greedy choice (greedy)")
    scored = greedy is not None
    if greedy is None:
        assert shed is not None
        # the heaviest moves at either end looked up instead of found by a loop over the moves: one per play
        left_tops = tuple(_tops(table, shed) for table in LEFT_PLAYS)
        right_tops = tuple(_tops(table, shed) for table in RIGHT_PLAYS)
        out_score = 0.0
        # with 0-0 counting 25 only as the last tile, and always: the score of a tile's play less the fit
        tile_scores: tuple[tuple[float, ...], ...] = ((), ())
        pair_scores: tuple[tuple[float, ...], ...] = ((), ())
        fit_scores: tuple[float, ...] = ()
    else:
        shed = {}
        out_score = greedy.out
        tile_scores = tuple(
            tuple(D_PIPS[t] + (zz if t == ZERO_ZERO else 0.0) + (greedy.double if D_HI[t] == D_LO[t] else 0.0)
                  for t in range(NUM_DOMINOES))
            for zz in (greedy.zero_zero, greedy.zero_zero_always))
        # DOUBLE_PAIR[L][R] flattened to L * 7 + R: the two doubles' pips, the bonus, 0-0 among them
        pair_scores = tuple(
            tuple(2 * a + 2 * b + greedy.doubles + (zz if 0 in (a, b) else 0.0) for a in range(7) for b in range(7))
            for zz in (greedy.zero_zero, greedy.zero_zero_always))
        fit_scores = tuple(greedy.fit * min(k, greedy.fit_cap) if k else greedy.stuck
                           for k in range(NUM_DOMINOES + 1))
    block = greedy.block if greedy is not None else 0.0
    # what the mover cannot see and a move leaves matchable: ``scarce`` a tile, ``shut`` when none (indexed by
    # the count: one lookup a move)
    sense = greedy is not None and bool(greedy.shut or greedy.scarce)
    sense_scores: tuple[float, ...] = ()
    if greedy is not None and sense:
        sense_scores = (greedy.shut, *(-greedy.scarce * k for k in range(1, NUM_DOMINOES + 1)))

    def rollout(state: State, rng: random.Random) -> None:
        st = cast(KozelState, state)
        if not st.halt_at_deal_end:
            play_to_deal_end(st, playout, rng)
            return
        tile_score = tile_scores[st.zz25]
        pair_score = pair_scores[st.zz25]
        hands = st.hands
        line = st.line
        bazaar = st.bazaar
        drawn = st.drawn
        nxt = st.next
        getrandbits = rng.getrandbits
        random_ = rng.random
        if st.turn >= 0 and st.left < 0:
            st.apply(playout(st, rng))  # the lead
        s = st.turn
        if s < 0:
            return  # the round is over (before the rollout, or with the lead)
        # the seat to move, the ends, the tiles on the table and the last to play in locals, stored back when
        # the round ends (the loop's only way out)
        left = st.left
        right = st.right
        table = st.table
        last = st.last_player
        reason = OUT
        while True:
            hand = hands[s]
            a = hand & NUM_TILES[left]
            b = hand & NUM_TILES[right]
            if not (a or b):
                # draw or pass: one move, and the cheap policy still draws its index (``below(rng, 1)``
                # spelled out)
                if not scored:
                    while getrandbits(1):
                        pass
                if bazaar:
                    # a draw, as ``_apply`` makes it (but for the slots)
                    hands[s] = hand | 1 << bazaar.pop()
                    drawn[s] += 1
                    if not bazaar and is_fish(left, right, table):
                        reason = FISH
                        break
                else:
                    s = nxt[s]
                continue
            at_left = LEFT_PLAYS[left][a]
            at_right = RIGHT_PLAYS[right][b]
            n = len(at_left) + len(at_right)
            pair = 0
            doubles = None
            if left != right:
                pair = DOUBLE_PAIR[left][right]
                if hand & pair == pair:
                    doubles = DOUBLES[left * 7 + right]
                    n += 1
            # the policy over the legal moves (plays at the left end, at the right end, the two doubles)
            if n == 1:
                # the one move (two doubles are never alone: L-L also plays at the left); the cheap policy
                # still draws ``below(rng, 1)``
                if not scored:
                    while getrandbits(1):
                        pass
                code = (at_left or at_right)[0].code
            elif scored:
                # the greedy choice: each move's score, the best in legal order, ties drawn as rng.choice
                # (``below(rng, 1)`` spelled out when there is no tie: no list to build)
                high = -inf
                chosen = PASS  # every move scores above -inf: replaced by the first
                ties: list[Move] | None = None
                fits_left = NUM_TILES[left]
                fits_right = NUM_TILES[right]
                # the next seat's hand, for ``block`` (no tiles: nothing is added)
                other = hands[nxt[s]] if block else 0
                # the tiles the mover cannot see, for ``shut`` and ``scarce``
                unseen = ALL_TILES & ~(table | hand) if sense else 0
                # a tile at one end: that end shows the tile's other number, the other end is unchanged
                for plays, kept in ((LEFT_SCORED[left][a], fits_right), (RIGHT_SCORED[right][b], fits_left)):
                    for m, t, bit, shown in plays:
                        rest = hand ^ bit
                        ends = shown | kept
                        w = tile_score[t] + fit_scores[(rest & ends).bit_count()] if rest else out_score
                        if other and not other & ends:
                            w += block
                        if sense and rest:
                            w += sense_scores[(unseen & ends).bit_count()]
                        if w > high:
                            high = w
                            chosen = m
                            ties = None
                        elif w == high:
                            if ties is None:
                                ties = [chosen, m]
                            else:
                                ties.append(m)
                if doubles is not None:
                    rest = hand ^ pair
                    ends = fits_left | fits_right
                    w = pair_score[left * 7 + right] + fit_scores[(rest & ends).bit_count()] if rest else out_score
                    if other and not other & ends:
                        w += block
                    if sense and rest:
                        w += sense_scores[(unseen & ends).bit_count()]
                    if w > high:
                        chosen = doubles
                        ties = None
                    elif w == high:
                        if ties is None:
                            ties = [chosen, doubles]
                        else:
                            ties.append(doubles)
                if ties is None:
                    while getrandbits(1):
                        pass
                    code = chosen.code
                else:
                    code = ties[below(rng, len(ties))].code
            elif random_() < explore:
                moves = at_left + at_right
                if doubles is not None:
                    moves.append(doubles)
                code = moves[below(rng, n)].code
            else:
                # the heaviest of both ends' heaviest, ties in legal order
                w_left, top_left = left_tops[left][a]
                w_right, top_right = right_tops[right][b]
                if w_left > w_right:
                    best, top = w_left, top_left
                elif w_right > w_left:
                    best, top = w_right, top_right
                else:
                    best, top = w_left, top_left + top_right
                if doubles is not None:
                    w = shed[doubles.code]
                    if w > best:
                        top = (doubles,)
                    elif w == best:
                        top += (doubles,)
                code = (top[0] if len(top) == 1 else top[below(rng, len(top))]).code
            # the move as ``_apply`` plays it (but for the slots)
            if code >= DOUBLES_BASE:
                # the two doubles: the ends show the same numbers as before
                hand ^= pair
                table |= pair
                line.append(domino(left, left) * 4 + LEFT)
                line.append(domino(right, right) * 4 + RIGHT)
            else:
                # a tile at an end
                t = code >> 2
                hand ^= 1 << t
                table |= 1 << t
                line.append(code)
                if code & 3 == LEFT:
                    left = D_OTHER[t][left]
                else:
                    right = D_OTHER[t][right]
            hands[s] = hand
            last = s
            if not hand:
                break
            if not bazaar and is_fish(left, right, table):
                reason = FISH
                break
            s = nxt[s]
        st.turn = s
        st.left = left
        st.right = right
        st.table = table
        st.last_player = last
        st._end_round(reason, None)

    return rollout


def round_replay(world: KozelState) -> Iterator[tuple[KozelState, Seat, Move]]:
    """Every play of the current round (tile plays and the two-doubles move, in order) as ``world`` has it:
    the position before the play, the player and the move; the position is one state, played on (valid
    until the next step).  Draws and passes, one legal move each, are not yielded.

    The round is rebuilt from public facts and ``world``'s hands alone.  ``history`` gives the moves and,
    for each play, the acquisition its tile was taken to come from (``origin``: 0 dealt, ``k`` the ``k``-th
    draw of the round); the tiles still in a hand are put in its slots by the same matching as
    ``determinize`` (``_assign``, the pool shuffled by a generator seeded from ``world.seed``, which a
    determinization draws afresh), so every hand tile has an acquisition too, and every seat's hand at
    each moment of the round is known.  Every void the round revealed holds of those hands (the slots'
    invariant), so each yielded move (the interned one, as ``legal_moves`` lists it) is legal in its position
    (``tests/test_kozel.py`` checks it on every world of sampled information sets).  A state whose history
    is not kept (stored before it was) yields nothing."""
    hist = world.history
    if not hist:
        return
    n = world.players
    rng = random.Random(world.seed)
    # acquired[s][k]: the tile of seat s's acquisition k (0: the dealt tiles, a list)
    dealt: list[list[Tile]] = [[] for _ in range(n)]
    drew: list[dict[int, Tile]] = [{} for _ in range(n)]
    for s in range(n):
        pool = tiles_of(world.hands[s])
        shuffle(pool, rng)
        masks = world.slot_masks(s)
        _assign(pool, masks, rng, _fill_order(world.hands[s], masks))
        for k, t in zip(world.origin[s], pool, strict=True):
            if k:
                drew[s][k] = t
            else:
                dealt[s].append(t)
    for s, code, oa, ob in hist:
        if code >= 0:
            tiles = (code >> 2,) if code < DOUBLES_BASE else _doubles_of(code)
            for t, k in zip(tiles, (oa, ob), strict=False):  # a play's one tile comes from oa
                if k:
                    drew[s][k] = t
                else:
                    dealt[s].append(t)
    st = world.clone()
    st.hands = [mask_of(d) for d in dealt]
    st.line = []
    st.table = 0
    st.left = st.right = -1
    draws = [0] * n
    for s, code, _oa, _ob in hist:
        if code == _DRAW_CODE:
            draws[s] += 1
            st.hands[s] |= 1 << drew[s][draws[s]]
            continue
        if code < 0:
            continue
        st.turn = s
        yield st, s, _interned(code)
        if code >= DOUBLES_BASE:
            x = code - DOUBLES_BASE
            pair = DOUBLE_PAIR[x // 7][x % 7]
            st.hands[s] &= ~pair
            st.table |= pair
        else:
            t = code >> 2
            st.hands[s] &= ~(1 << t)
            st.table |= 1 << t
            st.line.append(code)
            st.left, st.right = _placed(st.left, st.right, t, code & 3)


#: the names ``ai/`` may use of this module besides the ``State`` protocol: the search kit
SEARCH_KIT = ("ALL_TILES", "DOUBLES_BASE", "FIRST", "GreedyScore", "KozelState", "LEFT", "NUM_TILES", "ZERO_ZERO", "pips",
              "rollout_of", "round_replay")
