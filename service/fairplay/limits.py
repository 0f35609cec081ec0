"""Request-rate limits: how many games one client may create per minute, how many of its games
may be live (not finished, not expired, not deleted) at once, and how many suggestions a seat may ask for.

* Suggestions: at most ``SUGGESTIONS_PER_MINUTE`` (default 30) accepted suggestions per seat (its token) in
  a moving minute, kept by Flask-Limiter like the creation rate below; more is a 429 with ``Retry-After``.

* The creation rate is a request-rate limit, kept by Flask-Limiter (``limits`` underneath) in the service's
  Redis, so every API process counts the same requests: ``GAMES_PER_MINUTE`` (default 10) games created per
  client address in a moving one-minute window, by ``POST /v1/games`` and by the rematch calls that create
  the rematch (one shared bucket, ``CREATION_SCOPE``); more is a 429 problem with ``Retry-After``.
  Only created games count (``deduct_when``: a 422 costs nothing, nor does a rematch call that finds the
  rematch made).  The client is the address
  (:func:`service.fairplay.clients.address_key`), not a token: a creator has no token of its own yet, and a
  made-up ``Authorization`` header must not make a fresh client.
* The live-games cap is not a rate: :mod:`service.fairplay.live_games` (no Flask: the use cases admit
  every game they create there).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, current_app, request
from flask.typing import ResponseReturnValue
from flask_limiter import Limiter, RateLimitExceeded, RequestLimit

from service import connections
from service.fairplay.clients import address_key, client_key
from service.keys import LIMITER_PREFIX
from service.problems import Problem, response

#: what each limited route counts, for the problem's detail
_COUNTED = {"games.create_game": "new games from one client address",
            "lifecycle.rematch": "new games from one client address",
            "games.post_suggestion": "suggestions from one seat"}
#: the bucket that ``POST /v1/games`` and the rematches that create a game share
CREATION_SCOPE = "create-game"


def _rate_limited(limit: RequestLimit) -> Response:
    retry = min(60, max(1, math.ceil(limit.reset_at - time.time())))  # reset_at is rounded up
    what = _COUNTED.get(request.endpoint or "", "requests from one client")
    return response(Problem(429, f"at most {limit.limit.amount} {what} per {limit.limit.GRANULARITY.name}; "
                                 f"try again in {retry} s", slug="rate-limited",
                            headers={"Retry-After": str(retry)}))


limiter = Limiter(key_func=address_key, strategy="moving-window", on_breach=_rate_limited)


def games_per_minute() -> str:
    return f"{current_app.config['GAMES_PER_MINUTE']} per minute"


def created(resp: Response) -> bool:
    return resp.status_code == 201


def suggestions_per_minute() -> str:
    return f"{current_app.config['SUGGESTIONS_PER_MINUTE']} per minute"


def accepted(resp: Response) -> bool:
    return resp.status_code == 202


#: the decorator of ``POST /v1/games``: every game created counts
limit_creation = limiter.shared_limit(games_per_minute, scope=CREATION_SCOPE, deduct_when=created)


def limit_rematches(exempt_when: Callable[[], bool]) -> Any:
    """The decorator of ``POST /v1/games/{id}/rematch``: the same bucket as ``POST /v1/games``, where only a
    call that creates the rematch (201) counts, and a call ``exempt_when`` says will find it made (a seat
    claiming its place creates nothing) is never refused."""
    return limiter.shared_limit(games_per_minute, scope=CREATION_SCOPE, deduct_when=created,
                                exempt_when=exempt_when)


#: the decorator of the suggestion route: per seat (its token), only accepted suggestions count
limit_suggestions = limiter.limit(suggestions_per_minute, key_func=client_key, deduct_when=accepted)


def init_app(app: Flask) -> None:
    """Flask-Limiter on the service's Redis (``RATELIMIT_*`` settings may still be given in the config)."""
    app.config.setdefault("RATELIMIT_STORAGE_URI", connections.limiter_storage_uri(app.config))
    # the moving windows under the service's prefix (the storage's own default prefix is ``LIMITS``)
    app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", {"key_prefix": LIMITER_PREFIX})
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", False)
    limiter.init_app(app)
    # the problem document made by _rate_limited, ahead of the generic handler of service.problems
    app.register_error_handler(RateLimitExceeded, _breached)


def _breached(exc: RateLimitExceeded) -> ResponseReturnValue:
    if exc.response is not None:
        return exc.response
    return response(Problem(429, exc.description or "too many requests", headers={"Retry-After": "60"}))
