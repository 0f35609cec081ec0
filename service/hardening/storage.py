"""A full Redis is a 503, never a lost acknowledged move.

Redis runs with a ``maxmemory`` and the ``noeviction`` policy (docker-compose.yml, docs/deployment.md,
"Memory"): when it is full it refuses every write with an ``OOM`` error and evicts nothing, so no game, no
event and no queued AI job ever disappears to make room.  A move is one Lua script (``service.store``);
Redis refuses a script that may write before it runs while memory is over the limit, so a refused move
wrote nothing, and a move that was answered 200 is stored.  :func:`init_app` maps the refusal to a 503
problem document (``storage-full``) with ``Retry-After``, logged as a warning, instead of a 500.
"""

from __future__ import annotations

import logging

import redis
from flask import Flask, Response, current_app, request

from service import config
from service.problems import Problem, response

log = logging.getLogger(__name__)


def _full(exc: redis.exceptions.OutOfMemoryError) -> Response:
    log.warning("Redis is full: a write was refused", extra={"path": request.path, "error": str(exc)})
    retry = str(current_app.config.get("RETRY_AFTER_SECONDS", config.DEFAULT_RETRY_AFTER_SECONDS))
    return response(Problem(503, "the server's storage is full; nothing was changed, try again later",
                            slug="storage-full", title="Storage full", headers={"Retry-After": retry}))


def init_app(app: Flask) -> None:
    # more specific than the generic handler of service.problems, so Flask picks this one
    app.register_error_handler(redis.exceptions.OutOfMemoryError, _full)
