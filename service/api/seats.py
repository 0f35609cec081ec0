"""``/v1/games/{id}/seats/{n}/join``: taking an open seat (issue 11, "lobby and lifecycle").

A game created with ``kind: "open"`` seats waits (``status: "waiting"``: no move, no AI job, no clock) until
every open seat is taken.  ``POST .../seats/{n}/join`` (optional body ``{"name"}``) hands out that seat's
token exactly once: the seat's new metadata (kind ``human``, ``joined: true``, the SHA-256 of the token) is
written by the game's compare-and-set (``Store.commit``), so of any number of concurrent joins exactly one
lands; the others re-read the game and answer 409 ``seat-taken``.  A join that loses the race to a change
of another seat simply tries again.  The join is a ``join`` event; the join that fills the last open seat
adds a ``start`` event and starts the game (the AI's play job, the first clock).  The joining seat counts as
seen (presence) from its join.

Where the issue is silent (as on Lichess, where you cannot accept your own challenge twice): a caller that
presents a seat token of the same game is already seated and gets 409 ``already-seated``; the admin token
may take a seat.  Joining a finished game is 409 ``game-over``.  No body, or ``{}``, keeps the seat's name.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from engine.game import event
from service import auth, schemas
from service.api import caller, conn, game_view, json_body, present, request_id, store
from service.errors import VersionConflict
from service.live import clock
from service.problems import Problem
from service.store import now_ms

bp = Blueprint("seats", __name__, url_prefix="/v1/games/<game_id>/seats")

#: a seat number in a path: 0 to 15 (``schemas.MAX_SEATS`` - 1), no sign, no leading zero
SEAT_NO = re.compile(r"[0-9]|1[0-5]")
#: compare-and-set rounds a join tries before giving up (each lost round means another change landed)
MAX_ATTEMPTS = 64


def optional_body() -> Any:
    """The JSON body, or ``{}`` when the request has none."""
    if not request.content_length and not request.get_data(cache=True):
        return {}
    return json_body()


@bp.post("/<seat_no>/join")
def join(game_id: str, seat_no: str) -> ResponseReturnValue:
    if not SEAT_NO.fullmatch(seat_no):
        raise Problem(404, f"no seat {seat_no!r} (seats are numbered 0 to {schemas.MAX_SEATS - 1})")
    seat = int(seat_no)
    data = schemas.load(schemas.JOIN, optional_body())
    for _ in range(MAX_ATTEMPTS):
        game = store().get(game_id)
        if seat >= len(game.doc["seats"]):
            raise Problem(404, f"game {game_id} has no seat {seat}")
        if isinstance(caller(game), int):
            raise Problem(409, "you already hold a seat of this game", slug="already-seated",
                          title="Already seated")
        if game.state.finished:
            raise Problem(409, "the game is over", slug="game-over", title="Game over")
        meta = game.doc["seats"][seat]
        if meta["kind"] != "open":
            raise Problem(409, f"seat {seat} is not open (it is taken or was never open)", slug="seat-taken",
                          title="Seat taken")
        token = auth.new_token(game_id)
        seats = [dict(m) for m in game.doc["seats"]]
        seats[seat] = {**meta, "kind": "human", "joined": True, "name": data.get("name") or meta["name"],
                       "token_sha256": auth.token_hash(token)}
        doc = {**game.doc, "seats": seats}
        events = [event("join", seat, name=seats[seat]["name"])]
        if not any(m["kind"] == "open" or m.get("claim") for m in seats):
            clock.restart(doc, game.state.to_move, now_ms(), True)
            events.append(event("start", None))
        try:
            after = store().commit(game, doc, game.state, events)
        except VersionConflict:
            continue
        clock.after_commit(conn(), game, after, current_app.config, request_id())
        present(after, seat)
        return jsonify({"seat": seat, "token": token, "game": game_view(after, seat, after.last_event)})
    raise Problem(503, "the game is changing too fast to join; try again",
                  headers={"Retry-After": str(current_app.config["RETRY_AFTER_SECONDS"])})
