"""The blueprints of the API (shared/API.md), one per resource, and what they share: reading a JSON body,
finding the caller's seat from its token, and the per-viewer projections of a stored game (view, moves,
events) that never contain a tile the viewer may not see.
"""

from __future__ import annotations

import json
from typing import Any

import redis
from flask import Flask, Response, current_app, request

from service import auth
from service.problems import Problem
from service.store import Game, GameNotFound, Store, play_job_id

JSON_TYPES = ("application/json",)


def conn() -> redis.Redis:
    conn: redis.Redis = current_app.extensions["redis"]
    return conn


def store() -> Store:
    found: Store = current_app.extensions["store"]
    return found


def request_id() -> str | None:
    from flask import g

    return getattr(g, "request_id", None)


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
    return int(who)


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


def game_view(game: Game, seat: int | None, last: tuple[int, dict[str, Any]] | None) -> dict[str, Any]:
    """The caller's view (shared/API.md "The view"): the engine's ``view(seat)`` plus the service's fields."""
    state = game.state
    v = state.view(seat)
    seats = []
    for s, public in enumerate(v["seats"]):
        meta = game.doc["seats"][s]
        seats.append({**public, "seat": s, "name": meta.get("name") or f"seat {s}", "kind": meta["kind"],
                      "engine": meta.get("engine")})
    to_move = state.to_move
    pending = to_move is not None and game.is_ai(to_move)
    out: dict[str, Any] = {
        "id": game.id, "rules": game.doc["rules"], "options": game.doc["options"], "version": game.version,
        "status": "finished" if to_move is None else "active", "to_move": to_move, "you": seat,
        "seats": seats, "table": v["table"], "hand": v["hand"],
        "legal_moves": [m.to_dict() for m in state.legal_moves()] if seat is not None and seat == to_move else [],
        "last_event": None if last is None else event_for(last[0], last[1], seat),
        "ai": {"pending": pending, "job": game.ai_job if pending else None},
        "result": v.get("result") if to_move is None else None,
    }
    for k, val in v.items():
        if k not in STANDARD_VIEW_KEYS and k not in out:
            out[k] = val
    return out


def register(app: Flask) -> None:
    from service.api import engines, games, jobs, replays, rules, streams

    for module in (rules, engines, games, jobs, replays, streams):
        app.register_blueprint(module.bp)
