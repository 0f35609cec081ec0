"""openapi.yaml is a valid OpenAPI 3.1 document, is served at /openapi.yaml, and describes exactly the
routes the app has (every response the API tests receive is validated against it by ``api_support``); every
event of whole matches of every rule set matches the schema of its own type, its data the data schema of its
rule set, and every integer they carry lies within +-(2^53 - 1)."""

from __future__ import annotations

import random
import re

import pytest
import yaml
from api_support import (
    ROOT,
    SPEC,
    bearer,
    cheap_ai,
    check_schema,
    create,
    play_out,
    tokens_by_seat,
    unsafe_integers,
)
from openapi_spec_validator import validate

pytest_plugins = ["api_fixtures"]


def test_openapi_yaml_is_a_valid_openapi_3_1_document():
    assert SPEC["openapi"].startswith("3.1")
    validate(SPEC)


def test_the_installed_package_serves_the_same_document(client):
    assert (ROOT / "service" / "openapi.yaml").resolve() == (ROOT / "openapi.yaml").resolve()
    r = client.get("/openapi.yaml")
    assert r.status_code == 200 and r.mimetype == "application/yaml"
    assert yaml.safe_load(r.get_data()) == SPEC


def test_every_route_of_the_app_is_in_the_contract_and_nothing_else(app):
    routes = set()
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            routes.add((method.lower(), path))
    documented = {(m, p) for p, ops in SPEC["paths"].items() for m in ops if m != "parameters"}
    assert routes == documented


def test_the_operations_endpoints_answer_as_documented(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {"status": "ready", "checks": {"redis": "ok", "queue": "ok"}}
    # /metrics answers on the metrics listener (127.0.0.1:9100 by default), never on the API's address
    assert client.get("/metrics").status_code == 404
    metrics = client.get("/metrics", environ_overrides={"SERVER_PORT": "9100"})
    assert metrics.status_code == 200 and metrics.mimetype == "text/plain"


def test_listings_describe_every_rule_set_and_engine(client):
    import ai
    import engine

    assert [r["id"] for r in client.get("/v1/rules").get_json()] == sorted(engine.RULES)
    assert [e["id"] for e in client.get("/v1/engines").get_json()] == sorted(ai.ENGINES)
    for rid in engine.RULES:
        assert client.get(f"/v1/rules/{rid}").get_json()["id"] == rid
    for eid in ai.ENGINES:
        assert client.get(f"/v1/engines/{eid}").get_json()["params"] is not None


#: short whole matches of every rule set (kozel also in team play), one human seat and AI seats
WHOLE_GAMES = [("tiengow", 4, {"deals": 2}), ("tiengow_wall", 3, {"games": 2}), ("tiuu", 2, {}),
               ("kozel", 3, {"target": 1}), ("kozel", 4, {"teams": True, "target": 1})]
#: the schema name part of each rule set in the per-rule-set data schemas (``DealDataTienGowWall``)
RULES_SUFFIX = {"tiengow": "TienGow", "tiengow_wall": "TienGowWall", "tiuu": "TiuU", "kozel": "Kozel"}


def _type_schema(event_type: str) -> str:
    return "".join(part.capitalize() for part in event_type.split("_")) + "Event"


def _data_schemas(rules_id: str, event_type: str) -> list[str]:
    """The data schema of ``event_type``: its own when it has one, else the variant of ``rules_id``."""
    event_schema = SPEC["components"]["schemas"][_type_schema(event_type)]
    ref = event_schema["properties"]["data"]["$ref"].rsplit("/", 1)[1]
    variants = [v["$ref"].rsplit("/", 1)[1] for v in SPEC["components"]["schemas"][ref].get("anyOf", [])]
    if not variants:
        return [ref]
    own = [v for v in variants if v.endswith("Data" + RULES_SUFFIX[rules_id])]
    return own or [v for v in variants if not any(v.endswith("Data" + s) for s in RULES_SUFFIX.values())]


def test_the_event_types_are_listed_once_each_with_their_own_schema():
    schemas = SPEC["components"]["schemas"]
    names = schemas["EventType"]["enum"]
    assert len(names) == len(set(names))
    assert schemas["Event"]["discriminator"]["mapping"] == {
        t: f"#/components/schemas/{_type_schema(t)}" for t in names}
    assert [o["$ref"] for o in schemas["Event"]["oneOf"]] == list(schemas["Event"]["discriminator"]["mapping"].values())
    for t in names:
        assert schemas[_type_schema(t)]["properties"]["type"] == {"type": "string", "enum": [t]}


@pytest.mark.parametrize(("rules_id", "players", "options"), WHOLE_GAMES)
def test_every_event_of_a_whole_match_matches_the_schema_of_its_own_type_and_every_integer_is_safe(
        client, drain, rules_id, players, options):
    seats = [{"kind": "human", "name": "Ann"}] + [cheap_ai("greedy" if i % 2 else "random")
                                                  for i in range(players - 1)]
    # a public seed: the same deal on every run, so the match reaches the same events (with a private seed
    # each game is dealt afresh, and a one-round Kozel team match may see no pass); the range of private,
    # derived seeds is tests/test_seeds.py's
    created = create(client, rules_id, seats, seed=31, options=options, public_seed=True)
    game_id, token = created["game"]["id"], tokens_by_seat(created)[0]
    answers: list = [created]
    play_out(client, drain, game_id, token, random.Random(3), answers)
    own = client.get(f"/v1/games/{game_id}/events", headers=bearer(token)).get_json()
    public = client.get(f"/v1/games/{game_id}/events").get_json()
    replay = client.get(f"/v1/games/{game_id}/replay").get_json()
    # every integer of every answer, the replay's seed included
    assert unsafe_integers(*answers, own, public, replay) == []
    seen = set()
    for ev in own + public:
        check_schema(_type_schema(ev["type"]), ev)
        assert any(_valid(name, ev["data"]) for name in _data_schemas(rules_id, ev["type"])), ev
        seen.add(ev["type"])
    for ev in replay["events"]:
        assert ev["type"] in SPEC["components"]["schemas"]["EventType"]["enum"]
        names = _data_schemas(rules_id, ev["type"])
        # the public part, and each seat's view of it (public plus that seat's secret), fit the type's data
        for data in [ev["data"], *({**ev["data"], **secret} for secret in ev["secret"].values())]:
            assert any(_valid(name, data) for name in names), ev
    assert {"match_end"} <= seen and len(seen) >= 4, seen


def _valid(schema: str, doc: object) -> bool:
    try:
        check_schema(schema, doc)
    except AssertionError:
        return False
    return True


def test_docs_api_md_lists_every_event_type():
    events = (ROOT / "docs" / "api.md").read_text().split("\n## Events\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([a-z_]+)`\s+\{", events))
    assert listed == set(SPEC["components"]["schemas"]["EventType"]["enum"])
