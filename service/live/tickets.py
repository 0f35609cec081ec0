"""Stream tickets: how a browser's ``EventSource``, which cannot send an
``Authorization`` header, opens a seat's stream.

``POST /v1/games/{id}/stream-tickets`` with a seat token (or the admin token) answers a ticket that
``GET /v1/games/{id}/stream?ticket=...`` accepts in place of the token.  A ticket is:

* **short-lived**: it opens streams for ``STREAM_TICKET_TTL_SECONDS`` (default 60 s) after it was issued;
  a stream opened in time stays open after the ticket expires (the ticket is checked when a stream opens).
* **single-game**: ``<game id>.<256 random bits>``, valid for that game only; a ticket of another game is a
  403, an unknown or expired one a 401 (the game-id prefix tells the two apart, as for tokens).
* **stored hashed**: only its SHA-256, as the key ``th:game:{<id>}:ticket:<sha256>`` (under the game's
  hash tag, so it sits on the game's Redis Cluster slot) whose value is the seat (or ``admin``) and whose
  Redis TTL is the ticket's lifetime: Redis forgets it by itself.
* **reusable within its lifetime** (the issue leaves it open): a browser's ``EventSource`` reconnects by
  itself after a dropped connection with the *same* URL (adding ``Last-Event-ID``), so a single-use ticket
  would break every automatic reconnect; what a frontend needs is a ticket good for reconnects until it
  expires, and a fresh one (from its token) only when a reconnect comes later than that.  The short life
  bounds what a ticket leaked from a URL (a log, a referrer) is worth: reading one seat's view of one game
  for a minute, never moving for it.
"""

from __future__ import annotations

import redis

from service import auth
from service.errors import BadTicket, Forbidden
from service.keys import ticket_key
from service.schemas import MAX_TICKET_LENGTH


def issue(conn: redis.Redis, game_id: str, who: int | str, ttl_seconds: int) -> str:
    """A new ticket of ``game_id`` for ``who`` (a seat, or ``"admin"``), valid for ``ttl_seconds``."""
    ticket = auth.new_token(game_id)
    conn.set(ticket_key(game_id, auth.token_hash(ticket)), str(who), ex=int(ttl_seconds))
    return ticket


def redeem(conn: redis.Redis, game_id: str, ticket: str) -> int | str:
    """The seat (int) or ``"admin"`` a ticket of ``game_id`` stands for; 401 for an unknown or expired
    ticket, 403 for a live ticket of another game.  The ticket stays valid until it expires."""
    if not ticket or len(ticket) > MAX_TICKET_LENGTH:
        raise _unknown()
    digest = auth.token_hash(ticket)
    who = conn.get(ticket_key(game_id, digest))
    if who is None:
        other = auth.token_game(ticket)
        if other and other != game_id and conn.exists(ticket_key(other, digest)):
            raise Forbidden("this stream ticket belongs to another game", slug="foreign-ticket")
        raise _unknown()
    text = who.decode() if isinstance(who, bytes) else str(who)
    return auth.ADMIN if text == auth.ADMIN else int(text)


def _unknown() -> BadTicket:
    return BadTicket()
