"""Every integer the API sends lies within +-(2^53 - 1), the range a JSON number keeps exactly in every client
(JavaScript's ``Number.MAX_SAFE_INTEGER``): whole matches of every rule set with seeds the server draws (and
mixes with its secret), every answer read (creation, views, moves, events, the replay, the AI jobs), and
openapi.yaml bounds every integer it describes within the same range."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from api_support import SPEC, bearer, cheap_ai, play_out, tokens_by_seat

pytest_plugins = ["api_fixtures"]

SAFE = 2**53 - 1
#: every rule set, with seeds left to the server
GAMES = [("tiengow", 4, {}), ("tiengow_wall", 2, {}), ("tiuu", 3, {}), ("kozel", 2, {"target": 15})]


def integers(doc: Any, path: str = "") -> Iterator[tuple[str, int]]:
    """Every integer in a JSON document, with where it is."""
    if isinstance(doc, bool):
        return
    if isinstance(doc, int):
        yield path, doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from integers(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from integers(v, f"{path}[{i}]")


def _schemas(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
            yield path, node
        for k, v in node.items():
            yield from _schemas(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _schemas(v, f"{path}/{i}")


def test_openapi_bounds_every_integer_within_the_safe_range():
    unbounded = [path for path, schema in _schemas(SPEC)
                 if "enum" not in schema
                 and not (schema.get("minimum", -SAFE - 1) >= -SAFE and schema.get("maximum", SAFE + 1) <= SAFE)]
    assert unbounded == []


@pytest.mark.parametrize(("rules_id", "players", "options"), GAMES)
def test_every_integer_of_a_whole_match_with_a_server_drawn_seed_is_within_the_safe_range(
        client, drain, rules_id, players, options):
    seats = [{"kind": "human", "name": "Ann"}] + [cheap_ai("random")] * (players - 1)
    r = client.post("/v1/games", json={"rules": rules_id, "seats": seats, "options": options})
    assert r.status_code == 201
    created = r.get_json()
    game_id, token = created["game"]["id"], tokens_by_seat(created)[0]
    answers: list[Any] = [created]
    suggestion = client.post(f"/v1/games/{game_id}/suggestions", json={"engine": "random"}, headers=bearer(token))
    if suggestion.status_code == 202:  # the human seat is to move
        drain()
        answers.append(client.get(f"/v1/jobs/{suggestion.get_json()['id']}", headers=bearer(token)).get_json())
    view = play_out(client, drain, game_id, token, random.Random(9), answers)
    answers += [client.get(f"/v1/games/{game_id}/events").get_json(),
                client.get(f"/v1/games/{game_id}/events", headers=bearer(token)).get_json(),
                client.get(f"/v1/games/{game_id}/moves", headers=bearer(token)).get_json()]
    replay = client.get(f"/v1/games/{game_id}/replay").get_json()
    answers.append(replay)
    if view["ai"]["job"]:
        answers.append(client.get(f"/v1/jobs/{view['ai']['job']}").get_json())
    outside = [(where, n) for answer in answers for where, n in integers(answer) if not -SAFE <= n <= SAFE]
    assert outside == []
    # the seeds the server drew and derived are there, and within the range too
    assert replay["requested_seed"] is not None and replay["seed"] != replay["requested_seed"]
