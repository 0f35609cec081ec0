"""service/keys.py: every key a whole game writes belongs to a declared family, under one prefix, and expires
with the game (or by its family's own expiry)."""

from __future__ import annotations

from api_support import bearer, cheap_ai, tokens_by_seat

import engine
from service import keys

pytest_plugins = ["api_fixtures"]

#: rule set -> (seats, options): one human seat, AI seats for the rest, a match as short as the rules allow
TABLES = {"tiengow": (4, {"deals": 1}), "tiengow_wall": (4, {"games": 1}), "tiuu": (3, {"games": 1}),
          "kozel": (2, {"target": 10})}


def test_every_rule_set_has_a_table_in_the_key_test():
    assert set(TABLES) == set(engine.RULES)


def _play_out(client, drain, game_id: str, token: str) -> dict:
    """Drain the AI seats' jobs, make the human seat's first legal move, until the match is over; the first
    human turn also asks for a suggestion (AI budget keys) and a stream ticket."""
    asked = False
    for _ in range(2000):
        drain()
        view = client.get(f"/v1/games/{game_id}", headers=bearer(token)).get_json()
        if view["status"] == "finished":
            return view
        if view["to_move"] != view["you"]:
            continue
        if not asked:
            asked = True
            r = client.post(f"/v1/games/{game_id}/suggestions", headers=bearer(token),
                            json={"engine": "greedy"})
            assert r.status_code == 202, r.get_json()
            r = client.post(f"/v1/games/{game_id}/stream-tickets", headers=bearer(token))
            assert r.status_code == 201, r.get_json()
            drain()
        move = view["legal_moves"][0]["id"]
        r = client.post(f"/v1/games/{game_id}/moves", headers=bearer(token),
                        json={"move": move, "version": view["version"]})
        assert r.status_code == 200, r.get_json()
    raise AssertionError(f"game {game_id} did not finish")


def test_every_key_of_a_whole_game_of_every_rule_set_is_declared_and_expires_with_it(make_app, drain,
                                                                                      redis_conn):
    app = make_app()
    idle = app.config["GAME_TTL_SECONDS"]  # the workers' too: both read the same defaults
    client = app.test_client()
    for rules, (players, options) in TABLES.items():
        seats = [{"kind": "human", "name": "P0"}, *[cheap_ai("greedy") for _ in range(players - 1)]]
        created = client.post("/v1/games", json={"rules": rules, "seats": seats, "options": options,
                                                 "clock": {"initial_ms": 3_600_000}}).get_json()
        # a second table waits in the lobby with an open seat
        client.post("/v1/games", json={"rules": rules, "seats": [{"kind": "human"}, {"kind": "open"}, *(
            [cheap_ai("random")] * (players - 2))], "options": options})
        _play_out(client, drain, created["game"]["id"], tokens_by_seat(created)[0])
    assert client.get("/v1/games").get_json()["games"], "the lobby lists the waiting tables"

    found: dict[str, list[str]] = {}
    for raw in redis_conn.scan_iter(count=1000):
        key = raw.decode()
        if key.startswith(keys.RQ_PREFIX):
            if key.startswith("rq:job:") or key.startswith("rq:results:"):
                # RQ keeps a job's dependencies (service.fairplay.ai_share) under rq:job::<id>:dependencies
                job_id = key.split(":", 2)[2].lstrip(":").removesuffix(":dependencies").removesuffix(":dependents")
                assert keys.JOB_ID.fullmatch(job_id), f"an RQ job with an undeclared id: {key}"
                assert redis_conn.ttl(key) > 0, f"{key} never expires"
            continue
        family = keys.family_of(key)
        assert family is not None, f"{key} belongs to no declared family of service/keys.py"
        assert key.startswith(keys.PREFIX), key
        found.setdefault(family.name, []).append(key)
        ttl = redis_conn.ttl(key)
        if family.expires == "never":
            assert ttl == -1, f"{key} ({family.name}) is declared never to expire"
        else:
            assert 0 < ttl <= idle, f"{key} ({family.name}) expires in {ttl} s, not with the game"
    assert {"game", "events", "jobs", "ticket", "game budget", "client budget", "lobby", "client games",
            "metrics", "rate limits", "AI watch"} <= set(found), sorted(found)
