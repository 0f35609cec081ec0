"""``tilehouse bench memory``: the Redis bytes a game costs, job records included.

Two figures, on a private Redis (or ``--redis-url``, flushed), with the app and a real RQ worker in this
process (``SimpleWorker`` bursts, as the tests drain queues):

* **per finished Tien Gow deal**: ``--deals-games`` all-AI Tien Gow games of one deal each are played to
  the end (with the pace off, ``AI_PACE_MS`` 0: it changes no byte of a finished game); then every key of
  each game (its hash, events, job list) and every RQ key of its jobs (job hashes, result streams,
  executions) is weighed with ``MEMORY USAGE`` right after the end.
* **per hour of a running all-AI game**: one all-AI Kozel game with a target no game reaches in the time
  is played for ``--seconds`` by a real worker with its scheduler, at the server's pace of a table with no
  person at it (``--pace-ms``, default the server's default ``AI_PACE_MS``); the bytes of its keys and its
  jobs' keys are weighed at the start and at the end, and the growth is scaled to an hour of play at the
  rate of moves measured.  The seats use ``--engine`` with its default parameters (ismcts: what an AI seat
  gets unless its creator says more).

Printed: bytes per finished deal (mean, max) with the parts, AI moves per minute, bytes per AI move and per
hour, the job keys alive at the end (the targets: 16 KB per finished deal, 200 KB per hour, job keys
included).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from typing import Any

import redis
from rq import SimpleWorker

from bench.http import UNLIMITED, bench_redis
from service import config, create_app, queues
from service.store import Store


def _game_keys(conn: redis.Redis, game_id: str) -> list[bytes]:
    return [k for k in conn.scan_iter(f"*{game_id}*", count=1000)]


def weigh(conn: redis.Redis, game_id: str) -> dict[str, int]:
    """Bytes of every key naming the game (its own keys, its jobs' RQ keys): ``game``, ``jobs``, ``total``."""
    parts = {"game": 0, "jobs": 0, "job_keys": 0}
    for key in _game_keys(conn, game_id):
        size = int(conn.memory_usage(key, samples=0) or 0)
        if key.startswith(b"rq:"):
            parts["jobs"] += size
            parts["job_keys"] += 1
        else:
            parts["game"] += size
    parts["total"] = parts["game"] + parts["jobs"]
    return parts


def _worker(app: Any) -> SimpleWorker:
    queues = [app.extensions["queues"][n] for n in ("suggest", "play")]
    return SimpleWorker(queues, connection=app.extensions["redis"])


def _app(url: str, limits: dict[str, int], pace_ms: int) -> Any:
    """The app, and the in-process worker's settings, with the given pace (the worker reads
    ``queues.settings()``, as a real worker reads its environment)."""
    settings = {"REDIS_URL": url, **limits, "AI_PACE_MS": pace_ms}
    worker_cfg = config.load(settings)
    queues.settings = lambda: worker_cfg  # type: ignore[assignment]  # this process is the bench's alone
    return create_app(settings)


def per_deal(app: Any, games: int, engine_id: str) -> dict[str, Any]:
    client, conn = app.test_client(), app.extensions["redis"]
    ids = []
    for _ in range(games):
        r = client.post("/v1/games", json={"rules": "tiengow", "options": {"deals": 1},
                                           "seats": [{"kind": "ai", "engine": engine_id}] * 4})
        ids.append(r.get_json()["game"]["id"])
    _worker(app).work(burst=True, logging_level="WARNING")
    store = Store(conn, 3600)
    assert all(store.finished([g])[g] for g in ids), "a game did not finish"
    return {"games": games, "at_end": [weigh(conn, g) for g in ids]}


def per_hour(app: Any, seconds: float, engine_id: str) -> dict[str, Any]:
    client, conn = app.test_client(), app.extensions["redis"]
    r = client.post("/v1/games", json={"rules": "kozel", "options": {"target": 1000},
                                       "seats": [{"kind": "ai", "engine": engine_id}] * 2})
    game_id = r.get_json()["game"]["id"]
    store = Store(conn, 3600)

    def work() -> None:
        # one round of a real worker: its scheduler queues the pace jobs that are due, the worker runs them
        # and the play jobs they queue
        _worker(app).work(burst=True, with_scheduler=True, max_jobs=20, logging_level="WARNING")
        time.sleep(0.2)

    while (store.version(game_id) or 0) < 3:  # warm up: past the first move, which is never paced
        work()
    start, v0, t0 = weigh(conn, game_id), store.version(game_id) or 0, time.monotonic()
    while time.monotonic() - t0 < seconds:
        work()
        if store.finished([game_id])[game_id]:
            break
    elapsed = time.monotonic() - t0
    end, moves = weigh(conn, game_id), (store.version(game_id) or 0) - v0
    growth = end["total"] - start["total"]
    per_move = growth / max(1, moves)
    return {"seconds": round(elapsed, 1), "moves": moves, "moves_per_minute": round(moves / elapsed * 60, 1),
            "start": start, "end": end, "bytes_per_move": round(per_move, 1),
            "bytes_per_hour": round(per_move * moves / elapsed * 3600)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--deals-games", type=int, default=5, help="finished one-deal Tien Gow games (default 5)")
    p.add_argument("--seconds", type=float, default=120.0, help="play time of the running game (default 120)")
    p.add_argument("--pace-ms", type=int, default=config.DEFAULT_AI_PACE_MS,
                   help=f"AI_PACE_MS of the running game (default {config.DEFAULT_AI_PACE_MS}, the server's)")
    p.add_argument("--engine", default="ismcts", help="engine of every AI seat, default parameters (ismcts)")
    p.add_argument("--redis-url", default=None, help="use this Redis (it is flushed!) instead of a private one")
    p.add_argument("--json", action="store_true", help="print JSON")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    logging.getLogger("rq.worker").setLevel(logging.WARNING)
    with bench_redis(args.redis_url) as url:
        limits = {k.removeprefix("TILEHOUSE_"): int(v) for k, v in UNLIMITED.items()}
        deals = per_deal(_app(url, limits, 0), args.deals_games, args.engine)
        hour = per_hour(_app(url, limits, args.pace_ms), args.seconds, args.engine)
    report = {"per_deal": deals, "per_hour": hour, "engine": args.engine, "pace_ms": args.pace_ms}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    rows = deals["at_end"]
    totals = [r["total"] for r in rows]
    print(f"finished Tien Gow deal ({args.engine}), right after the end: mean {sum(totals) / len(totals) / 1024:.1f} "
          f"KB, max {max(totals) / 1024:.1f} KB (game keys {max(r['game'] for r in rows) / 1024:.1f} KB, "
          f"job keys {max(r['job_keys'] for r in rows)} = {max(r['jobs'] for r in rows) / 1024:.1f} KB); "
          f"target 16 KB")
    print(f"running all-AI Kozel game ({args.engine}, pace {args.pace_ms} ms): {hour['moves']} AI moves in {hour['seconds']} s "
          f"({hour['moves_per_minute']} a minute), {hour['bytes_per_move']:.0f} bytes per move, "
          f"{hour['bytes_per_hour'] / 1024:.0f} KB per hour of play; job keys alive at the end: "
          f"{hour['end']['job_keys']} ({hour['end']['jobs'] / 1024:.1f} KB); target 200 KB per hour")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
