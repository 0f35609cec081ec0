"""The live-games cap: how many games of one client address may be live (not finished, not expired, not
deleted) at once.

Each client address has a Redis sorted set of the games it created
(``th:client:<address>:games``, game id -> admission time in ms); before a game is admitted the set is
pruned of games that are gone or finished, then one Lua script adds the new id only while fewer than
``LIVE_GAMES_PER_CLIENT`` (default 20) remain.  More is a 429 problem (``live-games``) whose
``Retry-After`` is a guess (a minute): room is made by finishing or deleting a game.

The pruning reads each listed game's ``finished`` flag (:meth:`service.store.Store.finished`: one
pipelined ``HMGET`` for all of them, which the store's create and commit write with the state), never the
games' states, so a creation costs the same however big or many the live games are.  The check and the
add are one script, so concurrent creations never pass the cap; and an id admitted less than
``PENDING_SECONDS`` ago whose game is not stored yet is a creation in flight, not a gone game, so a
concurrent admission does not prune it.  A deleted game leaves the set at once (the store keeps the set's
name with the game, ``live_index``), and a creation that admitted an id and then kept no game gives the
place back (:func:`release_game`).  Rematches (``POST /v1/games/{id}/rematch``) are admitted the same way,
against the address that asks for them, and count in the same creation rate.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, cast

import redis

from service.errors import TooManyLiveGames
from service.keys import client_games_key
from service.store import Store

#: the Retry-After of a refused game when the live cap is reached, in seconds
LIVE_RETRY_AFTER_SECONDS = 60
#: seconds an admitted id whose game is not stored yet still counts (the creation is in flight)
PENDING_SECONDS = 60

#: KEYS: the client's game set.  ARGV: cap, game id, now (ms), ttl.  1 when the game was admitted.
ADMIT_LUA = """
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


def admit_game(conn: redis.Redis, cfg: Mapping[str, Any], client: str, game_id: str) -> None:
    """Count ``game_id`` as a live game of ``client``, or raise :class:`~service.errors.TooManyLiveGames` when it has too many."""
    key = client_games_key(client)
    now = int(time.time() * 1000)
    listed = {(raw.decode() if isinstance(raw, bytes) else str(raw)): int(score)
              for raw, score in cast(list[tuple[bytes, float]], conn.zrange(key, 0, -1, withscores=True))}
    over = Store(conn, cfg["GAME_TTL_SECONDS"]).finished(listed)
    done = [gid for gid, finished in over.items()
            if finished or (finished is None and now - listed[gid] > PENDING_SECONDS * 1000)]
    if done:
        conn.zrem(key, *done)
    cap = int(cfg["LIVE_GAMES_PER_CLIENT"])
    admitted = conn.eval(ADMIT_LUA, 1, key, cap, game_id, now, int(cfg["GAME_TTL_SECONDS"]))
    if not admitted:
        raise TooManyLiveGames(f"at most {cap} live games per client: finish or delete one first",
                               retry_after=LIVE_RETRY_AFTER_SECONDS)


def release_game(conn: redis.Redis, client: str, game_id: str) -> None:
    """Give back the place of ``game_id`` (admitted, but its game was not kept)."""
    conn.zrem(client_games_key(client), game_id)
