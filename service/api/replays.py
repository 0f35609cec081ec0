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


#: the highest step number a path may name (a match has far fewer moves)
MAX_STEP = 100_000


@bp.get("/<game_id>/replay/steps/<step_text>")
def get_replay_step(game_id: str, step_text: str) -> ResponseReturnValue:
    """The finished match after its first ``step`` moves, every hand face up: the table as a spectator sees
    it, each seat's hand (and whatever else only that seat saw, such as its face-down discards) and the
    events that move produced.  For stepping through a replay without an engine in the client."""
    doc = replay_of(game_id)
    moves = doc["moves"]
    step = int(step_text) if step_text.isdecimal() and len(step_text) <= len(str(MAX_STEP)) else -1
    if not 0 <= step <= len(moves):
        raise Problem(404, f"this replay has {len(moves)} steps", slug="no-such-step", title="No such step")
    state = initial_state(doc)
    for mv in moves[:step]:
        if mv["move"] == "resign":
            state.resign(mv["seat"])
        else:
            state.play(mv["move"])
    public = state.view(None)
    private = [state.view(s) for s in range(doc["players"])]
    move = moves[step - 1] if step else None
    seats = [{**pub, **doc["seats"][s]} for s, pub in enumerate(public["seats"])]
    hands = [{"seat": s, "hand": v["hand"] or [],
              **{k: v[k] for k in v if k not in public and k not in ("hand", "you")}} for s, v in enumerate(private)]
    events = [e for e in doc["events"] if move is not None and e["version"] == move["version"]]
    return jsonify({"id": doc["id"], "rules": doc["rules"], "step": step, "steps": len(moves), "move": move,
                    "to_move": state.to_move, "seats": seats, "table": public["table"], "hands": hands,
                    "events": events, "result": doc["result"]})
