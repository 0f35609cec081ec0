"""``tilehouse bench fairness``: do AI seats keep playing while one client floods suggestions?

gunicorn and two worker processes on a private Redis.  Ten games whose seats are all AI (ismcts with a few
iterations, greedy, random) play on; a finished one is replaced at once, so ten always have an AI seat to
move.  Meanwhile one client, at a table of its own, keeps at least ``--flooders`` suggestion jobs waiting on
the suggest queue, asking for suggestions of the largest size the server's caps allow (ismcts, ``time_ms`` and ``iterations`` at their caps, ``workers`` at its cap) queued at
all times.  The figure is the wait of every play job the AI seats queued during the flood: RQ's
``enqueued_at`` -> ``started_at``, as percentiles.

Two worker layouts, interleaved (A, B, A, B, ...) so that both see the same machine:

* ``reserved``: what ``tilehouse serve --workers 2`` and compose start -- one worker with ``--queues
  play,suggest`` (AI seats first, a suggestion only when no AI move waits) and one serving ``suggest``
  then ``play``;
* ``play-only``: the reserved worker with ``--queues play`` (never a suggestion), the layout before;
* ``shared``: both workers serving ``suggest`` then ``play`` (the layout before the reserved worker), for comparison.

The per-client limits (creation rate, live games, AI CPU budget) are lifted for the run: the benchmark
measures the queues, not the limits that would stop the flood first.  The target is a p99 wait
of at most 2 s with 2 workers (``reserved``).  ``uptime``'s load is printed with the figures.

``--attack`` measures fair share instead, with every limit at its default (only the creation rate is
lifted, so that the set-up takes seconds) and the ``reserved`` layout: a bystander (127.0.0.1) runs one
all-AI game (the seats above) and asks for a 1-iteration ismcts suggestion every 3 s at a table of its
own.  Its AI moves a minute and its suggestions' answer times are measured for ``--seconds`` unloaded, then
for ``--seconds`` while one attacking address (127.0.0.2) runs 20 all-AI games whose seats search at the
largest budgets (ismcts, ``time_ms`` and ``iterations`` at their caps) and floods suggestions at the same
budgets (``workers`` at its cap) with 10 seat tokens (of tables a third address made).  Targets: the
bystander keeps at least 50 % of its unloaded moves a minute, and every suggestion is answered within 5 s.
The tables with no person at them keep the server's pace (``--pace-ms``, default ``AI_PACE_MS``'s default;
``--pace-ms 0`` is the worst case, an operator who turned the pace off); with the pace on, a phase of
``--seconds 60`` counts enough moves.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import threading
import time
from typing import Any

import redis
from rq import Queue
from rq.job import Job
from rq.registry import FinishedJobRegistry, StartedJobRegistry

from bench.http import _human_game, _percentile, _processes, _request, bench_redis
from service import config, keys
from service.redis_local import free_port

# the first worker runs RQ's scheduler (which queues the clocks' timeouts and the pace jobs of tables with
# no person at them, service/queues.py), as one of ``tilehouse serve``'s does at any time
LAYOUTS = {"reserved": [["--queues", "play,suggest"], ["--no-scheduler"]],
           "shared": [[], ["--no-scheduler"]],
           # the layout before: the AI seats' worker never takes a suggestion, so a bystander's small
           # suggestion waited for the one other worker, busy with an attacker's longest search
           "play-only": [["--queues", "play"], ["--no-scheduler"]]}
AI_SEATS = [{"kind": "ai", "engine": "ismcts", "params": {"iterations": 30}}, {"kind": "ai", "engine": "greedy"},
            {"kind": "ai", "engine": "random"}, {"kind": "ai", "engine": "greedy"}]


def _ai_game(conn: http.client.HTTPConnection) -> str:
    status, created = _request(conn, "POST", "/v1/games", {"rules": "tiengow", "seats": AI_SEATS})
    assert status == 201, created
    return str(created["game"]["id"])


def _keep_games(port: int, games: int, stop: threading.Event) -> None:
    """Keep ``games`` all-AI games running: replace each one as soon as it is finished."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    live = [_ai_game(conn) for _ in range(games)]
    while not stop.is_set():
        for i, gid in enumerate(live):
            status, view = _request(conn, "GET", f"/v1/games/{gid}")
            if status == 200 and view["status"] == "finished":
                live[i] = _ai_game(conn)
        stop.wait(0.2)
    conn.close()


def _flood(port: int, rconn: redis.Redis, depth: int, stop: threading.Event, sent: list[int]) -> None:
    """Keep ``depth`` jobs of maximal suggestions waiting on the suggest queue."""
    cfg = config.load()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    gid, token = _human_game(conn, "tiengow", 11)
    body = {"engine": "ismcts", "workers": cfg["AI_MAX_WORKERS"],
            "params": {"iterations": cfg["AI_MAX_ITERATIONS"], "time_ms": cfg["AI_MAX_TIME_MS"]}}
    suggest = Queue("suggest", connection=rconn)
    while not stop.is_set():
        if len(suggest) < depth:
            status, job = _request(conn, "POST", f"/v1/games/{gid}/suggestions", body, token)
            assert status == 202, job
            sent[0] += 1
        else:
            stop.wait(0.05)
    conn.close()


def _play_waits(rconn: redis.Redis, since: float) -> list[float]:
    play = Queue("play", connection=rconn)
    ids = FinishedJobRegistry(queue=play).get_job_ids() + StartedJobRegistry(queue=play).get_job_ids()
    waits = []
    for job in Job.fetch_many(ids, connection=rconn):
        if job is None or job.enqueued_at is None or job.started_at is None:
            continue
        if job.enqueued_at.timestamp() >= since:
            waits.append((job.started_at - job.enqueued_at).total_seconds())
    # play jobs still waiting at the end count with the wait they have had so far
    now = time.time()
    for job in Job.fetch_many(play.get_job_ids(), connection=rconn):
        if job is not None and job.enqueued_at is not None and job.enqueued_at.timestamp() >= since:
            waits.append(now - job.enqueued_at.timestamp())
    return waits


def run_once(layout: str, seconds: float, games: int, depth: int, redis_url: str) -> dict[str, Any]:
    rconn = redis.Redis.from_url(redis_url)
    rconn.flushdb()
    port = free_port()
    # the pace of all-AI tables off: this run measures the queues under the most play jobs they can get
    env_extra = {"TILEHOUSE_AI_JOB_TIMEOUT_SECONDS": "60", "TILEHOUSE_AI_PACE_MS": "0"}
    with _processes(redis_url, port, ai_workers=2, extra_env=env_extra, worker_args=LAYOUTS[layout]):
        stop = threading.Event()
        sent = [0]
        keeper = threading.Thread(target=_keep_games, args=(port, games, stop))
        flooder = threading.Thread(target=_flood, args=(port, rconn, depth, stop, sent))
        flooder.start()
        time.sleep(1.0)  # the flood is queued before the AI seats start
        since = time.time()
        keeper.start()
        time.sleep(seconds)
        stop.set()
        keeper.join()
        flooder.join()
        waits = _play_waits(rconn, since)
        suggestions_done = rconn.hget(keys.AI_JOBS_METRIC_KEY, "ismcts|suggested")
    rconn.flushdb()
    rconn.close()
    if not waits:
        raise RuntimeError(f"{layout}: no play job ran")
    return {"layout": layout, "play_jobs": len(waits), "suggestions_queued": sent[0],
            "suggestion_jobs_run": int(suggestions_done or 0),
            "wait_p50_s": round(_percentile(waits, 0.5), 3), "wait_p95_s": round(_percentile(waits, 0.95), 3),
            "wait_p99_s": round(_percentile(waits, 0.99), 3), "wait_max_s": round(max(waits), 3),
            "load": os.getloadavg()}


BYSTANDER, ATTACKER, HELPER = "127.0.0.1", "127.0.0.2", "127.0.0.3"
#: every limit back at its default for the attack (the benchmark processes lift them otherwise), but the
#: creation rate: 20 games from one address would take two minutes to create
DEFAULT_LIMITS = {f"TILEHOUSE_{name}": str(config.DEFAULTS[name]) for name in (
    "SUGGESTIONS_PER_MINUTE", "LIVE_GAMES_PER_CLIENT", "AI_CPU_MS_PER_MINUTE_PER_CLIENT",
    "AI_CPU_MS_PER_MINUTE_PER_GAME", "AI_MAX_TIME_MS", "AI_MAX_ITERATIONS", "AI_MAX_WORKERS")}


def _from(address: str, port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(address, 0))


def _bystander(port: int, seconds: float) -> dict[str, Any]:
    """The bystander's AI moves a minute and its suggestions' answer times over ``seconds``."""
    conn = _from(BYSTANDER, port)
    gid, token = _human_game(conn, "tiengow", 3)
    game = _ai_game(conn)
    moves, waits, unanswered = 0, [], 0
    status, view = _request(conn, "GET", f"/v1/games/{game}")
    last = view["version"]
    t0 = time.monotonic()
    next_ask = t0
    errors: dict[int | str, int] = {}  # view failures by status, refused suggestions by status and type
    while time.monotonic() - t0 < seconds:
        status, view = _request(conn, "GET", f"/v1/games/{game}")
        if status != 200:
            errors[status] = errors.get(status, 0) + 1
            time.sleep(0.1)
            continue
        moves += view["version"] - last
        last = view["version"]
        if view["status"] == "finished":
            game = _ai_game(conn)
            last = 0
        if time.monotonic() >= next_ask:
            next_ask += 3.0
            asked = time.monotonic()
            status, job = _request(conn, "POST", f"/v1/games/{gid}/suggestions",
                                   {"engine": "ismcts", "params": {"iterations": 1}}, token)
            if status != 202:
                # by status and problem type (e.g. 429 ai-budget against 429 rate-limited): which limit refused
                kind = f"{status} {str((job or {}).get('type', '')).rsplit(':', 1)[-1]}".strip()
                errors[kind] = errors.get(kind, 0) + 1
                unanswered += 1
                continue
            while True:
                status, body = _request(conn, "GET", f"/v1/jobs/{job['id']}", None, token)
                if body["status"] in ("finished", "failed"):
                    waits.append(time.monotonic() - asked)
                    break
                if time.monotonic() - asked > 30:
                    unanswered += 1
                    break
                time.sleep(0.05)
        time.sleep(0.1)
    elapsed = time.monotonic() - t0
    return {"moves_per_minute": round(moves / elapsed * 60, 1), "suggestions": len(waits) + unanswered,
            "suggestion_p50_s": round(_percentile(waits, 0.5), 3) if waits else None,
            "suggestion_max_s": round(max(waits), 3) if waits else None, "unanswered": unanswered,
            "errors": errors}


def _attacker(port: int, stop: threading.Event, counts: dict[str, int]) -> None:
    cfg = config.load()
    big = {"iterations": cfg["AI_MAX_ITERATIONS"], "time_ms": cfg["AI_MAX_TIME_MS"]}
    conn = _from(ATTACKER, port)
    for _ in range(20):
        status, _ = _request(conn, "POST", "/v1/games", {"rules": "tiengow", "seats": [
            {"kind": "ai", "engine": "ismcts", "params": big}] * 4})
        counts[f"create {status}"] = counts.get(f"create {status}", 0) + 1
    helper = _from(HELPER, port)
    tokens = []
    for i in range(10):  # the token of the seat to move at each of ten tables: a suggestion is its to ask
        tokens.append(_human_game(helper, "tiengow", 100 + i))
    body = {"engine": "ismcts", "workers": cfg["AI_MAX_WORKERS"], "params": big}

    def flood(gid: str, token: str) -> None:
        c = _from(ATTACKER, port)
        while not stop.is_set():
            try:
                status, _ = _request(c, "POST", f"/v1/games/{gid}/suggestions", body, token)
            except OSError:
                return  # the server is stopping
            with lock:
                counts[f"suggest {status}"] = counts.get(f"suggest {status}", 0) + 1
            if status != 202:
                stop.wait(0.2)

    lock = threading.Lock()
    threads = [threading.Thread(target=flood, args=t, daemon=True) for t in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_attack(seconds: float, redis_url: str, layout: str = "reserved",
               pace_ms: int = config.DEFAULT_AI_PACE_MS) -> dict[str, Any]:
    rconn = redis.Redis.from_url(redis_url)
    rconn.flushdb()
    port = free_port()
    env = {**DEFAULT_LIMITS, "TILEHOUSE_GAMES_PER_MINUTE": "1000", "TILEHOUSE_AI_PACE_MS": str(pace_ms)}
    with _processes(redis_url, port, ai_workers=2, extra_env=env, worker_args=LAYOUTS[layout]):
        unloaded = _bystander(port, seconds)
        stop = threading.Event()
        counts: dict[str, int] = {}
        attacker = threading.Thread(target=_attacker, args=(port, stop, counts), daemon=True)
        attacker.start()
        time.sleep(5.0)  # the attack is under way
        loaded = _bystander(port, seconds)
        stop.set()
        attacker.join(timeout=60)
    rconn.flushdb()
    return {"layout": layout, "pace_ms": pace_ms, "unloaded": unloaded, "attacked": loaded, "attack_requests": dict(sorted(counts.items())),
            "moves_kept": round(loaded["moves_per_minute"] / max(0.1, unloaded["moves_per_minute"]), 3),
            "load": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench fairness", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=30.0, help="flood time per run (default 30)")
    p.add_argument("--games", type=int, default=10, help="all-AI games kept running (default 10)")
    p.add_argument("--flooders", type=int, default=8,
                   help="suggestion jobs kept waiting on the suggest queue (default 8)")
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds of both layouts (default 2)")
    p.add_argument("--layouts", default="reserved,shared", help="layouts to run (default reserved,shared)")
    p.add_argument("--redis-url", default=None, help="use this Redis (it is flushed!) instead of a private one")
    p.add_argument("--attack", action="store_true",
                   help="instead: a bystander's AI moves and suggestions while one address attacks (defaults)")
    p.add_argument("--pace-ms", type=int, default=config.DEFAULT_AI_PACE_MS,
                   help=f"--attack: AI_PACE_MS, the pace of tables with no person at them (default "
                        f"{config.DEFAULT_AI_PACE_MS}, the server's; 0: none, the worst case)")
    p.add_argument("--json", action="store_true", help="print JSON")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.attack:
        with bench_redis(args.redis_url) as url:
            report = run_attack(args.seconds, url, args.layouts.split(",")[0] if args.layouts != "reserved,shared"
                                else "reserved", args.pace_ms)
        if args.json:
            print(json.dumps(report, indent=2))
            return 0
        u, a = report["unloaded"], report["attacked"]
        print(f"bystander's all-AI game: {u['moves_per_minute']} AI moves a minute unloaded, {a['moves_per_minute']} "
              f"under attack ({report['moves_kept']:.0%} kept; target >= 50 %)")
        for label, r in (("unloaded", u), ("under attack", a)):
            print(f"bystander's 1-iteration suggestions, {label}: {r['suggestions']} asked, p50 "
                  f"{r['suggestion_p50_s']} s, slowest {r['suggestion_max_s']} s, {r['unanswered']} unanswered "
                  f"in 30 s or refused (target: every one within 5 s); other answers {r['errors']}")
        print(f"attacker (one address, 20 all-AI games at the largest budgets, 10 tokens flooding): "
              f"{report['attack_requests']}; layout {report['layout']}; pace of all-AI tables {report['pace_ms']} ms; "
              f"{args.seconds:g} s per phase; load "
              f"{' '.join(f'{x:.2f}' for x in report['load'])}")
        return 0
    layouts = [name for name in args.layouts.split(",") if name]
    runs = []
    with bench_redis(args.redis_url) as url:
        for _ in range(args.rounds):
            for layout in layouts:
                runs.append(run_once(layout, args.seconds, args.games, args.flooders, url))
                if not args.json:
                    r = runs[-1]
                    print(f"{r['layout']:9s} play jobs {r['play_jobs']:5d}  wait p50 {r['wait_p50_s']:7.3f} s  "
                          f"p95 {r['wait_p95_s']:7.3f} s  p99 {r['wait_p99_s']:7.3f} s  max {r['wait_max_s']:7.3f} s"
                          f"  | suggestions asked {r['suggestions_queued']}, suggestion jobs run {r['suggestion_jobs_run']}"
                          f"  | load {' '.join(f'{x:.2f}' for x in r['load'])}", flush=True)
    if args.json:
        print(json.dumps(runs, indent=2))
    else:
        cfg = config.load()
        print(f"({args.games} all-AI Tien Gow games; one client keeps {args.flooders} suggestion jobs of ismcts "
              f"iterations {cfg['AI_MAX_ITERATIONS']}, time_ms {cfg['AI_MAX_TIME_MS']}, workers "
              f"{cfg['AI_MAX_WORKERS']} queued; 2 worker processes; {args.seconds:g} s per run; target: "
              f"reserved p99 <= 2 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
