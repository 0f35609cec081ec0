"""The push stream of a game: ``GET /v1/games/{id}/stream`` as Server-Sent Events.

Every event of the game's log is sent as

    id: <n>
    event: <type>
    data: <the event as JSON, exactly what GET /v1/games/{id}/events gives this viewer>

with ``n`` the same event number as ``GET /events`` (from 1), so ``Last-Event-ID: n`` (what a browser's
``EventSource`` sends when it reconnects) or ``?after=n`` resumes after event ``n``: nothing lost, nothing
sent twice.  The projection is ``service.api.event_for``, the same function ``GET /events`` uses: a seat
gets the public data plus its own secret part, a spectator only the public data.  A comment line
(``: keep-alive``) goes out whenever nothing else was sent for ``STREAM_KEEPALIVE_SECONDS`` (default 10 s,
under the 15 s the issue asks for, with room for a slow write), so proxies keep the connection and a dead
client is noticed (its write fails and the stream is closed).  The first thing sent is ``retry: 3000``
(the browser's reconnect delay).  When the game is over the stream sends the last events and ends; a
reconnect to a finished game with nothing left to send answers 204, which tells ``EventSource`` to stop
reconnecting for good.

How it is fed -- Redis pub/sub, not Redis Streams, and never a polling loop:

* The events are already a Redis list written by one atomic Lua script (``service.store.COMMIT_LUA``), and
  a stream must resume from any event number, which the list answers with one ``LRANGE``.  So the list
  stays the one record, and the commit script also ``PUBLISH``es the new event count on the game's channel
  ``th:game:{<id>}:live`` in the same atomic step.  A Redis Stream (XADD/XREAD) would have kept a second
  copy of every event with its own ids and trimming, for nothing the list and a wake-up do not give.
* A stream **subscribes first** (and waits for Redis to confirm the subscription), **then** reads the
  backlog after ``n`` from the list, then, on each notification, reads the new range after the last event
  it sent.  An event committed between the backlog read and anything else is either in the backlog or
  announced after the subscription, and the range read is always "after the last one sent", so nothing
  is lost or doubled, and several notifications that arrive together cost one read.
* A notification carries no event data (only the count): every viewer needs its own projection, and the
  data in the list is the single truth.  Between notifications a stream blocks on its subscription socket;
  it reads Redis only when told something changed.

Each open stream holds one Redis connection for its subscription (500 streams: 500 connections, far below
Redis's default limit of 10000 clients).  A shared per-process subscriber would save connections but adds
a dispatcher and its failure handling; the simple form is what is measured (``tilehouse bench streams``).
Streams are served by gunicorn's gevent worker (``gunicorn.conf.py``): an idle stream is a parked greenlet,
not a thread, so many open streams do not starve the rest of the API.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import redis
from redis.client import PubSub

from service.errors import GameNotFound
from service.store import Store, live_channel

#: the reconnect delay a browser's EventSource is told to use, in milliseconds
RETRY_MS = 3000
#: how long to wait for Redis to confirm a subscription, in seconds
SUBSCRIBE_TIMEOUT_SECONDS = 5.0
KEEPALIVE = ": keep-alive\n\n"

log = logging.getLogger(__name__)


#: the confirmed subscriptions of the streams open in this process, so that a stopping worker can end them
_OPEN: weakref.WeakSet[PubSub] = weakref.WeakSet()
_stopping = False


def end_all() -> int:
    """End every open stream of this process now (a gunicorn worker asked to stop: gunicorn.conf.py calls
    this on SIGTERM).  Closing a stream's subscription wakes it with a connection error, and the stream
    ends as after any Redis error: its client reconnects, to another worker, with Last-Event-ID.  Without
    this a stopping worker would wait its whole graceful timeout for streams that never end by
    themselves.  Returns how many were open."""
    global _stopping
    _stopping = True
    subs = list(_OPEN)
    for sub in subs:
        with contextlib.suppress(Exception):
            if sub.connection is not None:
                sub.connection.disconnect()
    return len(subs)


def subscribe(conn: redis.Redis, game_id: str) -> PubSub:
    """A subscription to the game's channel that Redis has confirmed: every commit from now on will be
    announced on it.  Raises a redis error (-> 503) when Redis cannot be reached."""
    sub = conn.pubsub()
    try:
        sub.subscribe(live_channel(game_id))
        deadline = time.monotonic() + SUBSCRIBE_TIMEOUT_SECONDS
        while True:
            msg = sub.get_message(timeout=max(0.0, deadline - time.monotonic()))
            if msg is not None and msg["type"] == "subscribe":
                _OPEN.add(sub)
                return sub
            if time.monotonic() > deadline:
                raise redis.TimeoutError("Redis did not confirm the subscription")
    except BaseException:
        sub.close()
        raise


def frame(n: int, event: dict[str, Any]) -> str:
    """One Server-Sent Event: ``json.dumps`` never writes a raw newline, so ``data`` is one line."""
    return f"id: {n}\nevent: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"


def events(store: Store, sub: PubSub, game_id: str, project: Callable[[int, dict[str, Any]], dict[str, Any]],
           after: int, keepalive: float, on_keepalive: Callable[[], None] | None = None) -> Iterator[str]:
    """The text of the stream: the events after ``after`` as ``project(n, stored event)`` gives them, then
    each new one as it is committed, until the game is over (or deleted).  ``sub`` is a confirmed
    subscription made before this is called; it is closed at the end.  ``on_keepalive`` runs with every
    keep-alive comment (presence of the seat behind the stream)."""
    try:
        yield from _events(store, sub, game_id, project, after, keepalive, on_keepalive)
    except redis.RedisError as exc:
        # Redis went away, or the subscription was dropped (a notification may have been lost with it), or
        # the worker is stopping (end_all): end the stream; the client reconnects with Last-Event-ID.
        if not _stopping:
            log.warning("push stream ended by a Redis error", extra={"game": game_id, "error": str(exc)})
    except (OSError, ValueError):
        # end_all() closed the subscription's socket under the reading stream (redis-py then fails with
        # an OSError or on its closed read buffer): the end that was asked for, nothing to report
        if not _stopping:
            raise
    finally:
        _OPEN.discard(sub)
        sub.close()


def _events(store: Store, sub: PubSub, game_id: str, project: Callable[[int, dict[str, Any]], dict[str, Any]],
            after: int, keepalive: float, on_keepalive: Callable[[], None] | None) -> Iterator[str]:
    yield f"retry: {RETRY_MS}\n\n"
    last = after
    while True:
        # the game first, then the events: when it is over, every event it ended with is in the range
        try:
            game = store.get(game_id)
        except GameNotFound:
            return
        for n, stored in store.events(game_id, last):
            yield frame(n, project(n, stored))
            last = n
        if game.state.finished:
            return
        # block on the subscription until a commit is announced; a comment whenever the line was quiet
        quiet_until = time.monotonic() + keepalive
        while True:
            if _stopping:
                # end_all() closed the subscription while this stream was not waiting on it: redis-py would
                # reconnect it on the next read
                return
            msg = sub.get_message(ignore_subscribe_messages=True,
                                  timeout=max(0.0, quiet_until - time.monotonic()))
            if msg is not None and msg["type"] == "message":
                # notifications that arrived together are one read of the range (a deletion too: the
                # read then finds no game and the stream ends)
                while sub.get_message(ignore_subscribe_messages=True, timeout=0.0) is not None:
                    pass
                break
            if time.monotonic() >= quiet_until:
                if on_keepalive is not None:
                    on_keepalive()
                yield KEEPALIVE
                quiet_until = time.monotonic() + keepalive
