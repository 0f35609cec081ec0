"""Seat tokens and the admin token (docs/api.md, "Authentication: seat tokens").

A token is ``<game id>.<secret>`` where the secret is 32 bytes (256 bits) from ``secrets``.  Only the
SHA-256 of a token is stored, inside the game's own hash (so tokens live and die with the game and a game's
keys stay on one Redis Cluster slot).  A presented token is hashed and compared with *every* stored hash of
the game using ``hmac.compare_digest``, without stopping at a match, so the time taken does not depend on
which seat (if any) matched.

The game-id prefix lets the service tell "a token of another game" (403) from "no such token" (401)
without a global token index; the prefix is no secret (the game id is in every URL).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING

from service.errors import Unauthorized

if TYPE_CHECKING:
    from flask import Request


#: random bytes per token secret (256 bits; the API asks for at least 128)
TOKEN_BYTES = 32
ADMIN = "admin"


def new_token(game_id: str) -> str:
    return f"{game_id}.{secrets.token_urlsafe(TOKEN_BYTES)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def bearer(request: Request) -> str | None:
    """The bearer token of the request, ``None`` when there is no Authorization header; 401 when the header
    is there but is not a bearer token."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512:
        raise Unauthorized("Authorization must be 'Bearer <token>'")
    return token


def match(token: str, hashes: Mapping[str, str]) -> str | None:
    """The key (a seat number as text, or ``"admin"``) whose stored hash matches ``token``, compared in
    constant time against every entry."""
    presented = token_hash(token).encode("ascii")
    found: str | None = None
    for who, stored in hashes.items():
        if hmac.compare_digest(presented, stored.encode("ascii")):
            found = who
    return found


def token_game(token: str) -> str:
    return token.partition(".")[0]


def unauthorized(detail: str) -> Unauthorized:
    return Unauthorized(detail)
