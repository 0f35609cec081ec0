"""Caps on open push streams (``service.fairplay.streams``): per client address over every API process (429)
and per API process (503).  Real HTTP (Flask test client, answers validated against openapi.yaml), a real
Redis; streams are held open by not reading their responses, and closed by closing them."""

from __future__ import annotations

import time

from api_support import create, humans

from service.fairplay import streams
from service.keys import stream_leases_key

pytest_plugins = ["api_fixtures"]


def _open(client, game_id: str, address: str = "10.0.0.1"):
    return client.get(f"/v1/games/{game_id}/stream", buffered=False, environ_base={"REMOTE_ADDR": address})


def test_a_client_address_past_its_cap_of_open_streams_gets_a_429_until_one_closes(make_app, redis_conn):
    client = make_app(STREAMS_PER_CLIENT=3).test_client()
    game_id = create(client, "kozel", humans(2))["game"]["id"]
    held = [_open(client, game_id) for _ in range(3)]
    assert [r.status_code for r in held] == [200, 200, 200]
    refused = _open(client, game_id)
    assert refused.status_code == 429 and refused.headers["Content-Type"] == "application/problem+json"
    assert refused.get_json()["type"].endswith(":too-many-streams") and int(refused.headers["Retry-After"]) >= 1
    assert _open(client, game_id, "10.0.0.2").status_code == 200  # another address has places of its own
    held.pop().close()
    again = _open(client, game_id)
    assert again.status_code == 200
    for r in [*held, again]:
        r.close()
    assert redis_conn.zcard(stream_leases_key("ip:10.0.0.1")) == 0


def test_the_cap_counts_streams_of_every_api_process_of_the_address(make_app, redis_conn):
    one, other = (make_app(STREAMS_PER_CLIENT=2).test_client() for _ in range(2))
    game_id = create(one, "kozel", humans(2))["game"]["id"]
    held = [_open(one, game_id), _open(other, game_id)]
    assert [r.status_code for r in held] == [200, 200]
    assert _open(one, game_id).status_code == 429 and _open(other, game_id).status_code == 429
    for r in held:
        r.close()


def test_a_process_holding_its_most_streams_answers_503_and_still_serves_views(make_app, redis_conn):
    client = make_app(STREAMS_PER_PROCESS=streams.open_here() + 2, STREAMS_PER_CLIENT=100).test_client()
    game_id = create(client, "kozel", humans(2))["game"]["id"]
    held = [_open(client, game_id, f"10.1.0.{i}") for i in range(2)]
    full = _open(client, game_id, "10.1.0.9")
    assert full.status_code == 503 and full.get_json()["type"].endswith(":streams-full")
    assert client.get(f"/v1/games/{game_id}").status_code == 200
    assert client.get("/healthz").status_code == 200
    held[0].close()
    assert _open(client, game_id, "10.1.0.9").status_code == 200
    for r in held:
        r.close()


def test_a_refused_stream_subscribes_nothing_and_keeps_no_place(make_app, redis_conn):
    client = make_app(STREAMS_PER_CLIENT=1).test_client()
    game_id = create(client, "kozel", humans(2))["game"]["id"]
    before = streams.open_here()
    held = _open(client, game_id)
    assert _open(client, game_id).status_code == 429
    assert streams.open_here() == before + 1
    assert redis_conn.pubsub_numsub(f"th:game:{{{game_id}}}:live")[0][1] == 1
    held.close()
    assert streams.open_here() == before


def test_the_lease_of_a_stream_that_stopped_renewing_runs_out_and_frees_its_place(redis_conn):
    cfg = {"STREAM_KEEPALIVE_SECONDS": 0.2, "STREAMS_PER_CLIENT": 1, "STREAMS_PER_PROCESS": 10**6}
    lost = streams.admit(redis_conn, cfg, "ip:10.2.0.1")  # its process "died": never renewed nor released
    time.sleep(0.2 * streams.LEASE_KEEPALIVES + 0.1)
    fresh = streams.admit(redis_conn, cfg, "ip:10.2.0.1")
    fresh.renew(redis_conn)
    assert redis_conn.zcard(stream_leases_key("ip:10.2.0.1")) == 1
    for lease in (lost, fresh):
        lease.release(redis_conn)
