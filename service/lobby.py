"""The lobby: the index of the games that have an open seat (a service of its own beside the store of
games, :mod:`service.store`).

``th:lobby`` and ``th:lobby:<rules>`` (:func:`service.keys.lobby_key`) are sorted sets of the joinable
games, scored by the epoch ms at which the game expires if nothing happens.  They are outside the games'
hash tags (one index for all games), so they are updated right after the commit that changes a game's
joinability (the after-commit step of :mod:`service.tables`) and checked against the games when listed: a
crash between the two, an expiry or a delete leaves no stale entry in an answer.  Each index expires with
the newest game listed in it (every listing refreshes it).
"""

from __future__ import annotations

from typing import cast

import engine
from service.errors import GameNotFound
from service.keys import lobby_key
from service.store import Game, Store, now_ms


class Lobby:
    """The lobby index of the games of ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn = store.conn

    def sync(self, game: Game) -> None:
        """List ``game`` in the lobby while it has an open seat and is not over; unlist it otherwise."""
        rules = game.doc["rules"]
        if game.joinable:
            score = now_ms() + self.store.ttl * 1000
            pipe = self.conn.pipeline(transaction=False)
            for key in (lobby_key(), lobby_key(rules)):
                # an index outlives its newest entry by nothing: each entry expires with its game
                pipe.zadd(key, {game.id: score})
                pipe.expire(key, self.store.ttl)
            pipe.execute()
        else:
            self.unlist(game.id, rules)

    def unlist(self, game_id: str, *rules: str) -> None:
        """Take ``game_id`` out of the index of every rule set and of those of ``rules``."""
        pipe = self.conn.pipeline(transaction=False)
        pipe.zrem(lobby_key(), game_id)
        for r in rules:
            pipe.zrem(lobby_key(r), game_id)
        pipe.execute()

    def page(self, rules: str | None, limit: int, cursor: tuple[int, str] | None = None
              ) -> tuple[list[Game], tuple[int, str] | None]:
        """Up to ``limit`` joinable games, most recently active first, after ``cursor`` (the ``(score,
        id)`` of the last game of the previous page); and the cursor of the next page (None at the end).
        Entries of games that expired, were deleted or filled meanwhile are dropped from the index."""
        key = lobby_key(rules)
        now = now_ms()
        self.conn.zremrangebyscore(key, "-inf", now)
        found: list[Game] = []
        cur = cursor
        while len(found) < limit:
            top: int | str = "+inf" if cur is None else cur[0]
            rows = [(m.decode(), int(sc)) for m, sc in cast(list[tuple[bytes, float]], self.conn.zrevrangebyscore(
                key, top, now, start=0, num=2 * limit + 8, withscores=True))]
            if cur is not None:
                last = cur
                rows = [(m, sc) for m, sc in rows if sc < last[0] or m < last[1]]
            if not rows:
                return found, None
            for member, score in rows:
                cur = (score, member)
                try:
                    game: Game | None = self.store.get(member)
                except GameNotFound:
                    game = None
                if game is None or not game.joinable:
                    self.unlist(member, *(engine.RULES if game is None else [game.doc["rules"]]))
                    continue
                found.append(game)
                if len(found) == limit:
                    break
        return found, cur
