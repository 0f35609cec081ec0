"""The blueprints of the API (docs/api.md), one per resource, and what they share: reading a JSON body,
finding the caller's seat from its token, and the per-viewer projections of a stored game (view, moves,
events) that never contain a tile the viewer may not see.

Presence: every request authenticated by a seat token records that the seat was seen
(``Store.touch``, at most once per ``PRESENCE_INTERVAL_SECONDS`` per seat, judged from the time the request
has just read, so a poll in between writes nothing); every view shows ``last_seen_ms`` of each human seat.
A presence update does not change the game's version or ``ETag``: a 304 may stand for a view whose
``last_seen_ms`` has since moved on.
"""

from __future__ import annotations

import json
from typing import Any

import redis
from flask import Flask, Response, current_app, g, request

from service import auth, tables
from service.errors import GameNotFound
from service.keys import play_job_id
from service.live import clock
from service.problems import Problem
from service.store import Game, Store, now_ms

JSON_TYPES = ("application/json",)


def conn() -> redis.Redis:
    conn: redis.Redis = current_app.extensions["redis"]
    return conn


def store() -> Store:
    found: Store = current_app.extensions["store"]
    return found


def request_id() -> str | None:
    return getattr(g, "request_id", None)


def context() -> tables.Context:
    """What this request's use cases talk to (:mod:`service.tables`)."""
    return tables.Context(store(), current_app.config, request_id())


def no_content() -> Response:
    """A 204: no body and no Content-Type (Flask would label even an empty body ``text/html``)."""
    resp = current_app.response_class(status=204)
    del resp.headers["Content-Type"]
    return resp


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_body() -> Any:
    """The request body as JSON: 415 unless it says it is JSON, 413 when too large, 400 when malformed."""
    mimetype = request.mimetype or ""
    if mimetype not in JSON_TYPES and not mimetype.endswith("+json"):
        raise Problem(415, f"send the body as application/json, not {mimetype or 'no content type'}")
    raw = request.get_data(cache=True)
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise Problem(400, "the request body is not valid JSON") from None


def caller(game: Game, *, required: bool = False, admin: bool = False) -> int | str | None:
    """The seat (int) or ``"admin"`` the bearer token stands for in ``game``; ``None`` for a spectator.

    401: a token that matches nothing (or none when ``required``); 403: a token of another game."""
    token = auth.bearer(request)
    if token is None:
        if required:
            raise auth.unauthorized("this needs a seat token: Authorization: Bearer <token>")
        return None
    who = auth.match(token, game.tokens)
    if who is None:
        other = auth.token_game(token)
        if other and other != game.id:
            try:
                foreign = store().get(other)
            except GameNotFound:
                foreign = None
            if foreign is not None and auth.match(token, foreign.tokens) is not None:
                raise Problem(403, "this token belongs to another game", slug="foreign-token")
        raise auth.unauthorized("unknown token")
    if who == auth.ADMIN:
        return auth.ADMIN
    seat = int(who)
    now, known = now_ms(), game.seen.get(who)
    if known is None or now - known >= current_app.config["PRESENCE_INTERVAL_SECONDS"] * 1000:
        # written once the request has succeeded (_record_presence): a refused request changes nothing
        g.presence = (game.id, seat, known, now)
        game.seen[who] = now
    return seat


def present(game: Game, seat: int) -> None:
    """Record at once that ``seat`` is present (it has just taken its seat: a join, a rematch claim)."""
    seen = store().touch(game.id, seat, known=game.seen.get(str(seat)),
                         interval=current_app.config["PRESENCE_INTERVAL_SECONDS"])
    if seen is not None:
        game.seen[str(seat)] = seen


def _record_presence(resp: Response) -> Response:
    pending = getattr(g, "presence", None)
    if pending is not None and resp.status_code < 400:
        game_id, seat, known, now = pending
        store().touch(game_id, seat, known=known, now=now,
                      interval=current_app.config["PRESENCE_INTERVAL_SECONDS"])
    return resp


def seat_of(game: Game) -> int:
    """The acting seat: a seat token is required; the admin token is not a seat."""
    who = caller(game, required=True)
    if who == auth.ADMIN or who is None:
        raise Problem(403, "the admin token does not act for a seat; use a seat token", slug="not-a-seat")
    assert isinstance(who, int)
    return who


def viewer(game: Game) -> int | None:
    """The seat whose view the caller gets (the admin sees what a spectator sees)."""
    who = caller(game)
    return who if isinstance(who, int) else None


# --------------------------------------------------------------------------- projections

def event_for(n: int, ev: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """A stored event as ``seat`` may see it: the public data plus that seat's own secret part."""
    data = dict(ev["data"])
    if seat is not None:
        data.update(ev["secret"].get(str(seat), {}))
    return {"n": n, "version": ev["version"], "type": ev["type"], "seat": ev["seat"], "data": data}


def etag(game: Game) -> str:
    """``"<version>"``; a fallback AI job for the same version (which changes ``ai.job``) adds its suffix."""
    base = play_job_id(game.id, game.version)
    if game.ai_job and game.ai_job != base and game.ai_job.startswith(base):
        return f'"{game.version}{game.ai_job[len(base):]}"'
    return f'"{game.version}"'


def not_modified(game: Game) -> Response | None:
    tag = etag(game)
    if request.if_none_match and request.if_none_match.contains_weak(tag.strip('"')):
        resp = current_app.response_class(status=304)
        resp.headers["ETag"] = tag
        resp.headers["Vary"] = "Authorization"
        return resp
    return None


def with_etag(resp: Response, game: Game) -> Response:
    resp.headers["ETag"] = etag(game)
    resp.headers["Vary"] = "Authorization"
    resp.headers["Cache-Control"] = "no-cache"
    return resp


STANDARD_VIEW_KEYS = ("rules", "players", "to_move", "finished", "you", "hand", "seats", "table", "result")


def join_url(game_id: str, seat: int) -> str:
    return f"/v1/games/{game_id}/seats/{seat}/join"


def game_view(game: Game, seat: int | None, last: tuple[int, dict[str, Any]] | None) -> dict[str, Any]:
    """The caller's view (docs/api.md, "The view"): the engine's ``view(seat)`` plus the service's fields:
    ``status`` (``waiting`` until every seat is taken), per seat its ``last_seen_ms``, ``clock_ms`` and, for
    an open seat, its ``join`` URL; the ``clock``; the ``rematch_of``/``rematch`` links."""
    state = game.state
    v = state.view(seat)
    clock_view, remaining = clock.view(game.doc, now_ms())
    open_seats = game.open_seats
    seats = []
    for s, public in enumerate(v["seats"]):
        meta = game.doc["seats"][s]
        seats.append({**public, "seat": s, "name": meta.get("name") or f"seat {s}", "kind": meta["kind"],
                      "engine": meta.get("engine"), "joined": bool(meta.get("joined")),
                      "last_seen_ms": None if meta["kind"] == "ai" else game.seen.get(str(s)),
                      "clock_ms": remaining[s], "taken": s not in open_seats,
                      "join": join_url(game.id, s) if meta["kind"] == "open" else None})
    status = game.status
    to_move = state.to_move
    pending = game.ai_to_move
    active = status == "active"
    out: dict[str, Any] = {
        "id": game.id, "rules": game.doc["rules"], "options": game.doc["options"], "version": game.version,
        "status": status, "to_move": to_move, "you": seat,
        "seats": seats, "table": v["table"], "hand": v["hand"],
        "legal_moves": [m.to_dict() for m in state.legal_moves()]
        if active and seat is not None and seat == to_move else [],
        "last_event": None if last is None else event_for(last[0], last[1], seat),
        "ai": {"pending": pending, "job": game.ai_job if pending else None},
        "result": v.get("result") if to_move is None else None,
        "clock": clock_view,
        "rematch_of": game.doc.get("rematch_of"), "rematch": game.doc.get("rematch"),
    }
    for k, val in v.items():
        if k not in STANDARD_VIEW_KEYS and k not in out:
            out[k] = val
    return out


def init_app(app: Flask) -> None:
    """What every blueprint's requests share: presence recorded once the request has succeeded.  (The
    blueprints, which import this module, are registered by the app factory.)"""
    app.after_request(_record_presence)
