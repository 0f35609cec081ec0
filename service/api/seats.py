"""``/v1/games/{id}/seats/{n}/join``: taking an open seat.

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

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from service import schemas, tables
from service.api import caller, context, game_view, json_body, present, store
from service.errors import AlreadySeated
from service.problems import Problem

bp = Blueprint("seats", __name__, url_prefix="/v1/games/<game_id>/seats")

#: a seat number in a path: 0 to 15 (``schemas.MAX_SEATS`` - 1), no sign, no leading zero
SEAT_NO = re.compile(r"[0-9]|1[0-5]")


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
    game = store().get(game_id)
    if seat >= len(game.doc["seats"]):
        raise Problem(404, f"game {game_id} has no seat {seat}")
    if isinstance(caller(game), int):
        raise AlreadySeated()
    after, token = tables.join(context(), game_id, seat, data.get("name"), game)
    present(after, seat)
    return jsonify({"seat": seat, "token": token, "game": game_view(after, seat, after.last_event)})
