"""``/v1/games``: create, view, move, read events, ask for suggestions, delete (shared/API.md)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

import engine
from service import auth, jobs, schemas
from service.api import (
    caller,
    conn,
    event_for,
    game_view,
    join_url,
    json_body,
    not_modified,
    request_id,
    seat_of,
    store,
    viewer,
    with_etag,
)
from service.api import engines as engines_api
from service.api.jobs import job_json
from service.fairplay import budget, limits, seeds
from service.fairplay.clients import address_key, client_key
from service.hardening import recovery
from service.live import clock as live_clock
from service.problems import Problem, from_exception, invalid
from service.store import Game, NotStarted, NotYourTurn, TimeUp, VersionConflict, new_game_id, now_ms

bp = Blueprint("games", __name__, url_prefix="/v1/games")


def _load(game_id: str) -> Game:
    return store().get(game_id)


@bp.post("")
@limits.limit_creation
def create_game() -> ResponseReturnValue:
    data = schemas.load(schemas.CREATE_GAME, json_body())
    rs = engine.get_rules(data["rules"])
    seats_in: list[dict[str, Any]] = data["seats"]
    public_seed: bool = data["public_seed"]
    if public_seed and "seed" not in data:
        raise invalid({"public_seed": ["a public seed needs the seed: send 'seed' too"]})
    seed = data["seed"] if "seed" in data else seeds.new_seed()
    dealt = seeds.engine_seed(conn(), current_app.config, seed, public_seed)
    state = rs.new(len(seats_in), dealt, data["options"])
    seats: list[dict[str, Any]] = []
    for i, s in enumerate(seats_in):
        meta: dict[str, Any] = {"seat": i, "name": s.get("name") or f"seat {i}", "kind": s["kind"],
                                "engine": None, "params": {}}
        if s["kind"] == "ai":
            try:
                meta["params"] = engines_api.check(s["engine"], s.get("params") or {})
            except Exception as e:
                raise from_exception(e, field_prefix=f"seats.{i}.") from None
            meta["engine"] = s["engine"]
        seats.append(meta)
    game_id = new_game_id()
    limits.admit_game(conn(), current_app.config, address_key(), game_id)
    try:
        game, tokens, admin = _store_new_game(game_id, rs, state, seed, dealt, public_seed, seats, data["clock"])
    except BaseException:
        # no game was kept: give its place among the client's live games back now, not after the 60 s that
        # an admission in flight holds it (service.fairplay.limits)
        limits.release_game(conn(), address_key(), game_id)
        raise
    jobs.record_game(conn(), "created")
    jobs.schedule_play(conn(), game, request_id=request_id(), cfg=current_app.config)
    live_clock.schedule(conn(), game, current_app.config)
    body = {"game": game_view(game, None, None), "admin_token": admin,
            "seats": [{"seat": int(k), "token": t} for k, t in sorted(tokens.items(), key=lambda kv: int(kv[0]))],
            "join": [{"seat": i, "url": join_url(game_id, i), "code": game_id} for i in game.open_seats]}
    resp = jsonify(body)
    resp.status_code = 201
    resp.headers["Location"] = f"/v1/games/{game_id}"
    return with_etag(resp, game)


def _store_new_game(game_id: str, rs: engine.RuleSet, state: engine.State, seed: int, dealt: int,
                    public_seed: bool, seats: list[dict[str, Any]],
                    clock: dict[str, Any] | None) -> tuple[Game, dict[str, str], str]:
    """The new game's tokens and document, stored: ``(game, seat tokens by seat, admin token)``."""
    tokens = {str(i): auth.new_token(game_id) for i, s in enumerate(seats) if s["kind"] == "human"}
    admin = auth.new_token(game_id)
    hashes = {k: auth.token_hash(t) for k, t in tokens.items()}
    hashes[auth.ADMIN] = auth.token_hash(admin)
    # ``seed``: what the creator asked for (or the server drew); ``engine_seed``: what the engine dealt with
    # (service.fairplay.seeds) -- shown by nothing but the replay of the finished match
    doc = {"id": game_id, "rules": rs.id, "options": state.options, "players": len(seats), "seed": seed,
           "engine_seed": dealt, "public_seed": public_seed, "seats": seats, "state": state.to_dict(),
           "last_move": None, "clock": clock,
           "clocks": live_clock.initial(clock, seats), "rematch_of": None, "rematch": None}
    # a game with no open seat starts now: the first seat's clock (if it has one) runs from its creation
    live_clock.restart(doc, state.to_move, now_ms(), all(s["kind"] != "open" for s in seats))
    game = store().create(game_id, doc, hashes, live_index=limits.games_key(address_key()))
    return game, tokens, admin


@bp.get("/<game_id>")
def get_game(game_id: str) -> ResponseReturnValue:
    game = _load(game_id)
    seat = viewer(game)
    if game.ai_to_move and jobs.ensure_ai_progress(conn(), game, current_app.config):
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
    recovery.delete_jobs(conn(), store().delete(game_id))
    return "", 204


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
        # unknown fields are a 422 before anything else, retries included (issue 16)
        game.state.check_move_fields(data["move"])
    try:
        after, applied = store().apply_move(game_id, seat, data["move"], data.get("version"), game)
    except TimeUp as e:
        # the flag fell before the scheduled timeout ran: carry it out now, then refuse the move
        done = live_clock.run_timeout(store(), game_id, e.version, current_app.config)
        raise Problem(409, str(e), slug="time-up", title="Out of time",
                      extra={"version": done["version"] if done["version"] is not None else e.version}) from None
    if applied:
        if after.state.finished:
            jobs.record_game(conn(), "finished")
        jobs.schedule_play(conn(), after, request_id=request_id(), cfg=current_app.config)
        live_clock.schedule(conn(), after, current_app.config)
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
    if "version" in data and data["version"] != game.version:
        raise VersionConflict(data["version"], game.version)
    if game.waiting:
        raise NotStarted(game.open_seats)
    if game.state.to_move != seat:
        raise NotYourTurn(seat, game.state.to_move)
    charged = budget.charge(conn(), current_app.config, game_id, client_key(), params, data["workers"])
    seed = data["seed"] if "seed" in data else seeds.new_seed()
    job = jobs.enqueue_suggestion(conn(), game, seat, engine_id, params, data["workers"], seed, request_id(),
                                  cfg=current_app.config, charged=charged)
    resp = jsonify(job_json(job))
    resp.status_code = 202
    resp.headers["Location"] = f"/v1/jobs/{job.id}"
    return resp
