"""``tilehouse bench fairness``: do AI seats keep playing while one client floods suggestions? (issue 16)

gunicorn and two worker processes on a private Redis.  Ten games whose seats are all AI (ismcts with a few
iterations, greedy, random) play on; a finished one is replaced at once, so ten always have an AI seat to
move.  Meanwhile one client, at a table of its own, keeps at least ``--flooders`` suggestion jobs waiting on
the suggest queue, asking for suggestions of the largest size the server's caps allow (ismcts, ``time_ms`` and ``iterations`` at their caps, ``workers`` at its cap) queued at
all times.  The figure is the wait of every play job the AI seats queued during the flood: RQ's
``enqueued_at`` -> ``started_at``, as percentiles.

Two worker layouts, interleaved (A, B, A, B, ...) so that both see the same machine:

* ``reserved``: what ``tilehouse serve --workers 2`` and compose start -- one worker with ``--queues play``
  (AI seats only) and one serving ``suggest`` then ``play``;
* ``shared``: both workers serving ``suggest`` then ``play`` (the layout before issue 16), for comparison.

The per-client limits (creation rate, live games, AI CPU budget) are lifted for the run: the benchmark
measures the queues, not the limits that would stop the flood first.  The target of issue 16 is a p99 wait
of at most 2 s with 2 workers (``reserved``).  ``uptime``'s load is printed with the figures.
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

LAYOUTS = {"reserved": [["--queues", "play", "--no-scheduler"], ["--no-scheduler"]],
           "shared": [["--no-scheduler"], ["--no-scheduler"]]}
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
    env_extra = {"TILEHOUSE_AI_JOB_TIMEOUT_SECONDS": "60"}
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench fairness", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=30.0, help="flood time per run (default 30)")
    p.add_argument("--games", type=int, default=10, help="all-AI games kept running (default 10)")
    p.add_argument("--flooders", type=int, default=8,
                   help="suggestion jobs kept waiting on the suggest queue (default 8)")
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds of both layouts (default 2)")
    p.add_argument("--layouts", default="reserved,shared", help="layouts to run (default reserved,shared)")
    p.add_argument("--redis-url", default=None, help="use this Redis (it is flushed!) instead of a private one")
    p.add_argument("--json", action="store_true", help="print JSON")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
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
