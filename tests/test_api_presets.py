"""What the web client needs from the API: ``GET /v1/engines`` lists each engine's strength
presets, each one a valid ``params`` for an AI seat, and leaves out a preset above the server's caps."""

from __future__ import annotations

from api_support import ContractClient, cheap_ai, create, humans

from service import create_app

pytest_plugins = ["api_fixtures"]


def test_ismcts_lists_its_presets_with_exactly_one_default(client):
    (ismcts,) = [e for e in client.get("/v1/engines").get_json() if e["id"] == "ismcts"]
    names = [p["name"] for p in ismcts["presets"]]
    assert names == ["quick", "standard", "strong"]
    assert [p["name"] for p in ismcts["presets"] if p["default"]] == ["standard"]
    iterations = [p["params"]["iterations"] for p in ismcts["presets"]]
    assert iterations == sorted(iterations)
    greedy = client.get("/v1/engines/greedy").get_json()
    assert greedy["presets"] == []


def test_the_default_preset_asks_for_the_engines_own_default_budget(client):
    # a seat or suggestion with no params plays at the default strength: the preset a frontend picks first
    (ismcts,) = [e for e in client.get("/v1/engines").get_json() if e["id"] == "ismcts"]
    (standard,) = [p for p in ismcts["presets"] if p["default"]]
    defaults = {p["name"]: p["default"] for p in ismcts["params"]}
    assert standard["params"]["iterations"] == defaults["iterations"]


def test_every_listed_preset_creates_an_ai_seat_with_those_params(client):
    for engine in client.get("/v1/engines").get_json():
        for preset in engine["presets"]:
            seat = {"kind": "ai", "engine": engine["id"], "params": preset["params"]}
            created = create(client, "kozel", [*humans(1), seat])
            assert created["game"]["seats"][1]["engine"] == engine["id"]


def test_a_preset_above_the_servers_iteration_cap_is_not_offered(redis_conn, redis_url):
    app = create_app({"REDIS_URL": redis_url, "AI_MAX_ITERATIONS": 1000})
    app.test_client_class = ContractClient
    client = app.test_client()
    (ismcts,) = [e for e in client.get("/v1/engines").get_json() if e["id"] == "ismcts"]
    assert [p["name"] for p in ismcts["presets"]] == ["quick", "standard"]
    # and what it would have asked for is indeed refused there
    r = client.post("/v1/games", json={"rules": "kozel", "seats": [
        *humans(1), {"kind": "ai", "engine": "ismcts", "params": {"iterations": 5000}}]})
    assert r.status_code == 422
    assert create(client, "kozel", [*humans(1), cheap_ai()])["game"]["status"] == "active"
    app.extensions["redis"].close()
