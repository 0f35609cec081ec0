"""Replays of finished matches: check that a recorded match is exactly what the engine
plays from its initial state and its moves.

A replay document (what ``GET /v1/games/{id}/replay`` answers, see ``docs/api.md``) carries

* ``rules``, ``players``, ``options`` and ``seed``: the *effective* seed the engine state was created with
  (``State.seed``; the service may derive it from the seed a client asked for, so this is the one to use);
* ``initial_state``: the engine's ``to_dict()`` of the match before the first move -- every hand of the
  first deal revealed;
* ``moves``: ``[{"version", "seat", "move"}]``, oldest first; the move that made version ``v`` (``"resign"``:
  the seat resigned, ``State.resign``);
* ``events``: every event with its public ``data`` and every seat's ``secret`` part (nothing hidden);
  events the service wrote itself (``join``, ``start``, ``timeout``, ``rematch``) carry
  ``"service": true`` and are not the engine's to reproduce;
* ``result``: the engine's ``result()`` at the end.

:func:`check` rebuilds the match move by move and compares every event batch, the initial state and the
result; it returns a list of differences (empty when the replay reproduces the match).  Choice made where
the requirements are silent: the initial state is checked against ``new_game(rules, players, seed, options)`` and
the replay is played from ``new_game`` (not from the document's ``initial_state``), so a replay whose seed
does not reproduce the deal fails instead of being trusted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engine.exceptions import EngineError
from engine.game import Event, State, new_game


def _normal(obj: Any) -> Any:
    """JSON round trip: int keys of ``secret`` become strings, tuples lists, as stored."""
    return json.loads(json.dumps(obj))


def logged_event(ev: Event, version: int) -> dict[str, Any]:
    """An engine event as a replay lists it (secrets of every seat included, keys as strings)."""
    return _normal({"version": version, "type": ev["type"], "seat": ev["seat"], "data": ev["data"],
                    "secret": ev["secret"]})


def initial_state(replay: Mapping[str, Any]) -> State:
    """The match before its first move, from the replay's rules, players, seed and options."""
    return new_game(replay["rules"], players=replay["players"], seed=replay["seed"], options=replay["options"])


def check(replay: Mapping[str, Any]) -> list[str]:
    """Every difference between ``replay`` and what the engine plays from it (empty: it reproduces)."""
    problems: list[str] = []
    try:
        state = initial_state(replay)
    except (EngineError, KeyError, TypeError, ValueError) as e:
        return [f"cannot start the match: {e}"]
    if "initial_state" in replay and _normal(state.to_dict()) != _normal(replay["initial_state"]):
        problems.append("initial_state is not the state new_game(rules, players, seed, options) deals")
    logged: dict[int, list[dict[str, Any]]] = {}
    for ev in replay.get("events", []):
        if ev.get("service"):
            continue  # written by the service (a join, a timeout notice...), not by an engine move
        row = {k: ev.get(k) for k in ("version", "type", "seat", "data", "secret")}
        logged.setdefault(int(ev["version"]), []).append(_normal(row))
    played_versions = set()
    for i, mv in enumerate(replay.get("moves", [])):
        where = f"move {i + 1} ({mv.get('move')!r}, version {mv.get('version')})"
        if state.finished:
            problems.append(f"{where}: the match was already over")
            break
        if mv.get("seat") != state.to_move and mv.get("move") != "resign":  # any seat may resign any time
            problems.append(f"{where}: seat {mv.get('seat')} moved but seat {state.to_move} was to move")
        try:
            # a resignation is recorded as the move "resign" of the resigning seat
            events = state.resign(mv["seat"]) if mv["move"] == "resign" else state.play(mv["move"])
        except (EngineError, KeyError, TypeError) as e:
            problems.append(f"{where}: {e}")
            break
        version = int(mv["version"])
        played_versions.add(version)
        got = [logged_event(e, version) for e in events]
        if got != logged.get(version, []):
            problems.append(f"{where}: the engine produced {len(got)} events that differ from the "
                            f"{len(logged.get(version, []))} logged ones")
    else:
        if not state.finished:
            problems.append("the moves end before the match does")
    stray = sorted(set(logged) - played_versions - {0})
    if stray:
        problems.append(f"events logged for versions no move made: {stray[:5]}")
    if "result" in replay and state.finished and _normal(state.result()) != _normal(replay["result"]):
        problems.append("the result differs from the one the engine computes")
    return problems


def main(argv: list[str] | None = None) -> int:
    """``tilehouse replay FILE``: check that a replay document reproduces its match."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="tilehouse replay",
                                description="Check that a replay (GET /v1/games/{id}/replay) reproduces its "
                                            "match move by move: every event and the result.")
    p.add_argument("file", help="the replay JSON ('-' for standard input)")
    a = p.parse_args(argv)
    try:
        text = sys.stdin.read() if a.file == "-" else open(a.file, encoding="utf-8").read()  # noqa: SIM115
        replay = json.loads(text)
    except (OSError, ValueError) as e:
        print(f"tilehouse replay: cannot read {a.file}: {e}", file=sys.stderr)
        return 2
    if not isinstance(replay, Mapping):
        print("tilehouse replay: a replay is a JSON object", file=sys.stderr)
        return 2
    problems = check(replay)
    moves, events = len(replay.get("moves", [])), len(replay.get("events", []))
    if problems:
        for line in problems:
            print(f"MISMATCH {line}")
        print(f"{replay.get('rules')} game {replay.get('id', '?')}: does NOT reproduce ({len(problems)} problems)")
        return 1
    payoffs = replay.get("result", {}).get("payoffs")
    print(f"{replay['rules']} game {replay.get('id', '?')}: {moves} moves and {events} events reproduced; "
          f"result {payoffs} reproduced")
    return 0
