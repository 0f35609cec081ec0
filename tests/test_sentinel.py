"""Redis Sentinel: the API, the RQ workers and RQ itself find the master through the sentinels
(``TILEHOUSE_REDIS_SENTINELS``, ``TILEHOUSE_REDIS_SENTINEL_MASTER``), and a commit waits for a replica
(``TILEHOUSE_REDIS_WAIT_REPLICAS``), so a failover loses no acknowledged move.

Real processes on loopback: a master, a replica and three sentinels (``redis-server --sentinel``), gunicorn
and two RQ workers.  The test plays the human seat of games against AI seats through HTTP, kills the master
outright halfway, starts it again empty as a replica of the promoted one (as an orchestrator restarts a
dead pod), and plays every game to the end; each move the API acknowledged (200) must be
in the finished game's replay at the version it was acknowledged with.  A worker that RQ stops because it
lost Redis in the middle of a job is started again, as its Deployment would.
"""

from __future__ import annotations

import contextlib
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests
from api_support import bearer, create, humans, tokens_by_seat
from processes import environment, start_gunicorn, start_worker, stop, wait_ready

from service import connections
from service.keys import game_key
from service.redis_local import RedisUnavailable, free_port, redis_server_binary

pytest_plugins = ["api_fixtures"]

MASTER_NAME = "tilehouse"
GAMES = 3
#: acknowledged human moves (over all games) after which the master is killed
KILL_AFTER = 6
#: a liveness bound, not a speed target: the three games' AI moves share one chain (one client address,
#: service.fairplay.ai_share), so a loaded machine needs far longer than the usual 20-30 s
DEADLINE_SECONDS = 150.0


def _binary() -> str:
    try:
        return redis_server_binary()[0]
    except RedisUnavailable as exc:
        pytest.skip(f"no redis-server to run a master, a replica and sentinels: {exc}")


class Servers:
    """redis-server processes on loopback, each with its own folder under ``tmp``."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.binary = _binary()
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def redis(self, port: int, *extra: str) -> None:
        folder = self.tmp / f"redis-{port}"
        folder.mkdir(exist_ok=True)
        self.procs[port] = subprocess.Popen(
            [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "",
             "--appendonly", "no", "--logfile", str(folder / "redis.log"), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _wait(lambda: redis.Redis(port=port, socket_timeout=0.5).ping(), f"redis on {port}")

    def sentinel(self, port: int, master_port: int) -> None:
        folder = self.tmp / f"sentinel-{port}"
        folder.mkdir(exist_ok=True)
        conf = folder / "sentinel.conf"  # the sentinel rewrites its own file: one each
        # a short failover timeout: an election the sentinels lose (split votes) is tried again in seconds.
        # Down after 3 s, not 1: on a loaded 2-core machine a promoted master forking for its new replica's
        # full sync missed 1 s of pings, and the sentinels failed over back to the restarted, still empty
        # server (every game lost: a failover the test provoked, not the one it means to test)
        conf.write_text(f"port {port}\nbind 127.0.0.1\ndir {folder}\nlogfile {folder / 'sentinel.log'}\n"
                        f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 2\n"
                        f"sentinel down-after-milliseconds {MASTER_NAME} 3000\n"
                        f"sentinel failover-timeout {MASTER_NAME} 3000\n")
        self.procs[port] = subprocess.Popen([self.binary, str(conf), "--sentinel"], stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _wait(lambda: redis.Redis(port=port, socket_timeout=0.5).ping(), f"sentinel on {port}")

    def kill(self, port: int) -> None:
        proc = self.procs.pop(port)
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait(check, what: str, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(redis.RedisError, OSError):
            if check():
                return
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def sentinel_setup(tmp_path: Path) -> Iterator[tuple[Servers, int, int, list[int]]]:
    servers = Servers(tmp_path)
    master, replica = free_port(), free_port()
    sentinels = [free_port() for _ in range(3)]
    try:
        servers.redis(master)
        servers.redis(replica, "--replicaof", "127.0.0.1", str(master))
        _wait(lambda: redis.Redis(port=master).info("replication")["connected_slaves"] == 1, "the replica")
        for port in sentinels:
            servers.sentinel(port, master)

        def settled() -> bool:
            for port in sentinels:
                s = redis.Redis(port=port, decode_responses=True)
                if len(s.sentinel_slaves(MASTER_NAME)) != 1 or len(s.sentinel_sentinels(MASTER_NAME)) != 2:
                    return False
            return True

        _wait(settled, "the sentinels to find the replica and each other")
        yield servers, master, replica, sentinels
    finally:
        servers.stop()


def _stuck(game_ids: set[str], sentinels: str) -> str:
    """What the unfinished games wait for, read through the sentinels (for the failure message)."""
    conn = connections.client({"REDIS_URL": "redis://unused/0", "REDIS_SENTINELS": sentinels,
                               "REDIS_SENTINEL_MASTER": MASTER_NAME}, decode_responses=True)
    out = []
    for game_id in sorted(game_ids):
        version, ai_job = conn.hmget(game_key(game_id), ["version", "ai_job"])
        status = conn.hget(f"rq:job:{ai_job}", "status") if ai_job else None
        places = [key for key in conn.keys("rq:*queue:*") if conn.type(key) == "list" and ai_job
                  and conn.lpos(key, ai_job) is not None]
        out.append(f"{game_id}: version {version}, ai_job {ai_job!r} {status} in {places}")
    return "games not finished: " + "; ".join(out)


def _call(method: str, url: str, **kw):  # type: ignore[no-untyped-def]
    """One HTTP call; a connection error counts as a 503 (the API may be between two Redis masters)."""
    try:
        return requests.request(method, url, timeout=10, **kw)
    except requests.ConnectionError:
        return None


@pytest.mark.e2e
def test_games_against_ai_seats_finish_across_a_sentinel_failover_with_no_acknowledged_move_lost(
        sentinel_setup, tmp_path):
    servers, master, replica, sentinels = sentinel_setup
    spec = ",".join(f"127.0.0.1:{p}" for p in sentinels)
    # REDIS_URL points at nothing: every connection must come from the sentinels
    env = environment(f"redis://127.0.0.1:{free_port()}/0", {
        "TILEHOUSE_REDIS_SENTINELS": spec, "TILEHOUSE_REDIS_SENTINEL_MASTER": MASTER_NAME,
        "TILEHOUSE_REDIS_WAIT_REPLICAS": "1", "TILEHOUSE_REDIS_WAIT_TIMEOUT_MS": "500",
        "TILEHOUSE_JOB_HEARTBEAT_SECONDS": "1", "TILEHOUSE_ABANDONED_JOB_SECONDS": "3",
        "TILEHOUSE_WORKER_MAINTENANCE_SECONDS": "1"})
    gunicorn, base = start_gunicorn(env, tmp_path / "gunicorn.log")
    workers = [start_worker(env, tmp_path / "worker.log") for _ in range(2)]
    try:
        wait_ready(base, [gunicorn, *workers])
        games = []
        for n in range(GAMES):
            r = requests.post(f"{base}/v1/games", timeout=10, json={
                "rules": "tiengow", "seed": 100 + n, "options": {"deals": 1},
                "seats": [{"name": "Ann", "kind": "human"}, {"kind": "ai", "engine": "greedy"},
                          {"kind": "ai", "engine": "random"}, {"kind": "ai", "engine": "greedy"}]})
            assert r.status_code == 201, r.text
            body = r.json()
            games.append((body["game"]["id"], {"Authorization": f"Bearer {body['seats'][0]['token']}"}))
        acked: dict[str, dict[int, str]] = {gid: {} for gid, _ in games}
        finished: set[str] = set()
        rng = random.Random(5)
        killed_at = None
        acked_before = 0
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len(finished) < GAMES:
            assert time.monotonic() < deadline, _stuck(set(acked) - finished, spec)
            # as a Deployment or compose restarts them: RQ quits a worker that loses Redis in the middle of
            # a job (its job is then failed over by the others, service.hardening.recovery)
            workers = [w if w.poll() is None else start_worker(env, tmp_path / "worker.log") for w in workers]
            if killed_at is None and sum(len(m) for m in acked.values()) >= KILL_AFTER:
                servers.kill(master)
                killed_at = time.monotonic()
                asked = redis.Redis(port=sentinels[0], decode_responses=True)
                _wait(lambda: int(asked.sentinel_get_master_addr_by_name(MASTER_NAME)[1]) == replica,  # noqa: B023
                      "the sentinels to promote the replica", timeout=30)
                # the orchestrator's restart: an empty server on the old address that starts as a replica of
                # the master the sentinels name now (as a Redis operator's start-up script does), so that
                # commits find a replica to wait for again
                servers.redis(master, "--replicaof", "127.0.0.1", str(replica))
                # in sync, as a replica a commit's WAIT may count (not merely connected: a full sync can still
                # be under way then)
                _wait(lambda: redis.Redis(port=master).info("replication").get("master_link_status") == "up",
                      "the restarted server to replicate the promoted master", timeout=30)
                acked_before = sum(len(m) for m in acked.values())
            for game_id, auth in games:
                if game_id in finished:
                    continue
                r = _call("GET", f"{base}/v1/games/{game_id}", headers=auth)
                if r is None or r.status_code == 503:
                    continue
                assert r.status_code == 200, r.text
                view = r.json()
                if view["status"] == "finished":
                    finished.add(game_id)
                    continue
                if view["to_move"] != view["you"]:
                    continue
                move = rng.choice(view["legal_moves"])
                move_id = move["id"] if isinstance(move, dict) else move
                r = _call("POST", f"{base}/v1/games/{game_id}/moves", headers=auth,
                          json={"move": move_id, "version": view["version"]})
                if r is None or r.status_code == 503:
                    continue
                if r.status_code == 409:  # someone (the same move retried, a timeout) moved first
                    continue
                assert r.status_code == 200, r.text
                acked[game_id][r.json()["version"]] = move_id
            time.sleep(0.05)
        assert killed_at is not None, "every game ended before the failover: nothing was tested"
        assert sum(len(m) for m in acked.values()) > acked_before, "no move was acknowledged after the failover"
        for game_id, auth in games:
            replay = requests.get(f"{base}/v1/games/{game_id}/replay", headers=auth, timeout=10).json()
            played = {m["version"]: m["move"] for m in replay["moves"] if m["seat"] == 0}
            # every acknowledged move is in the record, where it was acknowledged
            assert {v: played.get(v) for v in acked[game_id]} == acked[game_id]
        # the new master is the old replica, and the restarted server follows it
        promoted = redis.Redis(port=replica)
        assert promoted.info("replication")["role"] == "master"
        _wait(lambda: redis.Redis(port=master).info("replication")["role"] == "slave", "the old master to rejoin")
    finally:
        stop([*workers, gunicorn])


def test_sentinel_settings_parse_host_port_lists_and_refuse_anything_else():
    assert connections.sentinel_addresses(" a:26379, b:26380 ,") == [("a", 26379), ("b", 26380)]
    assert connections.sentinel_addresses("") == []
    for bad in ("a", "a:", ":1", "a:b"):
        with pytest.raises(connections.RedisSettingsError):
            connections.sentinel_addresses(bad)
    cfg = {"REDIS_URL": "redis://:pw@ignored:1/3", "REDIS_SENTINELS": "s1:1,s2:2", "REDIS_SENTINEL_MASTER": "m"}
    assert connections.limiter_storage_uri(cfg) == "redis+sentinel://:pw@s1:1,s2:2/m"
    assert connections.limiter_storage_uri({**cfg, "REDIS_SENTINELS": ""}) == "redis://:pw@ignored:1/3"


def test_a_move_no_replica_confirms_in_time_is_refused_with_503_and_a_retry_finds_it_applied(make_app):
    """The test Redis has no replica: WAIT 1 times out, so the move is not acknowledged (503, Retry-After)
    although the master applied it; the same move sent again answers 200 (idempotent retry)."""
    client = make_app(REDIS_WAIT_REPLICAS=1, REDIS_WAIT_TIMEOUT_MS=20).test_client()
    created = create(client, "kozel", humans(4))
    game_id = created["game"]["id"]
    token = tokens_by_seat(created)[created["game"]["to_move"]]
    moves = client.get(f"/v1/games/{game_id}/moves", headers=bearer(token)).get_json()
    r = client.post(f"/v1/games/{game_id}/moves", headers=bearer(token),
                    json={"move": moves[0]["id"], "version": 0})
    assert r.status_code == 503 and r.headers["Retry-After"]
    assert r.get_json()["type"] == "urn:tilehouse:problem:unavailable"
    retry = client.post(f"/v1/games/{game_id}/moves", headers=bearer(token),
                        json={"move": moves[0]["id"], "version": 0})
    assert retry.status_code == 200 and retry.get_json()["version"] == 1


def test_a_play_job_a_failover_stranded_off_its_queue_is_queued_again_by_a_view(make_app, redis_conn):
    """A worker moves a job off its queue (BLMOVE to RQ's intermediate queue), then marks it started; a
    failover between the two leaves it ``queued`` but in no queue.  A view of the game puts it back."""
    app = make_app(ABANDONED_JOB_SECONDS=1)
    client = app.test_client()
    created = create(client, "kozel", [{"kind": "ai", "engine": "greedy"}, {"kind": "ai", "engine": "greedy"}])
    game_id = created["game"]["id"]
    queue = app.extensions["queues"]["play"]
    (job_id,) = queue.job_ids
    intermediate = f"{queue.key}:intermediate"
    assert redis_conn.lmove(queue.key, intermediate) == job_id.encode()  # what the cut-off worker did
    assert client.get(f"/v1/games/{game_id}").status_code == 200
    assert queue.job_ids == [], "a job queued less than ABANDONED_JOB_SECONDS ago is left alone"
    time.sleep(1.1)
    assert client.get(f"/v1/games/{game_id}").status_code == 200
    assert queue.job_ids == [job_id] and redis_conn.lrange(intermediate, 0, -1) == []
