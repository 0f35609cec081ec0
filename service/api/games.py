"""``/v1/games``: create, view, move, read events, ask for suggestions, delete (docs/api.md)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from service import auth, queues, schemas, tables
from service.api import (
    caller,
    conn,
    context,
    event_for,
    game_view,
    join_url,
    json_body,
    no_content,
    not_modified,
    seat_of,
    store,
    viewer,
    with_etag,
)
from service.api import engines as engines_api
from service.api.jobs import job_json
from service.fairplay import limits
from service.fairplay.clients import address_key, client_key
from service.problems import Problem, from_exception, invalid
from service.store import Game

bp = Blueprint("games", __name__, url_prefix="/v1/games")


def _load(game_id: str) -> Game:
    return store().get(game_id)


@bp.post("")
@limits.limit_creation
def create_game() -> ResponseReturnValue:
    data = schemas.load(schemas.CREATE_GAME, json_body())
    seats: list[dict[str, Any]] = data["seats"]
    if data["public_seed"] and "seed" not in data:
        raise invalid({"public_seed": ["a public seed needs the seed: send 'seed' too"]})
    for i, s in enumerate(seats):
        if s["kind"] == "ai":
            try:
                s["params"] = engines_api.check(s["engine"], s.get("params") or {})
            except Exception as e:
                raise from_exception(e, field_prefix=f"seats.{i}.") from None
    game, tokens, admin = tables.create(context(), rules=data["rules"], seats=seats, options=data["options"],
                                        seed=data.get("seed"), public_seed=data["public_seed"],
                                        clock_settings=data["clock"], client=address_key())
    body = {"game": game_view(game, None, None), "admin_token": admin,
            "seats": [{"seat": int(k), "token": t} for k, t in sorted(tokens.items(), key=lambda kv: int(kv[0]))],
            "join": [{"seat": i, "url": join_url(game.id, i), "code": game.id} for i in game.open_seats]}
    resp = jsonify(body)
    resp.status_code = 201
    resp.headers["Location"] = f"/v1/games/{game.id}"
    return with_etag(resp, game)


@bp.get("/<game_id>")
def get_game(game_id: str) -> ResponseReturnValue:
    game = _load(game_id)
    seat = viewer(game)
    if game.ai_to_move and queues.ensure_ai_progress(conn(), game, current_app.config):
        game = _load(game_id)
    cached = not_modified(game)
    if cached is not None:
        return cached
    return with_etag(jsonify(game_view(game, seat, game.last_event)), game)


@bp.delete("/<game_id>")
def delete_game(game_id: str) -> ResponseReturnValue:
    if auth.bearer(request) is None:  # no token at all: 401 whether or not the game exists
        raise auth.unauthorized("deleting a game needs its admin_token: Authorization: Bearer <token>")
    game = _load(game_id)
    if caller(game, required=True) != auth.ADMIN:
        raise Problem(403, "deleting a game needs its admin_token", slug="not-admin")
    tables.delete(context(), game_id)
    return no_content()


@bp.get("/<game_id>/moves")
def list_moves(game_id: str) -> ResponseReturnValue:
    game = _load(game_id)
    seat = viewer(game)
    cached = not_modified(game)
    if cached is not None:
        return cached
    state = game.state
    moves = [m.to_dict() for m in state.legal_moves()] \
        if seat is not None and seat == state.to_move and not game.waiting else []
    return with_etag(jsonify(moves), game)


@bp.post("/<game_id>/moves")
def post_move(game_id: str) -> ResponseReturnValue:
    game = _load(game_id)
    seat = seat_of(game)
    data = schemas.load(schemas.MOVE, json_body())
    if isinstance(data["move"], dict):
        # unknown fields are a 422 before anything else, retries included
        game.state.check_move_fields(data["move"])
    after, _ = tables.play(context(), game_id, seat, data["move"], data.get("version"), game)
    return with_etag(jsonify(game_view(after, seat, after.last_event)), after)


@bp.get("/<game_id>/events")
def list_events(game_id: str) -> ResponseReturnValue:
    game = _load(game_id)
    seat = viewer(game)
    query = schemas.load(schemas.EVENTS_QUERY, request.args.to_dict())
    return jsonify([event_for(n, ev, seat) for n, ev in store().events(game_id, query["after"])])


@bp.post("/<game_id>/suggestions")
@limits.limit_suggestions
def post_suggestion(game_id: str) -> ResponseReturnValue:
    game = _load(game_id)
    seat = seat_of(game)
    data = schemas.load(schemas.SUGGESTION, json_body())
    engine_id: str = data["engine"]
    try:
        params = engines_api.check(engine_id, data["params"])
    except Exception as e:
        raise from_exception(e) from None
    if data["workers"] > 1 and engine_id not in engines_api.SPLITTABLE:
        raise invalid({"workers": [f"only ismcts splits a search over workers, not {engine_id!r}"]})
    max_workers = current_app.config["AI_MAX_WORKERS"]
    if data["workers"] > max_workers:
        raise invalid({"workers": [f"at most {max_workers} on this server (its cap), not {data['workers']}"]})
    job = tables.suggest(context(), game, seat, engine_id, params, data["workers"], data.get("seed"),
                         data.get("version"), client_key(), address_key())
    resp = jsonify(job_json(job))
    resp.status_code = 202
    resp.headers["Location"] = f"/v1/jobs/{job.id}"
    return resp
