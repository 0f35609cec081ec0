"""A full Redis (``maxmemory`` with ``noeviction``) answers 503 problem documents and never loses an
acknowledged move (``service.hardening.storage``).  A private redis-server with a tiny ``maxmemory`` of its
own, filled up by the test; real HTTP through the Flask test client."""

from __future__ import annotations

import pytest
import redis
from api_support import bearer, create, humans, tokens_by_seat
from test_faults import private_redis

from service import create_app
from service.store import Store


@pytest.fixture
def full_redis(tmp_path):
    with private_redis(tmp_path) as server:
        conn = redis.Redis.from_url(server.url)
        conn.config_set("maxmemory-policy", "noeviction")
        yield server, conn


def _fill(conn: redis.Redis) -> int:
    """Set maxmemory just above what is used, then write until Redis refuses; returns that maxmemory."""
    used = int(conn.info("memory")["used_memory"])
    limit = used + 256 * 1024
    conn.config_set("maxmemory", limit)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        for i in range(100000):
            conn.set(f"ballast:{i}", "x" * 1024)
    # full, and it stays full: a few kB that Redis frees by itself (an expiring rate-limit key, a client's
    # buffer) must not let one more small write slip in while the test asks for its refusals
    conn.config_set("maxmemory", int(conn.info("memory")["used_memory"]) // 2)
    return limit


def test_a_full_redis_answers_503_problems_and_keeps_every_acknowledged_move(full_redis):
    server, conn = full_redis
    app = create_app({"REDIS_URL": server.url, "SEED_SECRET": "full"})
    client = app.test_client()
    created = create(client, "kozel", humans(2))
    game_id = created["game"]["id"]
    toks = tokens_by_seat(created)
    acknowledged = []
    url = f"/v1/games/{game_id}"
    for _ in range(3):
        view = client.get(url).get_json()
        h = bearer(toks[view["to_move"]])
        move = client.get(f"{url}/moves", headers=h).get_json()[0]["id"]
        r = client.post(f"{url}/moves", json={"move": move}, headers=h)
        assert r.status_code == 200
        acknowledged.append(r.get_json()["version"])
    limit = _fill(conn)
    view = client.get(url).get_json()  # reading still works
    h = bearer(toks[view["to_move"]])
    move = client.get(f"{url}/moves", headers=h).get_json()[0]["id"]
    refused = client.post(f"{url}/moves", json={"move": move}, headers=h)
    assert refused.status_code == 503 and refused.headers["Content-Type"] == "application/problem+json"
    assert refused.get_json()["type"].endswith(":storage-full") and refused.headers["Retry-After"]
    again = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)})
    assert again.status_code == 503 and again.headers["Content-Type"] == "application/problem+json"
    store = Store(conn, 3600)
    assert store.version(game_id) == acknowledged[-1] == 3
    assert len(store.events(game_id)) >= 3
    # room again: the same move is played
    for k in conn.scan_iter("ballast:*", count=1000):
        conn.delete(k)
    conn.config_set("maxmemory", limit)
    assert client.post(f"{url}/moves", json={"move": move}, headers=h).status_code == 200
    assert store.version(game_id) == 4
    app.extensions["redis"].close()
    app.extensions["redis_streams"].close()
