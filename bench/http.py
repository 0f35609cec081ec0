"""``tilehouse bench http``: the HTTP service under load, and the cost of its AI jobs.

1. gunicorn on loopback with 2 workers (the project's ``gunicorn.conf.py``: gevent, or the class in
   ``TILEHOUSE_WORKER_CLASS``) against a private
   Redis; client threads on keep-alive connections measure requests per second and p50/p99 latency of
   ``GET /v1/games/{id}`` (a seat's view), ``GET .../moves``, ``POST .../moves`` (every request a real,
   applied move: the move sequences are worked out beforehand with the engine from the game's seed), and
   ``GET /healthz``, a trivial endpoint of the same app, in the same run, as the yardstick.
2. AI job overhead: ``ismcts`` suggestions with 1 iteration, one worker process (``python worker.py``);
   the time from queueing to the result (RQ's ``enqueued_at`` -> ``ended_at``), p50 and p90.
3. Root parallelism: an ``ismcts`` suggestion at the Tien Gow opening with ``workers: 1`` and
   ``workers: 2``, both on two running worker processes; iterations per second of the whole decision
   (from queueing the first job to the merged result) and their ratio.  Beside it, the machine's own
   two-process speed-up on a pure-Python loop, measured just before and after: the ratio cannot exceed
   it, and on a shared machine it is often far below 2.
4. Suggestion latency at the default strength: an ``ismcts`` suggestion with the engine's default
   parameters (what the default ``standard`` preset asks for) at the opening of every rule set (its first
   real choice, forced moves played, as ``tilehouse bench ai`` takes it), one worker process; queue ->
   result, p50 and p90 per rule set.  ``--latency-variant NAME=JSON`` adds other parameters measured in
   the same run, interleaved suggestion by suggestion with the defaults (e.g. the search of before:
   ``before={"playout": "heuristic", "iterations": 1000}``), so that the machine's load falls on both.

The client runs on the same machine as the server (2 shared cores here), so absolute figures are low and
noisy; the ratios to the trivial endpoint are the meaningful numbers.  Request logging is at WARNING so the
figures measure the API, not the log pipe.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import redis
from rq.job import Job

import engine
from service import config
from service.redis_local import LocalRedis, free_port

ROOT = Path(__file__).resolve().parents[1]
#: the per-client limits lifted: a benchmark client is one machine asking for everything
UNLIMITED = {"TILEHOUSE_GAMES_PER_MINUTE": "1000000", "TILEHOUSE_LIVE_GAMES_PER_CLIENT": "1000000",
             "TILEHOUSE_AI_CPU_MS_PER_MINUTE_PER_CLIENT": "1000000000",
             "TILEHOUSE_AI_CPU_MS_PER_MINUTE_PER_GAME": "1000000000"}


# --------------------------------------------------------------------------- processes

@contextlib.contextmanager
def _processes(redis_url: str, port: int, ai_workers: int, extra_env: Mapping[str, str] | None = None,
               worker_args: list[list[str]] | None = None) -> Iterator[list[subprocess.Popen[bytes]]]:
    """gunicorn and ``ai_workers`` worker processes (``worker_args[i]``: the arguments of worker ``i``)."""
    env = {**os.environ, "TILEHOUSE_REDIS_URL": redis_url, "TILEHOUSE_LOG_LEVEL": "WARNING",
           "TILEHOUSE_WEB_CONCURRENCY": "2", "TILEHOUSE_BIND": f"127.0.0.1:{port}",
           # the benchmark asks for far more suggestions (and games) than a person would
           "TILEHOUSE_SUGGESTIONS_PER_MINUTE": "1000000", **UNLIMITED,
           # the split search asks for a long time budget (its iterations end it) and 2 workers
           "TILEHOUSE_AI_MAX_TIME_MS": "600000", "TILEHOUSE_AI_MAX_ITERATIONS": "1000000",
           # a benchmark that measures the limits themselves puts them back (extra_env wins)
           # and a metrics listener of its own, so two benchmarks never share 127.0.0.1:9100
           "TILEHOUSE_METRICS_BIND": f"127.0.0.1:{free_port()}", **(extra_env or {})}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    conf = ROOT / "gunicorn.conf.py"
    cmd = [sys.executable, "-m", "gunicorn", *(["-c", str(conf)] if conf.exists() else
                                               ["--workers", "2", "--bind", f"127.0.0.1:{port}"]),
           "service:create_app()"]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    for i in range(ai_workers):
        extra = worker_args[i] if worker_args and i < len(worker_args) else []
        procs.append(subprocess.Popen([sys.executable, str(ROOT / "worker.py"), *extra], cwd=ROOT, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                status, _ = _request(http.client.HTTPConnection("127.0.0.1", port, timeout=2), "GET", "/readyz")
                if status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError("gunicorn or a worker did not start")
            time.sleep(0.1)
        yield procs
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@contextlib.contextmanager
def bench_redis(redis_url: str | None) -> Iterator[str]:
    """The Redis a benchmark runs on: ``redis_url`` (flushed), or a private one in a temporary folder that
    is stopped and removed afterwards.  Yields its URL."""
    tmp = tempfile.mkdtemp(prefix="tilehouse-bench-")
    local = None
    try:
        if redis_url:
            url = redis_url
        else:
            local = LocalRedis(tmp).start()
            url = local.url
        redis.Redis.from_url(url).flushdb()
        yield url
    finally:
        if local is not None:
            local.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _request(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None,
             token: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    payload = None if body is None else json.dumps(body)
    idle = conn.sock is not None and time.monotonic() - getattr(conn, "_th_used", 0.0) > 2.0
    if idle:
        # the server closes a keep-alive connection idle for TILEHOUSE_KEEPALIVE (5) seconds, e.g. while the
        # split search waits for its jobs: a request sent into it would fail, so start a new one
        conn.close()
    conn.request(method, path, body=payload, headers=headers)
    r = conn.getresponse()
    conn._th_used = time.monotonic()  # type: ignore[attr-defined]
    data = r.read()
    return r.status, (json.loads(data) if data and r.getheader("Content-Type", "").endswith("json") else None)


# --------------------------------------------------------------------------- load

def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _load(port: int, seconds: float, clients: int,
          make: Callable[[int], Callable[[http.client.HTTPConnection], None]]) -> tuple[list[float], float]:
    """``clients`` threads, each calling its own request function in a loop for ``seconds``; returns
    the latencies and the elapsed time."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    barrier = threading.Barrier(clients + 1)
    stop = threading.Event()

    def run(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        step = make(i)
        barrier.wait()
        own = latencies[i]
        while not stop.is_set():
            t = time.perf_counter()
            step(conn)
            own.append(time.perf_counter() - t)
        conn.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    return [x for lat in latencies for x in lat], elapsed


def _new_game(conn: http.client.HTTPConnection, seed: int) -> tuple[str, dict[int, str], list[tuple[int, str]]]:
    """A 2-player Kozel game of humans and its whole move sequence, worked out with the engine."""
    status, created = _request(conn, "POST", "/v1/games", {"rules": "kozel", "seed": seed, "public_seed": True,
                                                           "seats": [{"kind": "human"}, {"kind": "human"}]})
    assert status == 201, created
    state = engine.new_game("kozel", players=2, seed=seed)
    rng = random.Random(seed)
    plan = []
    while not state.finished:
        move = rng.choice(state.legal_moves())
        seat = state.to_move
        assert seat is not None
        plan.append((seat, move.id))
        state.play(move)
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    return created["game"]["id"], tokens, plan


Endpoint = tuple[str, Callable[[int], Callable[[http.client.HTTPConnection], None]]]


def http_figures(port: int, seconds: float, clients: int, rounds: int) -> dict[str, dict[str, float]]:
    """Each endpoint for ``seconds`` in all, in ``rounds`` interleaved slices, so that the machine's other
    load falls on every endpoint alike."""
    return interleaved({"": port}, seconds, clients, rounds)[""]


def interleaved(ports: Mapping[str, int], seconds: float, clients: int, rounds: int,
                masters: Mapping[str, int] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """``http_figures`` of several servers at once (label -> port), their slices interleaved: each
    endpoint on each server in turn, round after round, so the machine's other load falls on all alike.
    With ``masters`` (label -> gunicorn master pid) it also reports the CPU time the server's worker
    processes spent per request, which the machine's other load does not change the way it changes
    requests per second."""
    endpoints = {label: _endpoints(port, clients) for label, port in ports.items()}
    pooled: dict[str, dict[str, tuple[list[float], float]]] = {
        label: {name: ([], 0.0) for name, _ in eps} for label, eps in endpoints.items()}
    cpu: dict[str, dict[str, float]] = {label: {name: 0.0 for name, _ in eps} for label, eps in endpoints.items()}
    for _ in range(rounds):
        for k in range(len(next(iter(endpoints.values())))):
            for label, port in ports.items():
                name, make = endpoints[label][k]
                before = _cpu_seconds(masters[label]) if masters else 0.0
                lat, elapsed = _load(port, seconds / rounds, clients, make)
                if masters:
                    cpu[label][name] += _cpu_seconds(masters[label]) - before
                got = pooled[label][name]
                pooled[label][name] = (got[0] + lat, got[1] + elapsed)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for label, figures in pooled.items():
        out[label] = {}
        for name, (lat, elapsed) in figures.items():
            out[label][name] = {"requests": len(lat), "req_per_s": round(len(lat) / elapsed, 1),
                                "p50_ms": round(_percentile(lat, 0.50) * 1000, 2),
                                "p99_ms": round(_percentile(lat, 0.99) * 1000, 2)}
            if masters:
                out[label][name]["cpu_us_per_request"] = round(cpu[label][name] / max(1, len(lat)) * 1e6, 1)
    return out


def _cpu_seconds(master: int) -> float:
    """User + system CPU seconds of the children (gunicorn's workers) of process ``master`` (Linux /proc)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _endpoints(port: int, clients: int) -> list[Endpoint]:
    """The measured endpoints of the server on ``port``, each as a maker of per-client request functions."""
    setup = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    games = [_new_game(setup, 1000 + i) for i in range(clients)]

    def setup_for(i: int) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def trivial(i: int) -> Callable[[http.client.HTTPConnection], None]:
        return lambda c: _check(_request(c, "GET", "/healthz"), 200)

    def view(i: int) -> Callable[[http.client.HTTPConnection], None]:
        gid, toks, _ = games[i]
        return lambda c: _check(_request(c, "GET", f"/v1/games/{gid}", token=toks[0]), 200)

    def moves(i: int) -> Callable[[http.client.HTTPConnection], None]:
        gid, toks, _ = games[i]
        return lambda c: _check(_request(c, "GET", f"/v1/games/{gid}/moves", token=toks[0]), 200)

    def post(i: int) -> Callable[[http.client.HTTPConnection], None]:
        seq = [1_000_000 + i * 10_000]
        current = [_new_game(setup_for(i), seq[0])]
        pos = [0]

        def step(c: http.client.HTTPConnection) -> None:
            gid, toks, plan = current[0]
            if pos[0] >= len(plan):
                seq[0] += 1
                current[0] = _new_game(c, seq[0])
                pos[0] = 0
                gid, toks, plan = current[0]
            seat, move = plan[pos[0]]
            _check(_request(c, "POST", f"/v1/games/{gid}/moves", {"move": move, "version": pos[0]}, toks[seat]),
                   200)
            pos[0] += 1

        return step

    return [("trivial GET /healthz", trivial), ("GET view", view), ("GET moves", moves), ("POST move", post)]


def _check(answer: tuple[int, Any], status: int) -> None:
    if answer[0] != status:
        raise RuntimeError(f"expected {status}, got {answer}")


# --------------------------------------------------------------------------- AI jobs

def _humans(conn: http.client.HTTPConnection, rules_id: str, seed: int,
            public_seed: bool = False) -> tuple[str, dict[int, str], int]:
    """A game of humans at ``rules_id``'s default player count: its id, each seat's token, the seat to move."""
    n = engine.RULES[rules_id].default_players
    body = {"rules": rules_id, "seed": seed, "seats": [{"kind": "human"}] * n,
            **({"public_seed": True} if public_seed else {})}
    status, created = _request(conn, "POST", "/v1/games", body)
    assert status == 201, created
    return (created["game"]["id"], {s["seat"]: s["token"] for s in created["seats"]},
            created["game"]["to_move"])


def _human_game(conn: http.client.HTTPConnection, rules_id: str, seed: int) -> tuple[str, str]:
    gid, tokens, seat = _humans(conn, rules_id, seed)
    return gid, tokens[seat]


def _wait_job(rconn: redis.Redis, job_id: str, timeout: float = 120.0, poll: float = 0.0005) -> Job:
    """Wait for a job.  Times come from RQ's own ``enqueued_at``/``ended_at``, so ``poll`` only sets how
    much CPU the waiting costs: the split search polls slowly so as not to steal a core from the workers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.fetch(job_id, connection=rconn)
        status = job.get_status()
        if status == "finished" and job.ended_at is not None:
            return job
        if status in ("failed", "canceled", "stopped"):
            raise RuntimeError(f"job {job_id} {status}")
        time.sleep(poll)
    raise RuntimeError(f"job {job_id} did not finish")


def job_overhead(port: int, rconn: redis.Redis, n: int) -> dict[str, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    gid, token = _human_game(conn, "tiengow", 5)
    queue_to_result = []
    for _ in range(n):
        status, job = _request(conn, "POST", f"/v1/games/{gid}/suggestions",
                               {"engine": "ismcts", "params": {"iterations": 1}}, token)
        assert status == 202, job
        done = _wait_job(rconn, job["id"])
        assert done.enqueued_at is not None and done.ended_at is not None
        queue_to_result.append((done.ended_at - done.enqueued_at).total_seconds())
    return {"jobs": n, "p50_ms": round(statistics.median(queue_to_result) * 1000, 2),
            "p90_ms": round(_percentile(queue_to_result, 0.9) * 1000, 2)}


def _opening(conn: http.client.HTTPConnection, rules_id: str, seed: int) -> tuple[str, str]:
    """A game of humans at ``rules_id``'s default player count, its forced moves played over HTTP: the game's
    id and the token of the seat to move at its first real choice (``bench.ai.opening``'s position)."""
    gid, tokens, _seat = _humans(conn, rules_id, seed, public_seed=True)
    state = engine.new_game(rules_id, players=len(tokens), seed=seed)
    version = 0
    while not state.finished and len(state.legal_moves()) == 1:
        move = state.legal_moves()[0]
        seat = state.to_move
        assert seat is not None
        _check(_request(conn, "POST", f"/v1/games/{gid}/moves", {"move": move.id, "version": version},
                        tokens[seat]), 200)
        state.play(move)
        version += 1
    assert state.to_move is not None, f"{rules_id}: the match ended on forced moves"
    return gid, tokens[state.to_move]


def default_latency(port: int, rconn: redis.Redis, rules: list[str], positions: int, repeats: int,
                    variants: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per rule set and parameter set (``default``: none, the engine's own), the queue -> result time of
    ``ismcts`` suggestions at the openings of seeds 1..``positions``, ``repeats`` each, the parameter sets
    interleaved suggestion by suggestion."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    sets = {"default": {}, **variants}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for rules_id in rules:
        games = [_opening(conn, rules_id, seed) for seed in range(1, positions + 1)]
        times: dict[str, list[float]] = {name: [] for name in sets}
        iterations: dict[str, list[int]] = {name: [] for name in sets}
        for _ in range(repeats):
            for gid, token in games:
                for name, params in sets.items():
                    body: dict[str, Any] = {"engine": "ismcts", **({"params": params} if params else {})}
                    status, job = _request(conn, "POST", f"/v1/games/{gid}/suggestions", body, token)
                    assert status == 202, job
                    done = _wait_job(rconn, job["id"], poll=0.002)
                    assert done.enqueued_at is not None and done.ended_at is not None
                    times[name].append((done.ended_at - done.enqueued_at).total_seconds())
                    result = done.return_value()
                    assert isinstance(result, dict)
                    iterations[name].append(int(result["stats"]["iterations"]))
        out[rules_id] = {name: {"suggestions": len(ts), "p50_ms": round(statistics.median(ts) * 1000, 1),
                                "p90_ms": round(_percentile(ts, 0.9) * 1000, 1),
                                "iterations": round(statistics.median(iterations[name]))}
                         for name, ts in times.items()}
    return out


def split_search(port: int, rconn: redis.Redis, iterations: int, repeats: int) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    gid, token = _human_game(conn, "tiengow", 6)
    rates: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(repeats):
        for workers in (1, 2):
            status, job = _request(conn, "POST", f"/v1/games/{gid}/suggestions",
                                   {"engine": "ismcts", "workers": workers,
                                    "params": {"iterations": iterations, "time_ms": 600000}}, token)
            assert status == 202, job
            done = _wait_job(rconn, job["id"], poll=0.05)
            first = min(Job.fetch(p, connection=rconn).enqueued_at or datetime.max
                        for p in done.meta.get("parts", [done.id]))
            assert done.ended_at is not None
            wall = (done.ended_at - first).total_seconds()
            result = done.return_value()
            assert isinstance(result, dict)
            rates[workers].append(result["stats"]["iterations"] / wall)
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    return {"iterations": iterations, "repeats": repeats, "workers_1_it_per_s": round(one, 1),
            "workers_2_it_per_s": round(two, 1), "ratio": round(two / one, 2)}


def _spin(n: int) -> float:
    t = time.perf_counter()
    x = 0
    for i in range(n):
        x += i * i
    return time.perf_counter() - t


def cpu_parallelism(n: int = 20_000_000) -> float:
    """How much faster two processes do two equal pure-Python loops than one does one after the other: the
    ceiling for any two-worker speed-up on this machine right now (2.0 on two idle cores)."""
    import multiprocessing

    one = _spin(n)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # wait until both processes have started and imported this module
        t = time.perf_counter()
        pool.map(_spin, [n, n])
        two = time.perf_counter() - t
    return round(2 * one / two, 2)


# --------------------------------------------------------------------------- main

def compare_worker_classes(args: argparse.Namespace) -> int:
    classes = [c.strip() for c in args.worker_classes.split(",") if c.strip()]
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with bench_redis(args.redis_url) as url, contextlib.ExitStack() as stack:
        ports, masters = {}, {}
        for wc in classes:
            ports[wc] = free_port()
            procs = stack.enter_context(_processes(url, ports[wc], 0, {"TILEHOUSE_WORKER_CLASS": wc}))
            masters[wc] = procs[0].pid
        report = interleaved(ports, args.seconds, args.clients, args.rounds,
                             masters if os.path.isdir("/proc") else None)
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.json:
        print(json.dumps({"worker_classes": report, "load_before": load_before, "load_after": load_after},
                         indent=2))
        return 0
    print(f"HTTP: gunicorn, 2 workers of each class, {args.clients} client threads, {args.seconds:g} s per "
          f"endpoint and class in {args.rounds} interleaved rounds; load average {load_before} -> {load_after}")
    base = classes[0]
    for name in report[base]:
        cells = []
        for wc in classes:
            fig = report[wc][name]
            share = f" ({fig['req_per_s'] / report[base][name]['req_per_s']:.0%})" if wc != base else ""
            cpu = f", {fig['cpu_us_per_request']:.0f} us CPU/req" if "cpu_us_per_request" in fig else ""
            cells.append(f"{wc} {fig['req_per_s']:7.1f} req/s p50 {fig['p50_ms']:6.2f} p99 {fig['p99_ms']:7.2f}"
                         f"{share}{cpu}")
        print(f"  {name:22s} " + " | ".join(cells))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench http", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=5.0, help="load time per endpoint (default 5)")
    p.add_argument("--clients", type=int, default=4, help="client threads (default 4)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved slices per endpoint (default 5)")
    p.add_argument("--jobs", type=int, default=60, help="1-iteration suggestions for the job overhead")
    p.add_argument("--iterations", type=int, default=24000, help="ismcts iterations for the split search")
    p.add_argument("--repeats", type=int, default=3, help="repeats of the split-search comparison")
    p.add_argument("--redis-url", default=None, help="use this Redis (it is flushed!) instead of a private one")
    p.add_argument("--worker-classes", default=None, metavar="A,B",
                   help="compare gunicorn worker classes instead (e.g. gthread,gevent): one server per class, "
                        "the HTTP figures only, their slices interleaved")
    p.add_argument("--latency-rules", default=",".join(sorted(engine.RULES)), metavar="A,B",
                   help="rule sets of the default-strength latency (default: all)")
    p.add_argument("--latency-positions", type=int, default=3,
                   help="openings (seeds 1..N) per rule set for the default-strength latency (default 3)")
    p.add_argument("--latency-repeats", type=int, default=5,
                   help="suggestions per opening and parameter set for the default-strength latency (default 5)")
    p.add_argument("--latency-variant", action="append", default=[], metavar="NAME=JSON",
                   help="other ismcts parameters measured beside the defaults, interleaved (repeatable), e.g. "
                        "'before={\"playout\": \"heuristic\", \"iterations\": 1000}'")
    p.add_argument("--sections", default="http,jobs,split,latency", metavar="A,B",
                   help="what to measure: http, jobs (the AI job overhead), split (root parallelism), latency "
                        "(the default strength's suggestion latency); default all")
    p.add_argument("--json", action="store_true", help="print JSON")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker_classes:
        return compare_worker_classes(args)
    sections = {x.strip() for x in args.sections.split(",") if x.strip()}
    unknown = sections - {"http", "jobs", "split", "latency"}
    if unknown:
        p.error(f"unknown sections: {', '.join(sorted(unknown))}")
    variants: dict[str, dict[str, Any]] = {}
    for spec in args.latency_variant:
        name, sep, text = spec.partition("=")
        try:
            params = json.loads(text)
        except ValueError:
            params = None
        if not sep or not name or name == "default" or not isinstance(params, dict):
            p.error(f"--latency-variant wants NAME=JSON (an object; NAME not 'default'), not {spec!r}")
        variants[name] = params
    latency_rules = [r.strip() for r in args.latency_rules.split(",") if r.strip()]
    if any(r not in engine.RULES for r in latency_rules):
        p.error(f"--latency-rules: unknown rule set in {args.latency_rules!r}")

    tmp = tempfile.mkdtemp(prefix="tilehouse-bench-")
    local = None
    try:
        if args.redis_url:
            url = args.redis_url
        else:
            local = LocalRedis(tmp).start()
            url = local.url
        rconn = redis.Redis.from_url(url)
        rconn.flushdb()
        port = free_port()
        report: dict[str, Any] = {}
        if sections & {"http", "jobs", "latency"}:
            with _processes(url, port, ai_workers=1):
                if "http" in sections:
                    report["http"] = http_figures(port, args.seconds, args.clients, args.rounds)
                if "jobs" in sections:
                    report["ai_job_overhead"] = job_overhead(port, rconn, args.jobs)
                if "latency" in sections:
                    report["default_latency"] = default_latency(port, rconn, latency_rules, args.latency_positions,
                                                                args.latency_repeats, variants)
        if "split" in sections:
            rconn.flushdb()
            port = free_port()
            with _processes(url, port, ai_workers=2):
                report["cpu_parallelism_before"] = cpu_parallelism()
                report["split_search"] = split_search(port, rconn, args.iterations, args.repeats)
                report["cpu_parallelism_after"] = cpu_parallelism()
        if "http" in sections:
            base = report["http"]["trivial GET /healthz"]["req_per_s"]
            report["ratios_to_trivial"] = {k: round(v["req_per_s"] / base, 2) for k, v in report["http"].items()}
    finally:
        if local is not None:
            local.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    worker_class = os.environ.get("TILEHOUSE_WORKER_CLASS", config.DEFAULT_WORKER_CLASS)
    if "http" in report:
        print(f"HTTP: gunicorn, 2 {worker_class} workers, {args.clients} client threads, {args.seconds:g} s per "
              f"endpoint in {args.rounds} interleaved rounds")
        for name, fig in report["http"].items():
            print(f"  {name:30s} {fig['req_per_s']:8.1f} req/s  p50 {fig['p50_ms']:6.2f} ms  p99 "
                  f"{fig['p99_ms']:7.2f} ms  ({report['ratios_to_trivial'][name]:.0%} of trivial)")
    if "ai_job_overhead" in report:
        o = report["ai_job_overhead"]
        print(f"AI job overhead (ismcts, 1 iteration, queue -> result): p50 {o['p50_ms']} ms, p90 {o['p90_ms']} ms"
              f" over {o['jobs']} jobs")
    if "split_search" in report:
        s = report["split_search"]
        print(f"ismcts {s['iterations']} iterations on 2 running workers: workers:1 {s['workers_1_it_per_s']} "
              f"it/s, workers:2 {s['workers_2_it_per_s']} it/s, ratio {s['ratio']} (median of {s['repeats']})")
        print(f"  (this machine's two-process speed-up of a pure-Python loop just before and after: "
              f"{report['cpu_parallelism_before']} and {report['cpu_parallelism_after']}; 2.0 on two idle cores)")
    if "default_latency" in report:
        print(f"Suggestion latency at the default strength (ismcts, one worker, queue -> result, openings of seeds "
              f"1..{args.latency_positions}, {args.latency_repeats} each):")
        for rules_id, by_set in report["default_latency"].items():
            for name, fig in by_set.items():
                print(f"  {rules_id:12s} {name:10s} p50 {fig['p50_ms']:7.1f} ms  p90 {fig['p90_ms']:7.1f} ms  "
                      f"({fig['iterations']} iterations, {fig['suggestions']} suggestions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
