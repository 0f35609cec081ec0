"""Two API instances -- two gunicorn masters on their own ports, as on two machines -- behind a real load
balancer on loopback (Debian's haproxy, round robin), sharing one Redis and one RQ worker.

One game is played with its requests alternating between instance A, instance B and the balancer, while a
seat's push stream stays open on the other instance: whatever instance a request lands on, it must see the
same game.  Checked: the lobby (a game created on A is listed by B and joined through the balancer), stream
tickets (issued by A, opening a stream on B), the stream (every move, made anywhere, reaches the stream on
B in order), ETags (an ETag from one instance is current or stale on the other exactly as the version says:
304 or 200), and the clock (every instance reports the same deadline for the same version).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest
import requests
from processes import apt_install, environment, start_gunicorn, start_worker, stop, wait_ready

from service.redis_local import free_port

pytestmark = pytest.mark.e2e

MOVES = 12


@pytest.fixture
def haproxy() -> str:
    path = apt_install("haproxy", "haproxy")
    if path is None:
        pytest.skip("no haproxy: apt-get install haproxy was not possible on this machine (not root, or no "
                    "apt-get / package index)")
    return path


@pytest.fixture
def two_instances_behind_a_balancer(haproxy, redis_url, redis_conn, tmp_path) -> Iterator[dict[str, str]]:
    redis_conn.flushdb()
    env = environment(redis_url, {"TILEHOUSE_WEB_CONCURRENCY": "1"})
    a, base_a = start_gunicorn(env, tmp_path / "a.log", config_file=True)
    # each instance its own metrics listener, as two hosts would have
    b, base_b = start_gunicorn({**env, "TILEHOUSE_METRICS_BIND": f"127.0.0.1:{free_port()}"}, tmp_path / "b.log",
                               config_file=True)
    worker = start_worker(env, tmp_path / "worker.log")
    lb_port = free_port()
    conf = tmp_path / "haproxy.cfg"
    conf.write_text(f"""global
    maxconn 256
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    # an open push stream is a long response: idle up to the keep-alive interval, never cut at 30 s
    timeout tunnel 1h
frontend api
    bind 127.0.0.1:{lb_port}
    default_backend instances
backend instances
    balance roundrobin
    option httpchk GET /readyz
    # which instance answered, so the test can see that the balancer uses both
    http-response set-header X-Served-By %[srv_name]
    server a {base_a.removeprefix("http://")} check inter 1s
    server b {base_b.removeprefix("http://")} check inter 1s
""")
    check = subprocess.run([haproxy, "-c", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    lb = subprocess.Popen([haproxy, "-f", str(conf), "-db"], stdout=subprocess.DEVNULL,
                          stderr=(tmp_path / "haproxy.log").open("wb"))
    try:
        wait_ready(base_a, [a, b, worker])
        wait_ready(base_b, [a, b, worker])
        wait_ready(f"http://127.0.0.1:{lb_port}", [lb])
        yield {"a": base_a, "b": base_b, "lb": f"http://127.0.0.1:{lb_port}"}
    finally:
        stop([lb, worker, a, b])


def read_stream(url: str, seen: list[dict], opened: threading.Event, done: threading.Event) -> None:
    """The SSE events of ``url`` into ``seen`` until ``done`` (or the stream ends)."""
    with requests.get(url, stream=True, timeout=(5, 30), headers={"Accept": "text/event-stream"}) as resp:
        assert resp.status_code == 200, resp.text
        opened.set()
        event: dict[str, str] = {}
        for line in resp.iter_lines(decode_unicode=True):
            if done.is_set():
                return
            if line == "":
                if "data" in event:
                    seen.append({"id": int(event["id"]), "type": event.get("event"), **json.loads(event["data"])})
                event = {}
            elif not line.startswith(":"):
                field, _, value = line.partition(":")
                event[field] = value.lstrip(" ")


def test_a_game_alternating_between_two_instances_and_a_balancer_sees_one_game(
        two_instances_behind_a_balancer):
    urls = two_instances_behind_a_balancer
    a, b, lb = urls["a"], urls["b"], urls["lb"]
    # the balancer spreads requests over both instances (once its health checks have passed on both)
    served: set[str] = set()
    deadline = time.monotonic() + 10
    while served != {"a", "b"} and time.monotonic() < deadline:
        served.add(requests.get(f"{lb}/healthz", timeout=5).headers["X-Served-By"])
        time.sleep(0.05)
    assert served == {"a", "b"}

    # lobby: created on A, listed by B, joined through the balancer
    created = requests.post(f"{a}/v1/games", timeout=10, json={
        "rules": "kozel", "seed": 3, "seats": [{"kind": "human", "name": "Ann"}, {"kind": "open"}],
        "clock": {"initial_ms": 600_000, "increment_ms": 1000}}).json()
    game_id = created["game"]["id"]
    ann = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
    listed = requests.get(f"{b}/v1/games", params={"status": "open", "rules": "kozel"}, timeout=10).json()
    assert game_id in [g["id"] for g in listed["games"]]
    joined = requests.post(f"{lb}{created['join'][0]['url']}", json={"name": "Bob"}, timeout=10)
    assert joined.status_code in (200, 201), joined.text
    bob = {"Authorization": f"Bearer {joined.json()['token']}"}
    assert game_id not in [g["id"] for g in requests.get(
        f"{a}/v1/games", params={"status": "open"}, timeout=10).json()["games"]]
    tokens = {0: ann, 1: bob}

    # a stream ticket from A opens Ann's stream on B
    ticket = requests.post(f"{a}/v1/games/{game_id}/stream-tickets", headers=ann, timeout=10).json()
    seen: list[dict] = []
    opened, done = threading.Event(), threading.Event()
    reader = threading.Thread(target=read_stream, args=(f"{b}{ticket['stream']}", seen, opened, done), daemon=True)
    reader.start()
    assert opened.wait(10), "the stream on B did not open with A's ticket"

    order = [a, b, lb]
    for n in range(MOVES):
        # the mover reads and moves on one instance, the ETag and clock are checked on the next two
        here, there, third = order[n % 3], order[(n + 1) % 3], order[(n + 2) % 3]
        view = requests.get(f"{here}/v1/games/{game_id}", headers=ann, timeout=10)
        seat = view.json()["to_move"]
        if seat is None:
            break
        mine = requests.get(f"{here}/v1/games/{game_id}", headers=tokens[seat], timeout=10).json()
        etag = requests.get(f"{there}/v1/games/{game_id}", headers=tokens[seat], timeout=10).headers["ETag"]
        assert etag == f'"{mine["version"]}"'
        assert requests.get(f"{third}/v1/games/{game_id}", headers={**tokens[seat], "If-None-Match": etag},
                            timeout=10).status_code == 304
        move = mine["legal_moves"][0]
        r = requests.post(f"{here}/v1/games/{game_id}/moves", headers=tokens[seat], timeout=10,
                          json={"move": move["id"] if isinstance(move, dict) else move, "version": mine["version"]})
        assert r.status_code == 200, r.text
        after = r.json()
        # the old ETag is stale everywhere, the clock the same everywhere
        for other in (there, third):
            fresh = requests.get(f"{other}/v1/games/{game_id}", headers={**tokens[seat], "If-None-Match": etag},
                                 timeout=10)
            assert fresh.status_code == 200 and fresh.headers["ETag"] == f'"{after["version"]}"'
            assert fresh.json()["clock"]["deadline_ms"] == after["clock"]["deadline_ms"]
            assert fresh.json()["clock"]["running"] == after["clock"]["running"]

    final = requests.get(f"{lb}/v1/games/{game_id}/events", headers=ann, timeout=10).json()
    deadline = time.monotonic() + 10
    while len(seen) < len(final) and time.monotonic() < deadline:
        time.sleep(0.05)
    done.set()
    assert [e["id"] for e in seen] == [e["n"] for e in final], "the stream on B missed or reordered events"
    assert [e["type"] for e in seen] == [e["type"] for e in final]
    assert final[-1]["version"] >= MOVES // 2
