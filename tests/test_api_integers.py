"""Every integer the API sends lies within +-(2^53 - 1), the range a JSON number keeps exactly in every client
(JavaScript's ``Number.MAX_SAFE_INTEGER``), and openapi.yaml bounds every integer it describes within it.

Here: games of every rule set whose seed the server draws (and mixes with its secret), ended at once by a
resignation so that the replay shows both seeds, every answer read. The whole matches of every rule set in
tests/test_api_contract.py check every integer of every answer they read too (views, moves, events, the
replay), and every answer of the API tests is validated against openapi.yaml's bounds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from api_support import SAFE_INTEGER, SPEC, bearer, cheap_ai, tokens_by_seat, unsafe_integers

import engine

pytest_plugins = ["api_fixtures"]


def _integer_schemas(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
            yield path, node
        for k, v in node.items():
            yield from _integer_schemas(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _integer_schemas(v, f"{path}/{i}")


def test_openapi_bounds_every_integer_within_the_safe_range():
    unbounded = [path for path, schema in _integer_schemas(SPEC) if "enum" not in schema
                 and not (schema.get("minimum", -SAFE_INTEGER - 1) >= -SAFE_INTEGER
                          and schema.get("maximum", SAFE_INTEGER + 1) <= SAFE_INTEGER)]
    assert unbounded == []


@pytest.mark.parametrize("rules_id", sorted(engine.RULES))
def test_every_integer_of_a_game_with_seeds_the_server_made_is_within_the_safe_range(client, drain, rules_id):
    players = engine.get_rules(rules_id).players[0]
    seats = [{"kind": "human", "name": "Ann"}] + [cheap_ai("random")] * (players - 1)
    r = client.post("/v1/games", json={"rules": rules_id, "seats": seats})
    assert r.status_code == 201
    created = r.get_json()
    game_id, token = created["game"]["id"], tokens_by_seat(created)[0]
    answers: list[Any] = [created]
    drain()
    view = client.get(f"/v1/games/{game_id}", headers=bearer(token)).get_json()
    answers.append(view)
    if view["legal_moves"]:
        asked = client.post(f"/v1/games/{game_id}/suggestions", json={"engine": "random"}, headers=bearer(token))
        drain()
        answers.append(client.get(f"/v1/jobs/{asked.get_json()['id']}", headers=bearer(token)).get_json())
    answers.append(client.post(f"/v1/games/{game_id}/resign", headers=bearer(token)).get_json())
    answers += [client.get(f"/v1/games/{game_id}/events", headers=bearer(token)).get_json(),
                client.get(f"/v1/games/{game_id}/replay").get_json()]
    assert unsafe_integers(*answers) == []
    replay = answers[-1]
    # both seeds are there: the one the server drew and the one it dealt from (mixed with its secret)
    assert replay["requested_seed"] is not None and replay["seed"] != replay["requested_seed"]
