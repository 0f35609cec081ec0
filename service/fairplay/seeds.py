"""Seeds that do not reveal hands.

The engine deals every hand of a match from one integer seed (``engine.new_game``), deterministically.  If
that seed were the one a client sends, whoever creates a table with ``"seed": 1`` could deal the same match
offline and read every hidden tile; and if it were only the client's seed mixed with a server secret, the
creator could still open a throw-away table with the same seed, resign it at once and read every hand of
the real table in the throw-away's replay.  So the seed a client sends (or the server draws) is only the
*requested* seed; the engine gets the *effective* seed

    HMAC-SHA256(secret, "tilehouse/deal/<requested seed>/<nonce>")  -> its first 53 bits

where ``nonce`` is :data:`NONCE_BYTES` fresh random bytes drawn for this one game (never stored, never
shown) and ``secret`` is the server's seed secret: ``TILEHOUSE_SEED_SECRET`` when set, otherwise 32 random
bytes generated once and kept in Redis under :data:`service.keys.SEED_SECRET_KEY` (``SET NX``: the first process to ask creates
it, every later one reads the same).  The nonce alone makes two games of the same requested seed deal
different tables; the secret keeps the derivation unpredictable even to someone who could guess the nonce.

The effective seed is stored in the game document (``engine_seed``, and as ``State.seed`` inside the stored
engine state) and shown only by the replay of the finished match (``GET /v1/games/{id}/replay``), which
therefore still reproduces the match: ``engine.new_game(rules, players, seed, options)`` with the replay's
``seed``.  No view, event, job or error shows it before the end (tests/test_seeds.py checks that).  AI
play jobs draw their chance from the effective seed too (``service.jobs``), never from the requested one.
53 bits keep every seed an exact number in JavaScript (``Number.MAX_SAFE_INTEGER`` is 2^53 - 1).

The requested seed is used as it is -- effective = requested -- only where the creator asks for it with
``"public_seed": true`` (tutorials, puzzles, arenas, the README's example): then anyone who knows the seed
knows every hand, which the creator has chosen.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

import redis

from service.keys import SEED_SECRET_KEY

#: bytes of a generated secret
SECRET_BYTES = 32
#: bytes of fresh randomness mixed into each game's effective seed
NONCE_BYTES = 16
#: bits of an effective seed and of a seed the server draws: every one is a JS-safe integer
SEED_BITS = 53
#: the largest seed the server deals or draws (``Number.MAX_SAFE_INTEGER``)
MAX_SEED = 2**SEED_BITS - 1


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


def new_seed() -> int:
    """A requested seed drawn by the server for a game created without one (JS-safe)."""
    return secrets.randbits(SEED_BITS)


def derive(secret_bytes: bytes, requested: int, nonce: bytes) -> int:
    """The effective engine seed of ``requested`` under ``secret_bytes`` and one game's ``nonce`` (53 bits)."""
    message = f"tilehouse/deal/{requested}/".encode() + nonce.hex().encode()
    digest = hmac.new(secret_bytes, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def engine_seed(conn: redis.Redis, cfg: Mapping[str, Any], requested: int, public_seed: bool = False) -> int:
    """The seed the engine deals a new game of ``requested`` with (every new game goes through here:
    creation, rematches): ``requested`` itself when the creator made it public, else fresh for this game."""
    if public_seed:
        return requested
    return derive(secret(conn, cfg), requested, secrets.token_bytes(NONCE_BYTES))
