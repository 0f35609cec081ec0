"""``GET /v1/games/{id}/replay``: the whole record of a finished match.

Once the match is over nothing in it is hidden any more, so anyone who may read the game (any seat, the
admin or a spectator; a bad token is still a 401/403) gets every event with every seat's secret part, the
initial state with every hand, the options, the moves and the effective engine seed.  Before the end it is
a 409 problem (``game-not-finished``): a replay would show the hidden tiles of a running match.

The moves come from the stored events (``service/store.py`` keeps the id of the move that produced each
event); the effective seed is ``State.seed`` of the stored engine state -- the seed the engine state was
created with, whatever the service derived it from -- and ``requested_seed`` is the seed the creator
asked for (or drew).  ``tilehouse replay FILE`` (:mod:`engine.replay`) checks that a replay reproduces its
match.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from engine.replay import initial_state
from service.api import caller, store
from service.problems import Problem

bp = Blueprint("replays", __name__, url_prefix="/v1/games")


def replay_of(game_id: str) -> dict[str, Any]:
    """The replay document of a finished game (409 problem while it runs)."""
    game = store().get(game_id)
    caller(game)  # a bad or foreign token is refused here as everywhere
    state = game.state
    if not state.finished:
        raise Problem(409, "the replay is available once the match is over", slug="game-not-finished",
                      title="Game not finished", extra={"version": game.version})
    doc = game.doc
    base = {"rules": doc["rules"], "players": doc["players"], "options": doc["options"], "seed": state.seed}
    events: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    for n, ev in store().events(game_id):
        events.append({"n": n, "version": ev["version"], "type": ev["type"], "seat": ev["seat"],
                       "data": ev["data"], "secret": ev["secret"], **({"service": True} if ev.get("service") else {})})
        move = ev.get("move")
        if move is not None and (not moves or moves[-1]["version"] != ev["version"]):
            moves.append({"version": ev["version"], "seat": ev.get("mover"), "move": move})
    start = initial_state(base)
    seats = [{"seat": s["seat"], "name": s.get("name") or f"seat {s['seat']}", "kind": s["kind"],
              "engine": s.get("engine"), "params": s.get("params") or {}} for s in doc["seats"]]
    return {"id": game.id, **base, "requested_seed": doc.get("seed"), "version": game.version, "seats": seats,
            "initial_state": start.to_dict(), "moves": moves, "events": events, "result": state.result()}


@bp.get("/<game_id>/replay")
def get_replay(game_id: str) -> ResponseReturnValue:
    return jsonify(replay_of(game_id))
