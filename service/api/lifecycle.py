"""``POST /v1/games/{id}/resign`` and ``POST /v1/games/{id}/rematch``.

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

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from service import auth, tables
from service.api import context, game_view, present, seat_of, store
from service.errors import GameNotFound
from service.fairplay import limits
from service.fairplay.clients import address_key

bp = Blueprint("lifecycle", __name__, url_prefix="/v1/games")

@bp.post("/<game_id>/resign")
def resign(game_id: str) -> ResponseReturnValue:
    game = store().get(game_id)
    seat = seat_of(game)
    after = tables.resign(context(), game_id, seat, game)
    return jsonify(game_view(after, seat, after.last_event))


def derived_token(old_token: str, new_game: str) -> str:
    """The token of the rematch seat held by ``old_token``: only its holder can have it derived."""
    mac = hmac.new(old_token.encode(), f"rematch/{new_game}".encode(), hashlib.sha256).digest()
    return f"{new_game}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


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
    new, created, token = tables.rematch(context(), old, seat, auth.bearer(request) or "", address_key(),
                                         derived_token)
    present(new, seat)
    resp = jsonify({"seat": seat, "token": token, "game": game_view(new, seat, new.last_event)})
    resp.status_code = 201 if created else 200
    resp.headers["Location"] = f"/v1/games/{new.id}"
    return resp
