"""The Redis store of games (docs/developing.md, "The rings").

Keys of one game (every key is built by :mod:`service.keys`), all with the hash tag ``{<game id>}`` so that they live on one Redis Cluster slot and one
Lua script may touch them all:

* ``th:game:{<id>}`` -- a hash: ``version`` (int, +1 per applied move), ``doc`` (JSON: the engine's
  ``to_dict()`` under ``state`` plus the service's seat metadata, options, seed and the last move as
  ``{"seat", "move": <canonical move id>, "version"}`` -- never the request as sent),
  ``tokens`` (JSON: seat or ``"admin"`` -> SHA-256 of the token), ``ai_job`` (the id of the play job
  that is to move the AI seat now, or empty), and ``last``/``events`` (a copy of the newest event and the
  number of events, so that a view is one ``HMGET``), ``seen`` (JSON: seat -> epoch ms of the seat's
  last authenticated request, written by :meth:`Store.touch`, throttled), and
  ``finished`` (``1`` once the match is over, else ``0``; written with the state by the create and by every
  commit, so whether a game is over is one small ``HMGET`` that parses nothing: :meth:`Store.finished`), and
  ``live_index`` (the sorted set that counts the game among its creator's live games,
  service/fairplay/limits.py; :meth:`Store.delete` takes the game out of it).
* ``th:game:{<id>}:events`` -- a list, oldest first, of ``{"version", "type", "seat", "data", "secret"}``
  exactly as the engine produced them: ``data`` for everyone, ``secret[seat]`` for that seat only; plus
  ``move`` and ``mover``, the id of the move that produced them and the seat that made it (every move
  produces at least one event), which only the replay of a finished match shows.  The event
  number ``n`` is the list position + 1, so ``after=N`` is one ``LRANGE``.
* ``th:game:{<id>}:jobs`` -- a set of the RQ job ids queued for the game, so ``DELETE`` can remove them.
* ``th:game:{<id>}:ticket:<sha256>`` -- one per stream ticket (service/live/tickets.py): the seat it opens
  streams for, expiring with the ticket.
* ``th:game:{<id>}:live`` -- not a key but the pub/sub channel on which the commit announces new events.

The lobby, the index of the games with an open seat, is :mod:`service.lobby`.

Seats.  ``doc["seats"][i]["kind"]`` is ``human``, ``ai`` or ``open``; an open seat becomes
``human`` (``joined: true``) when taken.  A seat taken after creation keeps the SHA-256 of its token in its
own metadata (``token_sha256``), written by the same compare-and-set as the join; :meth:`Store.get` adds it
to ``tokens``.  While a seat is open (or a rematch seat is not yet claimed, ``claim``) the game is *waiting*:
no move is accepted, no AI job queued and no clock runs.

Reading is one round trip.  Parsing the stored state is the dearest part of a read, so each process keeps
the parsed document and state of recently read games (:class:`_ParsedCache`), reused only when the stored
bytes are identical to the ones parsed; a cached state is never mutated (moves are played on a clone).

The state is replaced only by :data:`COMMIT_LUA`, an atomic compare-and-set on ``version`` that also
appends the events and refreshes the idle expiry of every key of the game: two concurrent moves never both
land and no move is lost (the loser gets :class:`VersionConflict`).  Every key expires after the idle time
(``GAME_TTL_SECONDS``, default 7 days), refreshed on every move.
"""

from __future__ import annotations

import functools
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import redis

from engine import load_state
from engine.game import Event, State
from service import config
from service.errors import GameNotFound, VersionConflict
from service.keys import events_key, game_key, jobs_key, live_channel, play_job_id

#: bytes of randomness in a game id (64 bits: ids are not secrets, only unique)
GAME_ID_BYTES = 8
#: parsed games kept per process (each a few kB); a poll of an unchanged game then parses nothing
PARSED_CACHE_ENTRIES = 512

#: KEYS: game hash, events list, jobs set.  ARGV: expected version, new doc, ttl seconds, ai_job, finished
#: (1 or 0: the new state's match is over), the game's ``live_channel``, events...  Returns {1, new version}
#: or {0, current version} (-1 when the game does not exist).  When events were appended it also PUBLISHes
#: the new event count on the channel in the same atomic step, which wakes the game's open streams
#: (service/live/stream.py).
COMMIT_LUA = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return {0, -1} end
if v ~= ARGV[1] then return {0, tonumber(v)} end
local nv = tonumber(v) + 1
redis.call('HSET', KEYS[1], 'version', nv, 'doc', ARGV[2], 'ai_job', ARGV[4], 'finished', ARGV[5])
if #ARGV >= 7 then
  for i = 7, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
  local count = redis.call('LLEN', KEYS[2])
  redis.call('HSET', KEYS[1], 'last', ARGV[#ARGV], 'events', count)
  redis.call('PUBLISH', ARGV[6], count)
end
local ttl = tonumber(ARGV[3])
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('EXPIRE', KEYS[i], ttl) end
end
return {1, nv}
"""

#: KEYS: game hash.  ARGV: expected version, job id.  Points ``ai_job`` at a replacement job, but only while
#: the game is still at the version the job was for.
SET_AI_JOB_LUA = """
local v = redis.call('HGET', KEYS[1], 'version')
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'ai_job', ARGV[2])
return 1
"""


#: KEYS: game hash.  ARGV: seat, now (epoch ms), interval ms.  Records that ``seat`` was seen now unless it
#: was seen less than ``interval`` ago or the game does not exist (never creates a key); a seat whose stream
#: closed (``left``) at or after ``now`` is recorded as seen just after that.  Returns the time written, or 0.
TOUCH_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local raw = redis.call('HGET', KEYS[1], 'seen')
local seen = {}
if raw then seen = cjson.decode(raw) end
local t = seen[ARGV[1]]
local rawleft = redis.call('HGET', KEYS[1], 'left')
local left = nil
if rawleft then left = cjson.decode(rawleft)[ARGV[1]] end
-- throttled, unless the seat's last stream closed since it was last seen (it is back: say so at once)
if t and tonumber(ARGV[2]) - t < tonumber(ARGV[3]) and not (left and left >= t) then return 0 end
local now = tonumber(ARGV[2])
-- a seat seen again is seen after it left, even in the same millisecond (or on a clock a little behind the
-- one that wrote ``left``): presence compares the two (service.fairplay.live_games)
if left and left >= now then now = left + 1 end
seen[ARGV[1]] = now
redis.call('HSET', KEYS[1], 'seen', cjson.encode(seen))
return now
"""

#: KEYS: the game's hash.  ARGV: seat, now (ms).  A seat's stream closed: ``left`` (seat -> ms) says when, so
#: that a seat gone with its tab stops keeping the game live (service.fairplay.live_games) without waiting
#: out the idle time.
LEAVE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local raw = redis.call('HGET', KEYS[1], 'left')
local left = {}
if raw then left = cjson.decode(raw) end
left[ARGV[1]] = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'left', cjson.encode(left))
return 1
"""



def now_ms() -> int:
    return int(time.time() * 1000)


class NotReplicated(redis.ConnectionError):
    """A commit that fewer replicas than ``REDIS_WAIT_REPLICAS`` confirmed in time.  The master has it, but a
    failover now could lose it, so it is not acknowledged: the request fails like any Redis outage (503,
    Retry-After) and an AI job is retried; a retry of the same move finds it applied (idempotent) or
    applies it again, whichever the surviving Redis says."""

    def __init__(self, game_id: str, acked: int, wanted: int) -> None:
        super().__init__(f"game {game_id}: {acked} of {wanted} replicas confirmed the commit in time")
        self.game_id, self.acked, self.wanted = game_id, acked, wanted


@functools.lru_cache(maxsize=1)
def _wait_settings() -> tuple[int, int]:
    cfg = config.load()
    return int(cfg["REDIS_WAIT_REPLICAS"]), int(cfg["REDIS_WAIT_TIMEOUT_MS"])


def keys_of(game_id: str) -> list[str]:
    """The keys the move script touches."""
    return [game_key(game_id), events_key(game_id), jobs_key(game_id)]


def new_game_id() -> str:
    return secrets.token_hex(GAME_ID_BYTES)


@dataclass
class Game:
    """One stored game as read in one round trip.  ``state`` may be shared with other readers through the
    parse cache: read it, clone it to change it."""

    id: str
    version: int
    doc: dict[str, Any]
    tokens: dict[str, str]
    ai_job: str | None
    _state: State | None = field(default=None, repr=False)
    #: ``(n, stored event)`` of the newest event, or None before the first move
    last_event: tuple[int, dict[str, Any]] | None = None
    #: seat (as text) -> epoch ms of its last authenticated request (presence)
    seen: dict[str, int] = field(default_factory=dict)

    @property
    def state(self) -> State:
        if self._state is None:
            self._state = load_state(self.doc["state"])
        return self._state

    def seat_meta(self, seat: int) -> dict[str, Any]:
        return dict(self.doc["seats"][seat])

    def is_ai(self, seat: int | None) -> bool:
        return seat is not None and self.doc["seats"][seat]["kind"] == "ai"

    @property
    def ai_to_move(self) -> bool:
        return not self.waiting and self.is_ai(self.state.to_move)

    @property
    def open_seats(self) -> list[int]:
        """Seats not taken yet: open seats and rematch seats not claimed by their player."""
        return [i for i, s in enumerate(self.doc["seats"]) if s["kind"] == "open" or s.get("claim")]

    @property
    def waiting(self) -> bool:
        return bool(self.open_seats) and not self.state.finished

    @property
    def joinable(self) -> bool:
        """Waiting with a seat anyone may take (a rematch seat kept for its player is not)."""
        return self.waiting and any(s["kind"] == "open" for s in self.doc["seats"])

    @property
    def status(self) -> str:
        if self.state.finished:
            return "finished"
        return "waiting" if self.open_seats else "active"


#: events the service writes itself, not produced by an engine move: a replay skips them
SERVICE_EVENTS = frozenset({"join", "start", "timeout", "rematch"})


def _event_json(ev: Event, version: int, move: str | None = None, mover: int | None = None,
                service: bool = False) -> str:
    # JSON turns the int seat keys of ``secret`` into strings; readers look them up as strings.
    stored: dict[str, Any] = {"version": version, "type": ev["type"], "seat": ev["seat"], "data": ev["data"],
                              "secret": ev["secret"]}
    if move is not None:
        # the move that produced the event (it may name face-down tiles: only the replay shows it)
        stored["move"] = move
        stored["mover"] = mover
    if service:
        stored["service"] = True
    return json.dumps(stored, separators=(",", ":"))


class _ParsedCache:
    """``game id -> (raw doc bytes, parsed doc, state)`` for recently read games, least recently used out."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[bytes, dict[str, Any], State]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str, raw: bytes) -> tuple[dict[str, Any], State] | None:
        with self._lock:
            hit = self._items.get(game_id)
            if hit is None or hit[0] != raw:
                return None
            self._items.move_to_end(game_id)
            return hit[1], hit[2]

    def put(self, game_id: str, raw: bytes, doc: dict[str, Any], state: State) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[game_id] = (raw, doc, state)
            self._items.move_to_end(game_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_PARSED = _ParsedCache(PARSED_CACHE_ENTRIES)


class Store:
    """Games in Redis.  The connection is passed in (RQ's habit), never global."""

    def __init__(self, conn: redis.Redis, ttl_seconds: int, *, wait_replicas: int | None = None,
                 wait_timeout_ms: int | None = None) -> None:
        """``wait_replicas``/``wait_timeout_ms``: every commit waits (``WAIT``) for that many replicas, at most
        that long; None: ``REDIS_WAIT_REPLICAS`` and ``REDIS_WAIT_TIMEOUT_MS`` from the environment (what a
        worker's jobs use), 0 replicas: no wait."""
        self.conn = conn
        self.ttl = int(ttl_seconds)
        env_wait = _wait_settings()
        self.wait_replicas = env_wait[0] if wait_replicas is None else int(wait_replicas)
        self.wait_timeout_ms = env_wait[1] if wait_timeout_ms is None else int(wait_timeout_ms)
        self._commit = conn.register_script(COMMIT_LUA)
        self._set_ai_job = conn.register_script(SET_AI_JOB_LUA)
        self._touch = conn.register_script(TOUCH_LUA)
        self._leave = conn.register_script(LEAVE_LUA)

    # ---- create, read, delete

    def create(self, game_id: str, doc: Mapping[str, Any], tokens: Mapping[str, str],
               events: Iterable[Event] = (), *, live_index: str | None = None) -> Game:
        """Store a new game at version 0.  ``live_index``: the sorted set that lists it among its creator's
        live games (kept with the game, so that :meth:`delete` takes it out)."""
        state = load_state(doc["state"])
        game = Game(game_id, 0, dict(doc), dict(tokens), None, state)
        ai_job = play_job_id(game_id, 0) if game.ai_to_move else ""
        pipe = self.conn.pipeline(transaction=True)
        evs = [_event_json(e, 0) for e in events]
        fields: dict[Any, str | int] = {"version": 0, "doc": json.dumps(doc, separators=(",", ":")), "tokens": json.dumps(dict(tokens)),
                  "ai_job": ai_job, "events": len(evs), "finished": int(state.finished)}
        if live_index:
            fields["live_index"] = live_index
        if evs:
            fields["last"] = evs[-1]
            pipe.rpush(events_key(game_id), *evs)
        pipe.hset(game_key(game_id), mapping=fields)
        for key in keys_of(game_id):
            pipe.expire(key, self.ttl)
        pipe.execute()
        game.ai_job = ai_job or None
        game.last_event = (len(evs), json.loads(evs[-1])) if evs else None
        return game

    def get(self, game_id: str) -> Game:
        # the client is made without decode_responses, so every value is bytes or None
        version, raw, tokens, ai_job, last, count, seen = cast(list[bytes | None], self.conn.hmget(
            game_key(game_id), ["version", "doc", "tokens", "ai_job", "last", "events", "seen"]))
        if version is None or raw is None:
            raise GameNotFound(game_id)
        parsed = _PARSED.get(game_id, raw)
        if parsed is None:
            doc = json.loads(raw)
            state = load_state(doc["state"])
            _PARSED.put(game_id, raw, doc, state)
        else:
            doc, state = parsed
        token_map: dict[str, str] = json.loads(tokens or b"{}")
        for i, meta in enumerate(doc["seats"]):
            if meta.get("token_sha256"):
                token_map[str(i)] = meta["token_sha256"]
        return Game(game_id, int(version), doc, token_map, ai_job.decode() if ai_job else None,
                    state, (int(count or 0), json.loads(last)) if last else None,
                    {k: int(v) for k, v in json.loads(seen).items()} if seen else {})

    def finished(self, game_ids: Iterable[str]) -> dict[str, bool | None]:
        """Whether each game's match is over (``None``: the game is gone -- expired or deleted), from the
        ``finished`` field in one pipelined round trip: no document is read or parsed, whatever the size of
        the states.  A game stored before the field existed is read whole once (it has no flag yet)."""
        ids = list(game_ids)
        pipe = self.conn.pipeline(transaction=False)
        for gid in ids:
            pipe.hmget(game_key(gid), ["version", "finished"])
        out: dict[str, bool | None] = {}
        for gid, (version, flag) in zip(ids, cast(list[list[bytes | None]], pipe.execute()), strict=True):
            if version is None:
                out[gid] = None
            elif flag is not None:
                out[gid] = flag == b"1"
            else:
                try:
                    out[gid] = self.get(gid).state.finished
                except GameNotFound:
                    out[gid] = None
        return out

    def version(self, game_id: str) -> int | None:
        v = self.conn.hget(game_key(game_id), "version")
        return None if v is None else int(v)

    def delete(self, game_id: str) -> list[str]:
        """Remove every key of the game; returns the ids of its RQ jobs (the caller removes those)."""
        job_ids = sorted(j.decode() for j in cast(set[bytes], self.conn.smembers(jobs_key(game_id))))
        index = cast(bytes | None, self.conn.hget(game_key(game_id), "live_index"))
        self.conn.delete(*keys_of(game_id))
        self.conn.publish(live_channel(game_id), "deleted")  # open streams of the game end now
        if index is not None:
            self.conn.zrem(index.decode(), game_id)
        return job_ids

    def add_job(self, game_id: str, job_id: str) -> None:
        pipe = self.conn.pipeline(transaction=False)
        pipe.sadd(jobs_key(game_id), job_id)
        pipe.expire(jobs_key(game_id), self.ttl)
        pipe.execute()

    def forget_job(self, game_id: str, job_id: str) -> None:
        """Take a job that keeps no record out of the game's job list."""
        self.conn.srem(jobs_key(game_id), job_id)

    def set_ai_job(self, game_id: str, version: int, job_id: str) -> bool:
        return bool(self._set_ai_job(keys=[game_key(game_id)], args=[version, job_id]))

    def events(self, game_id: str, after: int = 0) -> list[tuple[int, dict[str, Any]]]:
        """``(n, stored event)`` for the events numbered above ``after`` (numbers start at 1)."""
        raw = self.conn.lrange(events_key(game_id), after, -1)
        return [(after + i + 1, json.loads(r)) for i, r in enumerate(raw)]

    def commit(self, game: Game, doc: dict[str, Any], state: State, events: Iterable[Event], *,
               move: str | None = None, mover: int | None = None) -> Game:
        """Store ``doc`` with ``state`` as the next version of ``game`` and append ``events``, by the
        compare-and-set of :data:`COMMIT_LUA` on ``game.version`` -- the one way every change of a game
        (moves, joins, resignations, timeouts, rematch links) is written, so every event reaches the log.
        The play job of the new version is recorded when an AI seat is to move.  ``move``/``mover``: the
        engine move (or ``"resign"``) that produced the engine's events, kept for the replay; events the
        service adds itself (:data:`SERVICE_EVENTS`) are stored with ``"service": true`` instead.  Raises
        ``VersionConflict`` when the game moved on meanwhile, ``GameNotFound`` when it is gone."""
        game_id = game.id
        new_version = game.version + 1
        doc["state"] = state.to_dict()
        tokens = dict(game.tokens)
        for i, meta in enumerate(doc["seats"]):
            if meta.get("token_sha256"):
                tokens[str(i)] = meta["token_sha256"]
        after = Game(game_id, new_version, doc, tokens, None, state, game.last_event, game.seen)
        ai_job = play_job_id(game_id, new_version) if after.ai_to_move else ""
        logged = [_event_json(e, new_version, service=True) if e["type"] in SERVICE_EVENTS
                  else _event_json(e, new_version, move, mover) for e in events]
        raw = json.dumps(doc, separators=(",", ":"))
        args: list[str | int] = [game.version, raw, self.ttl, ai_job, int(state.finished), live_channel(game_id),
                                 *logged]
        if self.wait_replicas:
            # WAIT counts the writes of the connection it is sent on: the script and WAIT go down one
            # connection, in one round trip (a pipeline)
            pipe = self.conn.pipeline(transaction=False)
            self._commit(keys=keys_of(game_id), args=args, client=pipe)
            pipe.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms)
            (ok, current), acked = pipe.execute()
            if ok and int(acked) < self.wait_replicas:
                raise NotReplicated(game_id, int(acked), self.wait_replicas)
        else:
            ok, current = self._commit(keys=keys_of(game_id), args=args)
        if not ok:
            if current == -1:
                raise GameNotFound(game_id)
            raise VersionConflict(game.version, current)
        _PARSED.put(game_id, raw.encode(), doc, state)
        after.ai_job = ai_job or None
        if logged:
            last = game.last_event
            after.last_event = ((last[0] if last else 0) + len(logged), json.loads(logged[-1]))
        return after

    # ---- presence

    def touch(self, game_id: str, seat: int, known: int | None = None, now: int | None = None,
              interval: float = config.DEFAULT_PRESENCE_INTERVAL_SECONDS) -> int | None:
        """Record that ``seat`` was seen now (an authenticated request, an open stream).  Throttled: nothing
        is written when the seat was seen less than ``interval`` seconds ago -- ``known`` is the time the
        caller has just read (then not even a round trip is made).  A seat whose stream closed at or after
        ``now`` is written as seen a millisecond after that.  Returns the time written, or None."""
        now = now_ms() if now is None else now
        window = int(interval * 1000)
        if known is not None and now - known < window:
            return None
        written = self._touch(keys=[game_key(game_id)], args=[str(seat), now, window])
        return int(written) if written else None

    def leave(self, game_id: str, seat: int, now: int | None = None) -> None:
        """Record that a stream of ``seat`` closed now (its tab was closed, or its connection dropped): the
        seat no longer counts as present until it is seen again (:meth:`touch`, which then writes at once)."""
        self._leave(keys=[game_key(game_id)], args=[str(seat), now_ms() if now is None else now])
