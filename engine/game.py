"""The protocol every rule set implements, the option schema, and the registry of rule sets.

See ``docs/developing.md``.  A rule set is a :class:`RuleSet` (data: id, title, player range, option
schema) bound to a :class:`State` subclass (behaviour).  Chance is resolved inside the engine from values
derived from the game's seed (``random.Random(f"{seed}/{deal}")`` and the like), so a state never waits
on chance and ``to_dict()`` needs no generator state to round-trip.

Two ways to apply a move:

* ``play(move_or_id)`` checks it (``InvalidMove`` / ``IllegalMove``) and returns the events it produced;
* ``apply(move)`` is the unchecked fast path for search: ``move`` must come from ``legal_moves()`` of
  this very state.

Resigning: ``resign(seat)`` ends the match at once with the rule set's defined result (each rule
set's ``_resign`` and ``docs/rules/<rules>.md`` say what the resigning seat pays or forfeits); the result's
``reason`` is ``"resigned"``, ``resigned`` names the seat, and the ranking puts the resigning seat (in Kozel's
team play: its side) last, the others in their order by the match's scores.

Events say who may see what: ``{"type": ..., "seat": actor or None, "data": {public facts},
"secret": {seat: {facts only that seat may see}}}``.  The service stores them and shows each viewer the
public part plus its own secret part.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from engine.exceptions import BadOptions, BadState, IllegalMove, InvalidMove, UnknownRules

Seat = int
Event = dict[str, Any]


def event(type_: str, seat: Seat | None = None, secret: Mapping[Seat, dict[str, Any]] | None = None,
          **data: Any) -> Event:
    """One log entry: ``data`` is public, ``secret[s]`` is seen only by seat ``s``."""
    return {"type": type_, "seat": seat, "data": data, "secret": dict(secret) if secret else {}}


class Move:
    """A move: a canonical readable ``id`` (``"play:6-6+6-3"``), an ``action``, the ``tiles`` it names
    and any rule-specific fields in ``extra`` (an end of the line, a target tile, a column...).

    Rule sets intern their moves (build each once, in tables or caches) so that ``legal_moves()`` on the
    search path does no string work.  Equality and hashing go by ``id``.

    ``seen`` is what every seat other than the mover observes of the move (the public part of its event):
    the ``id`` itself for a move played face up, a shared id such as ``"discard:2 face down"`` for a move
    whose tiles stay hidden.  ``key`` and ``seen_key`` are the same two facts as ints (hashes of the two
    strings, equal within a process), the child keys of the search tree.
    """

    __slots__ = ("action", "code", "extra", "id", "key", "seen", "seen_key", "tiles")

    def __init__(self, id: str, action: str, tiles: tuple[str, ...] = (), extra: Mapping[str, Any] | None = None,
                 code: Any = None, seen: str | None = None) -> None:
        self.id = id
        self.action = action
        self.tiles = tiles
        self.extra = dict(extra) if extra else {}
        #: rule-set private payload for the fast path (ints, tuples); never serialized
        self.code = code
        key = self.key = hash(id)
        if seen is None:
            self.seen = id
            self.seen_key = key
        else:
            self.seen = seen
            self.seen_key = hash(seen)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "action": self.action, "tiles": list(self.tiles), **self.extra}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Move) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Move({self.id!r})"


# --------------------------------------------------------------------------- options

_TYPE_NAMES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


@dataclass(frozen=True)
class Field:
    """A typed setting with a default and allowed values (``choices`` or ``minimum``..``maximum``): the
    schema shared by rule options (:class:`Option`) and AI engine parameters (``ai.Param``), which differ
    only in the error they raise."""

    name: str
    type: type
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None

    #: what the error messages call this kind of setting
    kind: ClassVar[str] = "setting"

    def error(self, message: str) -> Exception:
        return ValueError(message)

    def validate(self, value: Any) -> Any:
        what = f"{self.kind} {self.name!r}"
        # bool is a subclass of int: refuse True where a number is wanted and 1 where a flag is wanted;
        # a float setting takes ints.
        ok = type(value) is self.type or (self.type is float and type(value) is int)
        if not ok:
            raise self.error(f"{what} must be a {_TYPE_NAMES[self.type]}, not {value!r}")
        if self.type is float:
            value = float(value)
            if value != value or value in (float("inf"), float("-inf")):
                raise self.error(f"{what} must be a finite number, not {value!r}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise self.error(f"{what} must be one of {allowed}, not {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise self.error(f"{what} must be at least {self.minimum}, not {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise self.error(f"{what} must be at most {self.maximum}, not {value!r}")
        return value

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": _TYPE_NAMES[self.type], "default": self.default,
                             "description": self.description}
        if self.choices is not None:
            d["enum"] = list(self.choices)
        if self.minimum is not None:
            d["minimum"] = self.minimum
        if self.maximum is not None:
            d["maximum"] = self.maximum
        return d


@dataclass(frozen=True)
class Option(Field):
    """One rule option; a bad value is ``BadOptions`` naming it."""

    kind: ClassVar[str] = "option"

    def error(self, message: str) -> Exception:
        return BadOptions(message, self.name)


@dataclass(frozen=True)
class RuleSet:
    """A rule set as data: the registry entry behind ``engine.RULES[id]``."""

    id: str
    title: str
    min_players: int
    max_players: int
    options: tuple[Option, ...]
    state_class: type[State]
    description: str = ""
    #: default player count for benchmarks, arenas and examples
    default_players: int = 0
    #: extra (players, options) configurations the conformance test plays besides the defaults
    variants: tuple[tuple[int, dict[str, Any]], ...] = ()
    option_index: dict[str, Option] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "option_index", {o.name: o for o in self.options})
        if not self.default_players:
            object.__setattr__(self, "default_players", self.max_players)

    @property
    def players(self) -> range:
        return range(self.min_players, self.max_players + 1)

    def validate_options(self, options: Mapping[str, Any] | None, players: int) -> dict[str, Any]:
        """Complete ``options`` with defaults; ``BadOptions`` naming the option for anything wrong."""
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise BadOptions("options must be an object mapping option names to values")
        unknown = sorted(set(options) - set(self.option_index))
        if unknown:
            raise BadOptions(f"rule set {self.id!r} has no option {unknown[0]!r}", unknown[0])
        if type(players) is not int or players not in self.players:
            raise BadOptions(
                f"{self.title} is played by {self.min_players} to {self.max_players} players, not {players!r}",
                "players")
        out = {o.name: o.validate(options[o.name]) if o.name in options else o.default for o in self.options}
        self.state_class.check_options(out, players)
        return out

    def new(self, players: int, seed: int, options: Mapping[str, Any] | None = None) -> State:
        if type(seed) is not int:
            raise BadOptions(f"seed must be an integer, not {seed!r}", "seed")
        opts = self.validate_options(options, players)
        return self.state_class.new(players, seed, opts)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": self.description,
                "players": {"min": self.min_players, "max": self.max_players},
                "options": [o.to_dict() for o in self.options]}


#: the registry: rule set id -> RuleSet.  Filled by ``register`` as the rule-set modules are imported.
RULES: dict[str, RuleSet] = {}


def register(ruleset: RuleSet) -> RuleSet:
    if ruleset.id in RULES:
        raise ValueError(f"rule set {ruleset.id!r} registered twice")
    RULES[ruleset.id] = ruleset
    ruleset.state_class.rules = ruleset
    return ruleset


def get_rules(rules_id: str) -> RuleSet:
    try:
        return RULES[rules_id]
    except (KeyError, TypeError):
        raise UnknownRules(str(rules_id)) from None


def new_game(rules_id: str, *, players: int, seed: int, options: Mapping[str, Any] | None = None) -> State:
    """A fresh match of ``rules_id``, shuffled from ``seed``."""
    return get_rules(rules_id).new(players, seed, options)


def load_state(d: Mapping[str, Any]) -> State:
    """The inverse of ``State.to_dict()``."""
    if not isinstance(d, Mapping) or "rules" not in d:
        raise BadState("a stored state is an object with a 'rules' field")
    try:
        cls = get_rules(d["rules"]).state_class
    except UnknownRules as e:
        raise BadState(str(e)) from None
    return cls.from_dict(d)


# --------------------------------------------------------------------------- the state protocol

class State(ABC):
    """One match of one rule set: always waiting for a player, or finished.

    Subclasses keep their fields as ints, lists and tuples (no dataclasses or JSON in the search loop).
    """

    #: set by ``register``
    rules: ClassVar[RuleSet]
    #: every key a move object of this rule set may hold (the keys of its moves' ``to_dict()``); a move object
    #: with any other key is ``InvalidMove`` (nothing unknown is accepted, so nothing unknown is kept)
    move_fields: ClassVar[frozenset[str]] = frozenset({"id", "action", "tiles"})

    #: Whether some move of the rule set shows the other seats less than its id (``Move.seen`` differs
    #: from ``Move.id``, e.g. a face-down discard).  When ``False`` no two legal moves share an observed
    #: key, and the search skips looking for such pairs.
    hides_moves: ClassVar[bool] = False

    #: Set by a search on its own sampled copy (``stop_after_deal``): when the current deal ends, the state
    #: stops there (``to_move`` is ``None``, ``deals_done`` and ``running_payoffs`` count the deal) instead
    #: of dealing the next one, which the search never looks at; on the fast path (``apply``, no event log)
    #: a rule set may also skip the deal's summary for ``result()``.  Never set on a real match.
    halt_at_deal_end: bool = False

    players: int
    seed: int
    options: dict[str, Any]

    # ---- construction and serialization

    @classmethod
    @abstractmethod
    def new(cls, players: int, seed: int, options: dict[str, Any]) -> State:
        """A fresh match; ``options`` are already validated and complete."""

    @classmethod
    def check_options(cls, options: dict[str, Any], players: int) -> None:
        """Cross-field checks (e.g. an option only valid for 4 players); raise ``BadOptions``."""
        return None

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-ready data, with ``"rules": <id>``; round-trips exactly."""

    @classmethod
    @abstractmethod
    def from_dict(cls, d: Mapping[str, Any]) -> State:
        """The inverse of ``to_dict``; raises ``BadState`` for data it cannot read."""

    @abstractmethod
    def clone(self) -> State:
        """An independent copy (fast: this is on the search path)."""

    # ---- whose turn, moves

    @property
    @abstractmethod
    def to_move(self) -> Seat | None:
        """The seat that must act, or ``None`` when the match is over."""

    @property
    def finished(self) -> bool:
        return self.to_move is None

    @abstractmethod
    def legal_moves(self) -> list[Move]:
        """The moves of ``to_move`` (empty only when finished), in a stable order."""

    @abstractmethod
    def _apply(self, move: Move, log: list[Event] | None) -> None:
        """Apply a legal move and resolve the chance that follows it.  Append events to ``log`` when it
        is not ``None`` (the search path passes ``None`` and pays nothing for events)."""

    def apply(self, move: Move) -> None:
        """Unchecked fast path: ``move`` must be one of ``self.legal_moves()``."""
        self._apply(move, None)

    def play(self, move: Move | str | Mapping[str, Any]) -> list[Event]:
        """Checked: apply a move given as a ``Move``, its id, or a move object (``{"action", "tiles", ...}``)
        and return the events it produced."""
        if self.finished:
            raise IllegalMove("the game is over")
        found = self.find_move(move)
        log: list[Event] = []
        self._apply(found, log)
        return log

    def find_move(self, move: Move | str | Mapping[str, Any]) -> Move:
        """The legal move meant by ``move`` (id, ``Move`` or move object), or ``InvalidMove``/``IllegalMove``."""
        legal = self.legal_moves()
        if isinstance(move, Move):
            move = move.id
        if isinstance(move, str):
            for m in legal:
                if m.id == move:
                    return m
            canonical = self.canonical_move_id(move)
            for m in legal:
                if m.id == canonical:
                    return m
            raise IllegalMove(f"{move!r} is not a legal move now")
        if isinstance(move, Mapping):
            self.check_move_fields(move)
            return self._match_object(move, legal)
        raise InvalidMove(f"a move is a move id string or a move object, not {type(move).__name__}")

    @classmethod
    def check_move_fields(cls, spec: Mapping[str, Any]) -> None:
        """``InvalidMove`` naming the first key of the move object ``spec`` that no move of this rule set has."""
        unknown = sorted(str(k) for k in spec if k not in cls.move_fields)
        if unknown:
            allowed = ", ".join(sorted(cls.move_fields))
            raise InvalidMove(f"a {cls.rules.id} move object has no field {unknown[0][:64]!r} (it may hold {allowed})")

    def canonical_move_id(self, move_id: str) -> str:
        """Rewrite a well-formed id into canonical form (tile halves in either order, tiles in any order),
        or raise ``InvalidMove`` when it cannot be read.  The default understands ``action[:tile+tile...]``
        with Chinese or double-six tiles and no further fields; rule sets with richer ids override it."""
        action, _, rest = move_id.partition(":")
        if not action or not action.replace("_", "").isalpha():
            raise InvalidMove(f"{move_id!r} is not a move id (expected 'action:tile+tile')")
        if not rest:
            return action
        try:
            tiles = [self.normalize_tile(t) for t in rest.split("+")]
        except ValueError as e:
            raise InvalidMove(f"{move_id!r}: {e}") from None
        return f"{action}:{'+'.join(self.sort_tiles(tiles))}"

    @staticmethod
    def normalize_tile(text: str) -> str:
        """``"3-6"`` -> ``"6-3"``; ``ValueError`` for anything not written as a tile."""
        from engine.tiles import _halves

        a, b = _halves(text)
        return f"{max(a, b)}-{min(a, b)}"

    def sort_tiles(self, tiles: Iterable[str]) -> list[str]:
        """Tiles in the order canonical ids list them (default: highest halves first)."""
        return sorted(tiles, key=lambda t: (-int(t[0]), -int(t[2])))

    def _match_object(self, spec: Mapping[str, Any], legal: list[Move]) -> Move:
        if "id" in spec and isinstance(spec["id"], str):
            return self.find_move(spec["id"])
        action = spec.get("action")
        if not isinstance(action, str):
            raise InvalidMove("a move object needs an 'action' string")
        raw_tiles = spec.get("tiles", [])
        if not isinstance(raw_tiles, list) or not all(isinstance(t, str) for t in raw_tiles):
            raise InvalidMove("'tiles' must be a list of tiles like '6-3'")
        try:
            tiles = sorted(self.normalize_tile(t) for t in raw_tiles)
        except ValueError as e:
            raise InvalidMove(str(e)) from None
        rest = {k: v for k, v in spec.items() if k not in ("action", "tiles")}
        hits = []
        for m in legal:
            if m.action != action or sorted(m.tiles) != tiles:
                continue
            d = m.to_dict()
            if all(self._same_field(d.get(k), v) for k, v in rest.items()):
                hits.append(m)
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise IllegalMove(f"no legal move matches {dict(spec)!r}")
        raise InvalidMove(f"{dict(spec)!r} matches {len(hits)} legal moves; send the move id instead")

    def _same_field(self, have: Any, want: Any) -> bool:
        if isinstance(have, str) and isinstance(want, str):
            try:
                return self.normalize_tile(have) == self.normalize_tile(want)
            except ValueError:
                return have == want
        return bool(have == want)

    # ---- resigning

    def resign(self, seat: Seat) -> list[Event]:
        """``seat`` resigns (abandons the table, or forfeits on time): the match ends now with the rule set's
        defined result.  Returns the events: ``resign`` (who, and what it cost) then ``match_end``.
        ``IllegalMove`` when the match is already over, ``InvalidMove`` for a seat it does not have."""
        if self.finished:
            raise IllegalMove("the game is over")
        if type(seat) is not int or not 0 <= seat < self.players:
            raise InvalidMove(f"no seat {seat!r} in a {self.players}-player match")
        log: list[Event] = []
        self._resign(seat, log)
        return log

    @abstractmethod
    def _resign(self, seat: Seat, log: list[Event]) -> None:
        """End the match with ``seat`` resigning: settle what it pays or forfeits, record it where ``to_dict``
        keeps it (so ``result()`` can say so after a round trip), finish, and log the events."""

    # ---- information

    def observed_id(self, move: Move, seat: Seat) -> str:
        """What ``seat`` observes when the seat to move plays ``move`` (one of ``legal_moves()``): the
        move's id for the mover, otherwise the public part of the move's event as an id (``move.seen``).
        Two moves that look the same to ``seat`` give the same observed id, moves that look different give
        different ones.  Rule sets whose moves hide something set ``seen`` when they intern the move."""
        return move.id if seat == self.to_move else move.seen

    def observed_keys(self, moves: Iterable[Move], seat: Seat) -> list[int]:
        """``observed_id`` of each of ``moves`` as an int key (``Move.key`` / ``Move.seen_key``), for the
        search tree: one call per tree node instead of one per move."""
        if seat == self.to_move:
            return [m.key for m in moves]
        return [m.seen_key for m in moves]

    @abstractmethod
    def view(self, seat: Seat | None) -> dict[str, Any]:
        """What ``seat`` may see (``None``: a spectator, public facts only), JSON-ready:

        ``{"rules", "players", "to_move", "finished", "you", "hand": [tiles] | None,
        "seats": [{"seat", "hand_size", "score", ...public per-seat facts}], "table": {...},
        "result": result() | None}``
        """

    @abstractmethod
    def determinize(self, seat: Seat, rng: random.Random) -> State:
        """A full state in ``seat``'s information set: everything ``seat`` has seen (and what the rules
        let it infer) kept, everything else resampled from ``rng`` -- including the seed of future deals.
        The result depends only on what ``seat`` knows and on ``rng``: two states that look the same to
        ``seat`` give identical determinizations for the same ``rng``."""

    def determinizer(self, seat: Seat) -> Callable[[random.Random], State]:
        """``determinize`` for one seat, again and again: ``determinizer(seat)(rng)`` is
        ``determinize(seat, rng)``, the same world from the same generator, while this state is not
        changed.  A search samples thousands of worlds of one information set; a rule set may work out
        once what they all share (Tien Gow: the tiles ``seat`` has not seen)."""
        return partial(self.determinize, seat)

    def restocked(self, rng: random.Random) -> State:
        """A copy with every hand and everything on the table kept and what the rules leave to chance inside
        the state redrawn from ``rng``: the seed of future deals and, in a rule set with a face-down stock
        (Kozel's bazaar, Tiu U's stock), the stock's order, drawn afresh from its tiles whatever their true order.
        Every seat sees it exactly as it sees this state.
        Not a determinization -- it keeps the hidden hands: it is the world of the arena's reference
        ``perfect:sees=hands``, which knows every hand but not the draws (``docs/ai.md``)."""
        copy = self.clone()
        copy.seed = rng.getrandbits(63)
        return copy

    def stop_after_deal(self) -> None:
        """Make this state halt at the end of the current deal (``halt_at_deal_end``): what a search does
        to its own sampled copy.  ``clone`` does not copy it."""
        self.halt_at_deal_end = True

    # ---- scoring

    @property
    @abstractmethod
    def deals_done(self) -> int:
        """How many deals (Kozel: rounds; Tiu U: games) of the match are finished."""

    @abstractmethod
    def running_payoffs(self) -> list[float]:
        """Zero-sum payoffs so far (higher is better), counting every finished deal and any payment already
        made in the current one; equals ``result()["payoffs"]`` once the match is over.  A search that stops
        at the end of a deal scores it as the change of these.  Public: ``determinize`` keeps them."""

    @abstractmethod
    def result(self) -> dict[str, Any]:
        """``{"reason": str | None (None while running), "scores": [...], "payoffs": [...],
        "ranking": [seats best first], "deals": [one summary per finished deal]}``."""


# --------------------------------------------------------------------------- chance on the search path

def below(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)`` (``n > 0``), drawing exactly what it draws (``_randbelow``: ``getrandbits`` of
    ``n``'s bit length until below ``n``) in one Python call instead of two or three: the search draws
    once or more per move.  Same generator state in, same value and state out."""
    getrandbits = rng.getrandbits
    k = n.bit_length()
    r = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


class _ShuffleSteps(dict[int, tuple[tuple[int, int], ...]]):
    """length -> ``(i, bit length of i + 1)`` for ``i`` from ``length - 1`` down to 1: the steps of a shuffle,
    worked out once per length."""

    def __missing__(self, length: int) -> tuple[tuple[int, int], ...]:
        steps = self[length] = tuple((i, (i + 1).bit_length()) for i in range(length - 1, 0, -1))
        return steps


_SHUFFLE_STEPS = _ShuffleSteps()


def shuffle(x: list[Any], rng: random.Random) -> None:
    """``rng.shuffle(x)`` with the same draws and the same result (``j = randrange(i + 1)`` by
    ``getrandbits``, for ``i`` from the end), without a Python call per element: every search iteration
    shuffles the unseen tiles."""
    getrandbits = rng.getrandbits
    for i, k in _SHUFFLE_STEPS[len(x)]:
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]


def play_to_deal_end(state: State, playout: Callable[[State, random.Random], Move],
                     rng: random.Random) -> None:
    """Play ``playout`` move after move until the current deal (round, game) ends: what a rule set's fast
    rollout (its search kit) must be equal to, and what it does itself on a state that does not halt at
    the end of the deal (``State.halt_at_deal_end``)."""
    deal = state.deals_done
    while state.to_move is not None and state.deals_done == deal:
        state.apply(playout(state, rng))


def perft(state: State, depth: int) -> int:
    """The number of move sequences of length ``depth`` from ``state`` (shorter ones that end the match
    count once), for move-generation regression data."""
    if depth == 0 or state.finished:
        return 1
    total = 0
    for m in state.legal_moves():
        child = state.clone()
        child.apply(m)
        total += perft(child, depth - 1)
    return total


def ranking_from(values: list[float], *, high_is_good: bool = True) -> list[Seat]:
    """Seats ordered best first by ``values`` (stable: equal values keep seat order)."""
    return sorted(range(len(values)), key=lambda s: -values[s] if high_is_good else values[s])


def resigned_ranking(ranking: list[Seat], losers: Iterable[Seat]) -> list[Seat]:
    """``ranking`` with the resigning seat(s) moved to the end (in their order)."""
    out = set(losers)
    return [s for s in ranking if s not in out] + [s for s in ranking if s in out]


def mean_centered(values: Sequence[float], *, sign: float = 1.0) -> list[float]:
    """``sign * (v - mean)`` per seat: payoffs that sum to zero from per-seat scores."""
    m = sum(values) / len(values)
    return [sign * (v - m) for v in values]
