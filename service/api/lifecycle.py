"""``POST /v1/games/{id}/resign`` and ``POST /v1/games/{id}/rematch`` (issue 11, "lobby and lifecycle").

Resign (also: abandon the table).  The seat of the token resigns: the engine's ``State.resign`` ends the
match with the rule set's defined result (``docs/rules/<rules>.md``, "Resigning"), written by the game's
compare-and-set with its ``resign`` and ``match_end`` events; the clocks stop.  A resignation may come at any
time before the end, also while the game waits for seats (the game then leaves the lobby).  Resigning a
finished game -- twice, or after the end -- is 409 ``game-over`` and changes nothing.  The admin token is not
a seat (403).

Rematch.  After the end, any human seat asks for the next game: same rule set, options, seats (kinds,
engines, parameters, names) and clock, a new seed, linked both ways (``rematch_of`` in the new game,
``rematch`` in the old one, which a ``rematch`` event on the old game announces).  The dealer/banker
rotates through the *engine's starting seat*: seats keep their numbers (and so their players), and among fresh
random seeds the first is taken whose deal makes the seat after the old game's first player the first to
act -- the banker who leads (Tien Gow), the opener (wall and dice, Tiu U), the holder of the lead tile
(Kozel).  (Tried up to ``ROTATION_TRIES`` seeds; with 2-4 seats one fits within a few tries.)

Idempotent and private.  The first call creates the game and links it (a concurrent second call loses the
old game's compare-and-set, deletes what it made and joins the winner's); every later call returns the same
game.  Each human seat of the old game gets its own token for the new one from its own call, and only from
it: the token is ``<new id>.<HMAC-SHA256(old token, new id)>``, so the server can derive it only when that
seat presents its old token, and a repeated call returns the same token.  The new game waits
(``status: "waiting"``, the seat ``taken: false``) until every human seat has asked: like accepting a rematch
on Lichess, a seat that never asks keeps the table waiting.  Open seats that were never taken are open again.
The admin token of the old game is the admin token of the rematch too (its hash is carried over).

Limits.  A rematch is a new game, so the call that creates it is admitted like ``POST /v1/games``
(service/fairplay/limits.py): it counts in the creation rate of the caller's address (the same bucket), and
the new game among the caller's live games; over either, the answer is the same 429 problem
(``rate-limited`` or ``live-games``) and nothing is created or linked.  A call that finds the rematch made
(a seat claiming its place) creates nothing and is never refused by the limits.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from rq.exceptions import NoSuchJobError
from rq.job import Job

import engine
from engine.game import event
from service import auth, jobs
from service.api import conn, game_view, present, request_id, seat_of, store
from service.fairplay import limits, seeds
from service.fairplay.clients import address_key
from service.live import clock
from service.problems import Problem
from service.store import Game, GameNotFound, VersionConflict, new_game_id, now_ms

bp = Blueprint("lifecycle", __name__, url_prefix="/v1/games")

#: compare-and-set rounds before giving up (each lost round means another change landed first)
MAX_ATTEMPTS = 32
#: fresh seeds tried to rotate the starting seat
ROTATION_TRIES = 64


def _over() -> Problem:
    return Problem(409, "the game is over", slug="game-over", title="Game over")


@bp.post("/<game_id>/resign")
def resign(game_id: str) -> ResponseReturnValue:
    for _ in range(MAX_ATTEMPTS):
        game = store().get(game_id)
        seat = seat_of(game)
        if game.state.finished:
            raise _over()
        state = game.state.clone()
        events = state.resign(seat)
        doc = dict(game.doc)
        clock.charge(doc, seat, now_ms())
        clock.restart(doc, None, now_ms(), False)
        try:
            after = store().commit(game, doc, state, events, move="resign", mover=seat)
        except VersionConflict:
            continue
        clock.after_commit(conn(), game, after, current_app.config, request_id())
        return jsonify(game_view(after, seat, after.last_event))
    raise Problem(503, "the game is changing too fast; try again",
                  headers={"Retry-After": str(current_app.config["RETRY_AFTER_SECONDS"])})


def derived_token(old_token: str, new_game: str) -> str:
    """The token of the rematch seat held by ``old_token``: only its holder can have it derived."""
    mac = hmac.new(old_token.encode(), f"rematch/{new_game}".encode(), hashlib.sha256).digest()
    return f"{new_game}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def _rotated_seed(rules: str, options: dict[str, Any], kinds: list[str], first: int | None) -> tuple[int, int]:
    """A fresh ``(seed, engine seed)`` (``service.fairplay.seeds``: the engine seed is new randomness for each
    game) whose deal makes the seat after ``first`` the first to act."""
    rs = engine.get_rules(rules)
    players = len(kinds)
    want = None if first is None else (first + 1) % players
    for _ in range(ROTATION_TRIES):
        seed = seeds.new_seed()
        dealt = seeds.engine_seed(conn(), current_app.config, seed)
        if want is None or rs.new(players, dealt, options).to_move == want:
            break
    return seed, dealt


def _create_rematch(old: Game, game_id: str) -> Game:
    doc = old.doc
    rs = engine.get_rules(doc["rules"])
    players = len(doc["seats"])
    first = rs.new(players, old.state.seed, doc["options"]).to_move  # the old game's first player
    seed, dealt = _rotated_seed(doc["rules"], doc["options"], [m["kind"] for m in doc["seats"]], first)
    state = rs.new(players, dealt, doc["options"])
    seats = []
    for i, m in enumerate(doc["seats"]):
        meta: dict[str, Any] = {"seat": i, "name": m.get("name") or f"seat {i}", "kind": m["kind"],
                                "engine": m.get("engine"), "params": dict(m.get("params") or {})}
        if m["kind"] == "human":
            meta["claim"] = True  # kept for the seat's player, who claims it with its own rematch call
        seats.append(meta)
    new_doc = {"id": game_id, "rules": rs.id, "options": state.options, "players": players, "seed": seed,
               "engine_seed": dealt, "public_seed": False, "seats": seats, "state": state.to_dict(), "last_move": None, "clock": doc.get("clock"),
               "clocks": clock.initial(doc.get("clock"), seats), "rematch_of": old.id, "rematch": None}
    hashes = {auth.ADMIN: old.tokens[auth.ADMIN]} if auth.ADMIN in old.tokens else {}
    return store().create(game_id, new_doc, hashes, live_index=limits.games_key(address_key()))


def _discard(game_id: str) -> None:
    limits.release_game(conn(), address_key(), game_id)  # also when the game was never stored
    for job_id in store().delete(game_id):
        try:
            Job.fetch(job_id, connection=conn()).delete()
        except NoSuchJobError:
            continue


def _link(old: Game) -> tuple[Game, bool]:
    """The rematch of ``old`` and whether this call created it: the existing one, or a new one linked by the
    old game's compare-and-set."""
    for _ in range(MAX_ATTEMPTS):
        if old.doc.get("rematch"):
            return store().get(old.doc["rematch"]), False
        game_id = new_game_id()
        # admitted like POST /v1/games (a 429 here creates nothing); the rate is the route's decorator
        limits.admit_game(conn(), current_app.config, address_key(), game_id)
        try:
            new = _create_rematch(old, game_id)
        except BaseException:
            _discard(game_id)
            raise
        doc = {**old.doc, "rematch": new.id}
        try:
            store().commit(old, doc, old.state, [event("rematch", None, game=new.id)])
        except VersionConflict:
            _discard(new.id)  # someone else linked first (or the game changed): use theirs
            old = store().get(old.id)
            continue
        jobs.record_game(conn(), "created")
        return new, True
    raise Problem(503, "the game is changing too fast; try again",
                  headers={"Retry-After": str(current_app.config["RETRY_AFTER_SECONDS"])})


def _claim(new: Game, seat: int, token: str) -> Game:
    """Give ``seat`` of the rematch its token (once; a repeated call finds it given and changes nothing)."""
    for _ in range(MAX_ATTEMPTS):
        meta = new.doc["seats"][seat]
        if not meta.get("claim"):
            return new
        seats = [dict(m) for m in new.doc["seats"]]
        seats[seat] = {k: v for k, v in meta.items() if k != "claim"}
        seats[seat]["token_sha256"] = auth.token_hash(token)
        doc = {**new.doc, "seats": seats}
        events = [event("join", seat, name=seats[seat]["name"])]
        if not any(m["kind"] == "open" or m.get("claim") for m in seats):
            clock.restart(doc, new.state.to_move, now_ms(), True)
            events.append(event("start", None))
        try:
            after = store().commit(new, doc, new.state, events)
        except VersionConflict:
            new = store().get(new.id)
            continue
        clock.after_commit(conn(), new, after, current_app.config, request_id())
        return after
    raise Problem(503, "the game is changing too fast; try again",
                  headers={"Retry-After": str(current_app.config["RETRY_AFTER_SECONDS"])})


def _rematch_made() -> bool:
    """Does the game of this rematch call have its rematch already (then the call creates nothing)?"""
    try:
        return bool(store().get((request.view_args or {})["game_id"]).doc.get("rematch"))
    except GameNotFound:
        return False  # the view answers 404


@bp.post("/<game_id>/rematch")
@limits.limit_rematches(exempt_when=_rematch_made)
def rematch(game_id: str) -> ResponseReturnValue:
    old = store().get(game_id)
    seat = seat_of(old)
    if not old.state.finished:
        raise Problem(409, "a rematch can be asked for once the game is over", slug="not-over",
                      title="Game not over", extra={"version": old.version})
    try:
        new, created = _link(old)
    except GameNotFound:
        raise Problem(409, "the rematch of this game is gone (deleted or expired)", slug="rematch-gone",
                      title="Rematch gone") from None
    token = derived_token(auth.bearer(request) or "", new.id)
    if new.doc["seats"][seat].get("claim"):
        new = _claim(new, seat, token)
    elif new.tokens.get(str(seat)) != auth.token_hash(token):
        raise Problem(409, f"seat {seat} of the rematch is not yours to claim", slug="seat-taken",
                      title="Seat taken")
    present(new, seat)
    resp = jsonify({"seat": seat, "token": token, "game": game_view(new, seat, new.last_event)})
    resp.status_code = 201 if created else 200
    resp.headers["Location"] = f"/v1/games/{new.id}"
    return resp
