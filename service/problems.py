"""Every error the service answers, as one RFC 9457 problem document (``application/problem+json``).

``{"type", "title", "status", "detail", "errors"?}`` for every 4xx and 5xx: malformed JSON (400), missing or
unknown token (401), foreign token or out of turn (403), unknown resource (404), wrong method (405, with
``Allow``), stale version (409), a move before every seat is taken (409 ``not-started``), body too large
(413), not JSON (415), invalid input (422, with the field ``errors`` naming each bad field), rate limited (429), Redis or the queue unavailable (503, with
``Retry-After``), and a 500 whose body never contains a stack trace or an exception text.

This module is the only place where the service's, the engine's and the AI's errors become HTTP
(cosmicpython's "errors mapped at the edge"): every refusal of :mod:`service.errors` gets its status from
:data:`STATUS` and keeps its own ``slug``, ``title`` and members; ``InvalidMove``/``IllegalMove`` -> 422 on ``move``, ``BadOptions`` -> 422 on the option,
``UnknownRules`` -> 422 on ``rules``, ``ai.BadParams`` -> 422 on ``params``, ``ai.UnknownEngine`` -> 422 on
``engine``.  Path lookups of unknown things raise ``NotFound`` explicitly (404).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import redis
from flask import Flask, Response, current_app, json
from werkzeug.exceptions import HTTPException

import ai
from engine.exceptions import BadOptions, IllegalMove, InvalidMove, UnknownRules
from service import config, errors

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:tilehouse:problem:"

#: status -> (slug, title) for the problems we raise ourselves and the ones werkzeug raises
TITLES: dict[int, tuple[str, str]] = {
    400: ("malformed-json", "Malformed request"),
    401: ("unauthorized", "Missing or unknown token"),
    403: ("forbidden", "Not allowed"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    409: ("stale-version", "Version conflict"),
    413: ("body-too-large", "Request body too large"),
    415: ("not-json", "Unsupported media type"),
    422: ("invalid", "Invalid request"),
    429: ("rate-limited", "Too many requests"),
    500: ("internal", "Internal server error"),
    503: ("unavailable", "Service unavailable"),
}

log = logging.getLogger(__name__)


class Problem(Exception):
    """An error answered as a problem document.  ``slug`` refines the ``type`` (e.g. ``out-of-turn``)."""

    def __init__(self, status: int, detail: str, *, slug: str | None = None, title: str | None = None,
                 errors: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
                 extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(detail)
        default_slug, default_title = TITLES.get(status, ("error", "Error"))
        self.status = status
        self.detail = detail
        self.slug = slug or default_slug
        self.title = title or default_title
        self.errors = dict(errors) if errors else None
        self.headers = dict(headers) if headers else {}
        #: RFC 9457 extension members (e.g. the current ``version`` with a 409)
        self.extra = dict(extra) if extra else {}

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": TYPE_PREFIX + self.slug, "title": self.title, "status": self.status,
                             "detail": self.detail}
        if self.errors is not None:
            d["errors"] = self.errors
        d.update(self.extra)
        return d


def invalid(errors: Mapping[str, Any], detail: str | None = None) -> Problem:
    """A 422 naming each bad field."""
    if detail is None:
        first = next(iter(errors))
        msg = errors[first]
        while isinstance(msg, list | dict) and msg:
            msg = msg[0] if isinstance(msg, list) else next(iter(msg.values()))
        detail = f"{first}: {msg}"
    return Problem(422, detail, errors=errors)


def unavailable(detail: str = "Redis or the job queue is unavailable; try again shortly") -> Problem:
    retry = str(current_app.config["RETRY_AFTER_SECONDS"] if current_app else config.DEFAULT_RETRY_AFTER_SECONDS)
    return Problem(503, detail, headers={"Retry-After": retry})


def response(problem: Problem) -> Response:
    resp = current_app.response_class(json.dumps(problem.to_dict()), status=problem.status, mimetype=PROBLEM_JSON)
    for k, v in problem.headers.items():
        resp.headers[k] = v
    return resp


#: the HTTP status of each refusal of the service (the most specific class listed wins)
STATUS: dict[type[errors.ServiceError], int] = {
    errors.GameNotFound: 404, errors.NoSuchSeat: 404,
    errors.Unauthorized: 401, errors.BadTicket: 401,
    errors.NotYourTurn: 403, errors.Forbidden: 403,
    errors.VersionConflict: 409, errors.NotStarted: 409, errors.TimeUp: 409, errors.GameOver: 409,
    errors.NotOver: 409, errors.SeatTaken: 409, errors.AlreadySeated: 409, errors.RematchGone: 409,
    errors.BudgetSpent: 429, errors.TooManyLiveGames: 429,
    errors.Busy: 503,
}
#: headers a refusal of each class carries besides Retry-After
HEADERS: dict[type[errors.ServiceError], dict[str, str]] = {
    errors.Unauthorized: {"WWW-Authenticate": 'Bearer realm="tilehouse"'},
}


def from_service_error(exc: errors.ServiceError) -> Problem:
    """The problem document of a refusal of the service: its status from :data:`STATUS`, ``Retry-After``
    from its ``retry_after`` (a 503 without one waits ``RETRY_AFTER_SECONDS``)."""
    kind = next((k for k in type(exc).__mro__ if k in STATUS), None)
    if kind is None:  # a refusal nobody mapped is a bug of ours, answered as one
        log.error("unmapped service error %s", type(exc).__name__)
        return Problem(500, "an unexpected error occurred; it has been logged")
    status = STATUS[kind]
    headers = dict(HEADERS.get(kind, {}))
    retry = exc.retry_after
    if retry is None and status == 503:
        retry = int(current_app.config["RETRY_AFTER_SECONDS"] if current_app else config.DEFAULT_RETRY_AFTER_SECONDS)
    if retry is not None:
        headers["Retry-After"] = str(retry)
    return Problem(status, exc.detail, slug=exc.slug, title=exc.title, headers=headers, extra=exc.extra)


def from_exception(exc: BaseException, field_prefix: str = "") -> Problem:
    """The problem document for any exception (engine, AI, store, werkzeug, Redis, or a bug).
    ``field_prefix`` places field errors inside the request body (``seats.2.``)."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, errors.ServiceError):
        return from_service_error(exc)
    if isinstance(exc, InvalidMove | IllegalMove):
        return invalid({"move": [str(exc)]}, detail=str(exc))
    if isinstance(exc, BadOptions):
        field = f"options.{exc.option}" if exc.option and exc.option not in ("players", "seed") else (
            "seats" if exc.option == "players" else exc.option or "options")
        return invalid({field: [str(exc)]}, detail=str(exc))
    if isinstance(exc, UnknownRules):
        return invalid({"rules": [str(exc)]}, detail=str(exc))
    if isinstance(exc, ai.UnknownEngine):
        return invalid({f"{field_prefix}engine": [str(exc)]}, detail=str(exc))
    if isinstance(exc, ai.BadParams):
        return invalid({f"{field_prefix}params": [str(exc)]}, detail=str(exc))
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError | redis.BusyLoadingError):
        return unavailable()
    if isinstance(exc, HTTPException):
        code = exc.code or 500
        detail = exc.description or TITLES.get(code, ("", "Error"))[1]
        headers = {}
        if code == 405:
            # werkzeug knows the allowed methods; a 405 without Allow is not HTTP
            allow = [v for k, v in exc.get_headers() if k.lower() == "allow"]
            if allow:
                headers["Allow"] = allow[0]
        if code == 400:
            detail = "the request body is not valid JSON" if "JSON" in detail or "json" in detail else detail
        return Problem(code, detail, headers=headers)
    return Problem(500, "an unexpected error occurred; it has been logged")


def init_app(app: Flask) -> None:
    """One error handler for everything."""

    @app.errorhandler(Exception)
    def _handle(exc: Exception) -> Response:
        problem = from_exception(exc)
        if problem.status >= 500 and problem.status != 503:
            log.exception("unhandled error", exc_info=exc)
        return response(problem)
