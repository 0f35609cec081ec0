"""Who a client is, for the per-client limits: the bearer token it presents, else its address.

A request with ``Authorization: Bearer <token>`` is the client of that token (a seat, or a table's admin);
one without is its IP address -- ``request.remote_addr``, which is the proxy's own address unless the proxy
is trusted (gunicorn's ``FORWARDED_ALLOW_IPS``, or ProxyFix in front of the app).  Tokens are hashed before
they become part of a Redis key: a key never holds a usable token.
"""

from __future__ import annotations

import hashlib

from flask import request

#: characters of the token's SHA-256 kept in the key (128 bits)
TOKEN_HASH_CHARS = 32


def client_key() -> str:
    """``token:<sha256 prefix>`` for a request with a bearer token, else ``ip:<address>``."""
    scheme, _, token = (request.headers.get("Authorization") or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() == "bearer" and token:
        return "token:" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:TOKEN_HASH_CHARS]
    return f"ip:{request.remote_addr or 'unknown'}"


def address_key() -> str:
    """``ip:<address>`` whatever the request carries: the client of a request that makes new tables, so
    that creating games with a different token each time counts as one client."""
    return f"ip:{request.remote_addr or 'unknown'}"
