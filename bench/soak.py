"""``tilehouse bench soak``: many clients playing whole games against AI seats at once, then every game's
event log checked.

gunicorn (the project's gunicorn.conf.py) and ``--ai-workers`` RQ workers run on loopback against a
private Redis (or ``--redis-url``, which must be on loopback and is flushed).  ``--clients`` threads (50)
each play games for ``--seconds`` (60): create a game with one human seat and AI seats, poll the view,
play a random legal move with ``version`` when it is the human's turn, wait while the AI seats move (the
workers play them), and start a new game when one ends.  Afterwards every game's event log is read and
checked for gaps and doubles:

* events are numbered 1..N with no gap and no repeat;
* their versions never go back, and every version from 1 to the game's version has its events (no applied
  move without its events, none logged twice under two versions);
* each move a client had answered 200 opens the events of the version it produced, by that seat;
* every finished game's replay (``GET /v1/games/{id}/replay``: every event with every secret part) is
  played again by the engine move by move (``engine.replay.check``): each version's events must be
  exactly the ones its move makes, none missing and none twice.

It reports the requests, the non-2xx/3xx answers by status (5xx must be 0; a 409 is a lost race with the
AI, which a client may meet and retries), and p50/p99 latency per endpoint (route template).  Bounded:
at most 600 s and 200 clients, loopback only, and it stops by itself.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import sys
import threading
import time
from collections import Counter, defaultdict
from typing import Any
from urllib.parse import urlsplit

from bench.http import _percentile, _processes, bench_redis
from engine.replay import check as replay_problems
from service.redis_local import free_port

MAX_SECONDS = 600
MAX_CLIENTS = 200
#: the rule sets played and their seats: one human seat, the rest cheap AI seats (the soak measures the
#: service, not the search)
TABLES = (("kozel", [{"kind": "human"}, {"kind": "ai", "engine": "random"}]),
          ("tiengow", [{"kind": "human"}, {"kind": "ai", "engine": "greedy"}, {"kind": "ai", "engine": "random"},
                       {"kind": "ai", "engine": "random"}]),
          ("tiuu", [{"kind": "human"}, {"kind": "ai", "engine": "greedy"}]))
#: seconds a client waits between two polls of a game whose AI seats are to move
AI_POLL_SECONDS = 0.05


class Stats:
    """Latencies and statuses per endpoint, shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.statuses: dict[str, Counter[int]] = defaultdict(Counter)

    def add(self, endpoint: str, status: int, seconds: float) -> None:
        with self.lock:
            self.latency[endpoint].append(seconds)
            self.statuses[endpoint][status] += 1


class Client:
    """One player on one keep-alive connection."""

    def __init__(self, port: int, stats: Stats, seed: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.stats = stats
        self.rng = random.Random(seed)
        #: game id -> [(version after the move, seat)] of this client's applied moves
        self.games: dict[str, list[tuple[int, int]]] = {}

    def call(self, method: str, endpoint: str, path: str, body: Any = None,
             token: str | None = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        t = time.perf_counter()
        try:
            self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            r = self.conn.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()  # counted as status 0: the connection failed
            self.stats.add(f"{method} {endpoint}", 0, time.perf_counter() - t)
            return 0, None
        self.stats.add(f"{method} {endpoint}", r.status, time.perf_counter() - t)
        return r.status, (json.loads(data) if data else None)

    def play(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            rules, seats = TABLES[self.rng.randrange(len(TABLES))]
            status, created = self.call("POST", "/v1/games", "/v1/games",
                                        {"rules": rules, "seed": self.rng.randrange(2**31), "seats": seats})
            if status != 201:
                time.sleep(0.1)
                continue
            game_id, token = created["game"]["id"], created["seats"][0]["token"]
            mine = self.games.setdefault(game_id, [])
            while time.monotonic() < deadline:
                status, view = self.call("GET", "/v1/games/<game_id>", f"/v1/games/{game_id}", token=token)
                if status != 200:
                    break
                if view["status"] == "finished":
                    self.call("GET", "/v1/games/<game_id>/events", f"/v1/games/{game_id}/events", token=token)
                    break
                if view["to_move"] != 0:
                    time.sleep(AI_POLL_SECONDS)
                    continue
                move = self.rng.choice(view["legal_moves"])["id"]
                status, _ = self.call("POST", "/v1/games/<game_id>/moves", f"/v1/games/{game_id}/moves",
                                          {"move": move, "version": view["version"]}, token)
                if status == 200:
                    mine.append((view["version"] + 1, 0))


def _get(conn: http.client.HTTPConnection, path: str) -> Any:
    conn.request("GET", path)
    return json.loads(conn.getresponse().read())


def check_logs(port: int, games: dict[str, list[tuple[int, int]]]) -> dict[str, Any]:
    """Read every game's event log; list the games whose log has a gap or a double."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    problems: list[str] = []
    events_read = replayed = 0
    for game_id, mine in games.items():
        # the AI seats may still be moving in games the deadline cut short: read until log and view agree
        for _ in range(50):
            events = _get(conn, f"/v1/games/{game_id}/events")
            view = _get(conn, f"/v1/games/{game_id}")
            if (events[-1]["version"] if events else 0) == view["version"]:
                break
            time.sleep(0.1)
        events_read += len(events)
        numbers = [e["n"] for e in events]
        if numbers != list(range(1, len(events) + 1)):
            problems.append(f"{game_id}: event numbers are not 1..{len(events)}")
        versions = [e["version"] for e in events]
        if versions != sorted(versions):
            problems.append(f"{game_id}: event versions go back")
        if set(range(1, view["version"] + 1)) != set(versions) - {0}:
            problems.append(f"{game_id}: the events' versions are not 1..{view['version']}")
        first_of: dict[int, Any] = {}
        for e in events:
            first_of.setdefault(e["version"], e["seat"])
        for version, seat in mine:
            if first_of.get(version, -1) != seat:
                problems.append(f"{game_id}: the move answered 200 at version {version} does not open its version")
        if view["status"] == "finished":
            # the whole log with every secret part, played again by the engine move by move: every event
            # must be exactly what the move made, none missing, none twice
            replayed += 1
            problems += [f"{game_id}: {p}" for p in replay_problems(_get(conn, f"/v1/games/{game_id}/replay"))]
    return {"games": len(games), "events": events_read, "replayed": replayed, "problems": problems}


def soak(port: int, clients: int, seconds: float) -> dict[str, Any]:
    stats = Stats()
    players = [Client(port, stats, seed=i) for i in range(clients)]
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=p.play, args=(deadline,)) for p in players]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    games: dict[str, list[tuple[int, int]]] = {}
    for p in players:
        games.update(p.games)
    endpoints = {}
    for name in sorted(stats.latency):
        lat = stats.latency[name]
        endpoints[name] = {"requests": len(lat), "p50_ms": round(_percentile(lat, 0.50) * 1000, 2),
                           "p99_ms": round(_percentile(lat, 0.99) * 1000, 2),
                           "statuses": dict(sorted(stats.statuses[name].items()))}
    all_statuses: Counter[int] = Counter()
    for c in stats.statuses.values():
        all_statuses.update(c)
    # a client reads a game's events once, when it has played it to the end
    finished = stats.statuses["GET /v1/games/<game_id>/events"][200]
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": sum(all_statuses.values()),
            "req_per_s": round(sum(all_statuses.values()) / elapsed, 1),
            "server_errors": sum(n for s, n in all_statuses.items() if s >= 500 or s == 0),
            "statuses": dict(sorted(all_statuses.items())), "games_finished": finished,
            "endpoints": endpoints, "logs": check_logs(port, games)}


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50, help=f"concurrent clients (default 50, at most {MAX_CLIENTS})")
    p.add_argument("--seconds", type=float, default=60.0, help=f"play time (default 60, at most {MAX_SECONDS})")
    p.add_argument("--ai-workers", type=int, default=2, help="RQ worker processes playing the AI seats (default 2)")
    p.add_argument("--redis-url", default=None, help="a loopback Redis to use (it is flushed!) instead of a private one")
    p.add_argument("--json", action="store_true", help="print JSON")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not 1 <= args.clients <= MAX_CLIENTS or not 0 < args.seconds <= MAX_SECONDS or not 1 <= args.ai_workers <= 16:
        p.error(f"--clients 1-{MAX_CLIENTS}, --seconds up to {MAX_SECONDS}, --ai-workers 1-16")
    if args.redis_url and not _loopback(args.redis_url):
        p.error("the soak runs on loopback only: --redis-url must name 127.0.0.1, ::1 or localhost")

    with bench_redis(args.redis_url) as url:
        port = free_port()
        with _processes(url, port, ai_workers=args.ai_workers):
            report = soak(port, args.clients, args.seconds)

    ok = report["server_errors"] == 0 and not report["logs"]["problems"]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0 if ok else 1
    print(f"soak: {report['clients']} clients for {report['seconds']} s, {args.ai_workers} AI workers, gunicorn on loopback")
    print(f"  requests {report['requests']} ({report['req_per_s']} req/s), 5xx or failed connections "
          f"{report['server_errors']}, statuses {report['statuses']}")
    print(f"  games {report['logs']['games']} ({report['games_finished']} played to the end), "
          f"events checked {report['logs']['events']}, finished games replayed by the engine "
          f"{report['logs']['replayed']}, log problems {len(report['logs']['problems'])}")
    for problem in report["logs"]["problems"][:20]:
        print(f"    {problem}")
    for name, fig in report["endpoints"].items():
        print(f"  {name:36s} {fig['requests']:7d} req  p50 {fig['p50_ms']:7.2f} ms  p99 {fig['p99_ms']:8.2f} ms"
              f"  {fig['statuses']}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
