"""Seeds that do not reveal hands.

The engine deals every hand of a match from one integer seed (``engine.new_game``), deterministically.  If
that seed were the one a client sends, whoever creates a table with ``"seed": 1`` could deal the same match
offline and read every hidden tile.  So the seed a client sends (or the server draws) is only the
*requested* seed; the engine gets the *effective* seed

    HMAC-SHA256(secret, "tilehouse/deal/<requested seed>")  -> its first 53 bits

where ``secret`` is the server's seed secret: ``TILEHOUSE_SEED_SECRET`` when set (every API process of a
deployment must then share it), otherwise 32 random bytes generated once and kept in Redis under
:data:`service.keys.SEED_SECRET_KEY` (``SET NX``: the first process to ask creates it, every later one reads the same).  The same
requested seed therefore reproduces the same match on this server (tests, bug reports) and nowhere else,
and the effective seed is shown only by the replay of a finished match (``GET /v1/games/{id}/replay``).

The requested seed is used as it is -- effective = requested -- only

* where no seat is human or open (all-AI games, the arena, engine tests): nobody at the table can profit, and
  reproducing a published seed is the point; or
* where the creator asks for it with ``"public_seed": true`` (tutorials, puzzles, the README's example):
  then anyone who knows the seed knows every hand, which the creator has chosen.

The effective seed is stored in the game document (``engine_seed``, and as ``State.seed`` inside the stored
engine state); no view, event, job or error shows it before the end (tests/test_seeds.py checks that).
AI play jobs draw their chance from the effective seed too (``service.jobs``), never from the requested one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from typing import Any

import redis

from service.keys import SEED_SECRET_KEY

#: bytes of a generated secret
SECRET_BYTES = 32
#: bits of an effective seed: 53 keeps it an exact number in every JSON client (JavaScript included)
SEED_BITS = 53


def secret(conn: redis.Redis, cfg: Mapping[str, Any]) -> bytes:
    """The server's seed secret: the SEED_SECRET setting, else the one kept in Redis (made on first use)."""
    configured = cfg.get("SEED_SECRET") or ""
    if configured:
        return str(configured).encode()
    conn.set(SEED_SECRET_KEY, secrets.token_hex(SECRET_BYTES), nx=True)
    stored = conn.get(SEED_SECRET_KEY)
    if stored is None:  # deleted between the two calls: ask again
        return secret(conn, cfg)
    return stored if isinstance(stored, bytes) else str(stored).encode()


def derive(secret_bytes: bytes, requested: int) -> int:
    """The effective engine seed of ``requested`` under ``secret_bytes`` (``SEED_BITS`` bits)."""
    digest = hmac.new(secret_bytes, f"tilehouse/deal/{requested}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def needs_secret(seat_kinds: Iterable[str], public_seed: bool) -> bool:
    """Is the seed mixed with the secret?  Yes whenever a person sits or may sit at the table (a ``human``
    or an ``open`` seat: any seat that is not ``ai``), unless the creator made the seed public."""
    return not public_seed and any(kind != "ai" for kind in seat_kinds)


def engine_seed(conn: redis.Redis, cfg: Mapping[str, Any], requested: int, seat_kinds: Iterable[str],
                public_seed: bool = False) -> int:
    """The seed the engine deals ``requested`` with, for a table of ``seat_kinds`` (every new game goes
    through here: creation, rematches)."""
    if not needs_secret(seat_kinds, public_seed):
        return requested
    return derive(secret(conn, cfg), requested)
