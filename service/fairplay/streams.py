"""Caps on open push streams: per client address, over every API process, and per API process.

An open stream (``GET /v1/games/{id}/stream``) costs a connection of a gunicorn worker process, a parked
greenlet and a Redis subscription for as long as it stays open, and needs no token.  Two caps hold it:

* **Per client**: a client address (:func:`service.fairplay.clients.address_key`, the same client the
  creation limits count: a made-up token must not make a fresh client) may have at most
  ``STREAMS_PER_CLIENT`` (default 16) streams open at once.  Each open stream holds a *lease* in the
  address's Redis sorted set ``th:streams:client:<address>`` (member: the stream's random id, score: when
  the lease runs out).  One Lua script prunes the leases that ran out, counts the rest and adds the new
  one only below the cap, so concurrent opens on several processes never pass it.  An open stream renews
  its lease every ``STREAM_KEEPALIVE_SECONDS`` it sends something (an event or a keep-alive) for
  :data:`LEASE_KEEPALIVES` such periods, and gives it back when it closes; the lease of a stream whose process died runs out by itself.  Beyond
  the cap: a 429 problem (``too-many-streams``) with ``Retry-After``, before anything is subscribed.
* **Per process**: one API process holds at most ``STREAMS_PER_PROCESS`` (default 500) streams, kept below
  gunicorn's ``worker_connections`` (1000 connections per gevent worker): beyond it, a 503 problem
  (``streams-full``) with ``Retry-After``, so a process full of streams still answers views and
  ``/healthz``.  Counted in the process itself (no Redis): it guards the process's own connections.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import redis

from service.keys import stream_leases_key
from service.problems import Problem

#: keep-alives a lease lasts without renewal (a stream renews it at every one)
LEASE_KEEPALIVES = 3

#: KEYS: the client's lease set.  ARGV: cap, stream id, now (ms), lease end (ms), key ttl (s).
#: 1 when the stream was admitted, else 0.
ADMIT_LUA = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""
#: KEYS: the client's lease set.  ARGV: stream id, lease end (ms), key ttl (s).  Only a lease still held.
RENEW_LUA = """
if redis.call('ZADD', KEYS[1], 'XX', 'CH', ARGV[2], ARGV[1]) == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return 1
"""

_lock = threading.Lock()
_open_here = 0


def open_here() -> int:
    """Streams this process holds now."""
    return _open_here


@dataclass
class Lease:
    """One open stream's place: in its process and in its client's lease set."""

    client: str
    stream_id: str
    lease_ms: int
    released: bool = False

    def renew(self, conn: redis.Redis) -> None:
        if not self.released:
            now = int(time.time() * 1000)
            conn.eval(RENEW_LUA, 1, stream_leases_key(self.client), self.stream_id, now + self.lease_ms,
                      math.ceil(self.lease_ms / 1000))

    def release(self, conn: redis.Redis) -> None:
        """Give both places back (once; later calls do nothing)."""
        global _open_here
        with _lock:
            if self.released:
                return
            self.released = True
            _open_here -= 1
        with contextlib.suppress(redis.RedisError):  # else the lease runs out by itself
            conn.zrem(stream_leases_key(self.client), self.stream_id)


def renewing(conn: redis.Redis, lease: Lease, body: Iterator[str], every: float) -> Iterator[str]:
    """``body`` as it is, renewing ``lease`` whenever ``every`` seconds have passed since the last renewal
    (at a keep-alive of a quiet stream and between the events of a busy one alike)."""
    last = time.monotonic()
    try:
        for chunk in body:
            yield chunk
            if time.monotonic() - last >= every:
                lease.renew(conn)
                last = time.monotonic()
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()


def admit(conn: redis.Redis, cfg: Mapping[str, Any], client: str) -> Lease:
    """A place for one more stream of ``client``, or a 503 (this process is full) / 429 (the client has
    its cap open) problem.  The caller gives it back with :meth:`Lease.release`."""
    global _open_here
    keepalive = float(cfg["STREAM_KEEPALIVE_SECONDS"])
    retry = str(max(1, math.ceil(keepalive)))
    per_process = int(cfg["STREAMS_PER_PROCESS"])
    with _lock:
        if _open_here >= per_process:
            raise Problem(503, f"this server holds {per_process} open streams, its most; try again shortly",
                          slug="streams-full", title="Too many open streams", headers={"Retry-After": retry})
        _open_here += 1
    lease = Lease(client, secrets.token_hex(8), int(keepalive * LEASE_KEEPALIVES * 1000))
    try:
        now = int(time.time() * 1000)
        cap = int(cfg["STREAMS_PER_CLIENT"])
        admitted = conn.eval(ADMIT_LUA, 1, stream_leases_key(client), cap, lease.stream_id, now, now + lease.lease_ms,
                             math.ceil(lease.lease_ms / 1000))
    except BaseException:
        lease.release(conn)
        raise
    if not admitted:
        lease.release(conn)
        raise Problem(429, f"at most {cap} open streams per client address: close one first",
                      slug="too-many-streams", title="Too many open streams", headers={"Retry-After": retry})
    return lease
