"""The live-games cap: how many games of one client address may be live (not finished, not expired, not
deleted) at once.

Each client address has a Redis sorted set of the games it created
(``th:client:<address>:games``, game id -> admission time in ms), and only the games that are really
live count against ``LIVE_GAMES_PER_CLIENT`` (default 20).  A listed game is live while it is not over
and something is going on at it: an AI seat is to move (the game moves on its own), a seat was seen
(``seen``: every request of a seat's token and every open stream writes it) in the last
``LIVE_IDLE_SECONDS`` (default 60) and its stream has not closed since (``left``: a seat's stream writes it
when it closes, as it does when the tab is closed), or no seat has been seen yet and it was admitted less
than that ago (its creator is about to sit down).  So a table left behind -- its tab closed, nobody to move
but a human who is gone -- stops counting as soon as the server sees its stream closed (at the next event
or keep-alive) or, for a client without a stream, a minute after its last request, and a solo player who
starts game after game never meets the cap; it counts again as soon as its player comes back, and stays
listed until it is finished, expired or deleted.  Before a game is
admitted the set is pruned of games that are gone or finished, then one Lua script adds the new id only
while fewer than the cap of the listed games are live.  More is a 429 problem (``live-games``) whose
``Retry-After`` is a guess (a minute): room is made by finishing, resigning or deleting a game, or by
leaving one alone.

The pruning reads each listed game's ``version``, ``finished``, ``ai_job``, ``seen`` and ``left`` fields (one
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

import json
import time
from collections.abc import Mapping
from typing import Any, cast

import redis

from service.errors import TooManyLiveGames
from service.keys import client_games_key, game_key
from service.store import Store

#: the Retry-After of a refused game when the live cap is reached, in seconds
LIVE_RETRY_AFTER_SECONDS = 60
#: seconds an admitted id whose game is not stored yet still counts (the creation is in flight)
PENDING_SECONDS = 60

#: KEYS: the client's game set.  ARGV: cap, game id, now (ms), ttl, then the ids of its idle games (listed,
#: not counted).  1 when the game was admitted.  An id admitted meanwhile by a concurrent creation is not
#: among the idle ones, so it counts.
ADMIT_LUA = """
local idle = 0
for i = 5, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then idle = idle + 1 end
end
if redis.call('ZCARD', KEYS[1]) - idle >= tonumber(ARGV[1]) then return 0 end
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
    over, idle = _activity(conn, cfg, listed, now)
    done = [gid for gid, finished in over.items()
            if finished or (finished is None and now - listed[gid] > PENDING_SECONDS * 1000)]
    if done:
        conn.zrem(key, *done)
    cap = int(cfg["LIVE_GAMES_PER_CLIENT"])
    admitted = conn.eval(ADMIT_LUA, 1, key, cap, game_id, now, int(cfg["GAME_TTL_SECONDS"]),
                         *[gid for gid in idle if gid not in done])
    if not admitted:
        raise TooManyLiveGames(f"at most {cap} live games per client: finish or delete one first",
                               retry_after=LIVE_RETRY_AFTER_SECONDS)


def _activity(conn: redis.Redis, cfg: Mapping[str, Any], listed: Mapping[str, int],
              now: int) -> tuple[dict[str, bool | None], list[str]]:
    """For the listed games (id -> admission ms): whether each is over (``None``: gone), and the ids of the
    ones that are idle -- not over, no AI to move, no seat seen and not admitted in the last
    ``LIVE_IDLE_SECONDS``.  One pipelined ``HMGET``; a game stored without a ``finished`` flag is asked
    about through :meth:`Store.finished`."""
    ids = list(listed)
    pipe = conn.pipeline(transaction=False)
    for gid in ids:
        pipe.hmget(game_key(gid), ["version", "finished", "ai_job", "seen", "left"])
    window = int(float(cfg["LIVE_IDLE_SECONDS"]) * 1000)
    over: dict[str, bool | None] = {}
    idle: list[str] = []
    unflagged: list[str] = []
    for gid, (version, flag, ai_job, seen, left) in zip(ids, cast(list[list[bytes | None]], pipe.execute()),
                                                         strict=True):
        if version is None:
            over[gid] = None
            continue
        if flag is None:
            unflagged.append(gid)
            continue
        over[gid] = flag == b"1"
        if not over[gid] and not ai_job and not _present(seen, left, listed[gid], now, window):
            idle.append(gid)
    if unflagged:
        over.update(Store(conn, cfg["GAME_TTL_SECONDS"]).finished(unflagged))
    return over, idle


def _present(seen: bytes | None, left: bytes | None, admitted: int, now: int, window: int) -> bool:
    """Whether someone is at a game: a seat seen in the last ``window`` ms whose stream has not closed
    since (``left``: a seat's last stream closed at that time), or, while no seat has been seen yet, a game
    admitted less than ``window`` ago (its creator is about to sit down)."""
    seen_at = {k: int(t) for k, t in json.loads(seen).items()} if seen else {}
    left_at = {k: int(t) for k, t in json.loads(left).items()} if left else {}
    if not seen_at:
        return now - admitted <= window
    return any(now - t <= window and left_at.get(k, -1) < t for k, t in seen_at.items())


def release_game(conn: redis.Redis, client: str, game_id: str) -> None:
    """Give back the place of ``game_id`` (admitted, but its game was not kept)."""
    conn.zrem(client_games_key(client), game_id)
