"""``GET /v1/games?status=open&rules=...``: the lobby of joinable games.

Lists the games that have a seat anyone may take (``kind: "open"``), most recently active first, from the
index ``th:lobby[:<rules>]`` (:class:`service.lobby.Lobby`) that every commit changing a game's joinability keeps right,
and that is checked against the games as it is read (an expired, deleted or filled game never shows).
Paginated by cursor, as Lichess's APIs do: ``limit`` (1-50, default 20) and the ``next`` cursor of the
previous page; ``next`` is null on the last page (a page that ends exactly at the end may be followed by
one empty page).  Each entry is the spectator's summary: id, rules, options, seats (name, kind, engine,
taken), the open seats with their join URLs, the clock and the creation link.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from service import schemas
from service.api import join_url, store
from service.lobby import Lobby
from service.store import Game

bp = Blueprint("lobby", __name__, url_prefix="/v1/games")


def summary(game: Game) -> dict[str, Any]:
    open_seats = game.open_seats
    return {
        "id": game.id, "rules": game.doc["rules"], "options": game.doc["options"], "status": game.status,
        "players": len(game.doc["seats"]),
        "seats": [{"seat": i, "name": m.get("name") or f"seat {i}", "kind": m["kind"], "engine": m.get("engine"),
                   "taken": i not in open_seats} for i, m in enumerate(game.doc["seats"])],
        "join": [{"seat": i, "url": join_url(game.id, i), "code": game.id}
                 for i, m in enumerate(game.doc["seats"]) if m["kind"] == "open"],
        "clock": game.doc.get("clock"),
        "url": f"/v1/games/{game.id}",
    }


@bp.get("")
def list_games() -> ResponseReturnValue:
    query = schemas.load(schemas.LOBBY_QUERY, request.args.to_dict())
    cursor = None
    if "cursor" in query:
        score, _, game_id = query["cursor"].partition(".")
        cursor = (int(score), game_id)
    games, nxt = Lobby(store()).page(query.get("rules"), query["limit"], cursor)
    return jsonify({"games": [summary(g) for g in games],
                    "next": None if nxt is None else f"{nxt[0]}.{nxt[1]}"})
