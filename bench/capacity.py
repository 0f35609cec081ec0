"""``tilehouse bench capacity``: the unit costs a capacity plan is made of, measured, and the plan they give.

Measured (docs/deployment.md, "Capacity", turns them into cores and memory):

1. **API CPU per move and per view**: gunicorn (the project's ``gunicorn.conf.py``) on a private Redis, one
   client on loopback sending ``POST /v1/games/{id}/moves`` (real, applied moves of 2-player Kozel games
   of humans, worked out beforehand) and ``GET /v1/games/{id}`` (a seat's view); the user + system CPU
   of gunicorn's worker processes (``/proc``) over the requests, per request.
2. **Redis per move and per view**: over the same requests, the commands Redis executed (``INFO
   commandstats``), the bytes it read and wrote (``INFO stats`` ``total_net_input_bytes`` /
   ``total_net_output_bytes``) and its own CPU (``INFO cpu``), per request, with the cost of the
   measuring ``INFO`` calls themselves taken out.
3. **An AI seat's move, beside its decision**: games of four ``greedy`` seats play themselves out on one
   worker (``python worker.py``), unpaced (``TILEHOUSE_AI_PACE_MS=0``: the planned tables have a person at
   them, and an all-AI table's pace job is no part of a move there); per move, the worker's CPU and the Redis commands, bytes and CPU of
   everything around the decision (RQ's enqueue, dequeue, registries and heartbeats, the commit, the
   next job).  ``greedy`` decides in microseconds, so this is the job's overhead.
4. **Redis memory per game**: ``used_memory`` before and after creating and playing out those games,
   per finished game (games stay ``TILEHOUSE_GAME_TTL_SECONDS`` after their last move), and what RQ still
   holds per game beside the game's keys (the records of its last AI move and registry entries: earlier
   play records are deleted as the game moves on, so a running game holds about as much).
5. **What WAIT costs a move**: the bench Redis gets a replica; two gunicorns, one with
   ``TILEHOUSE_REDIS_WAIT_REPLICAS=1``, one without, take the same kind of moves in interleaved rounds;
   p50 / p90 latency of ``POST .../moves`` each.
6. **AI CPU per decision at each strength**: in this process, each engine preset (``ismcts`` quick /
   standard / strong, ``greedy``, ``random``) decides at positions a few random moves into games of each
   rule set; process CPU time per decision.

Then the plan: per concurrent table, ``--human-move-seconds`` between a person's moves, ``--ai-seats`` AI
seats deciding at ``--preset`` after each, one view per move per person; API cores, worker cores, Redis
commands and CPU per second, and Redis memory, for 1,000 / 10,000 / 100,000 tables.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

import ai
import engine
from bench.http import _cpu_seconds, _new_game, _percentile, _processes, _request, bench_redis
from service import connections
from service.redis_local import free_port, redis_server_binary
from service.store import keys_of

ROOT = Path(__file__).resolve().parent.parent
TABLES = (1_000, 10_000, 100_000)


# --------------------------------------------------------------------------- Redis counters

def _redis_counters(conn: redis.Redis) -> dict[str, float]:
    stats = conn.info("stats")
    cpu = conn.info("cpu")
    calls = sum(int(v["calls"]) for k, v in conn.info("commandstats").items() if k != "cmdstat_info")
    return {"commands": calls, "in": stats["total_net_input_bytes"], "out": stats["total_net_output_bytes"],
            "cpu": cpu["used_cpu_user"] + cpu["used_cpu_sys"]}


def _info_overhead(conn: redis.Redis) -> dict[str, float]:
    """What one reading of :func:`_redis_counters` itself adds to the byte counters."""
    a = _redis_counters(conn)
    b = _redis_counters(conn)
    return {k: b[k] - a[k] for k in ("in", "out")}


@contextmanager
def _measure(conn: redis.Redis, master: int | None, worker: int | None = None) -> Iterator[dict[str, float]]:
    """Deltas of Redis's counters and of the CPU of gunicorn's workers (children of ``master``) or of the
    process ``worker`` over the block."""
    overhead = _info_overhead(conn)
    before = _redis_counters(conn)
    cpu0 = _cpu_seconds(master) if master else 0.0
    own0 = _process_cpu(worker) if worker else 0.0
    out: dict[str, float] = {}
    yield out
    after = _redis_counters(conn)
    out.update({k: after[k] - before[k] for k in before})
    out["in"] -= overhead["in"]
    out["out"] -= overhead["out"]
    out["api_cpu"] = (_cpu_seconds(master) - cpu0) if master else 0.0
    out["worker_cpu"] = (_process_cpu(worker) - own0) if worker else 0.0


def _process_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _per(delta: dict[str, float], n: int) -> dict[str, float]:
    return {"api_cpu_us": round(delta["api_cpu"] / n * 1e6, 1), "worker_cpu_us": round(delta["worker_cpu"] / n * 1e6, 1),
            "redis_commands": round(delta["commands"] / n, 2), "redis_bytes_in": round(delta["in"] / n),
            "redis_bytes_out": round(delta["out"] / n), "redis_cpu_us": round(delta["cpu"] / n * 1e6, 1)}


# --------------------------------------------------------------------------- 1, 2: API moves and views

def api_costs(url: str, moves: int) -> dict[str, Any]:
    rconn = connections.client({"REDIS_URL": url})
    port = free_port()
    with _processes(url, port, ai_workers=0) as procs:
        master = procs[0].pid
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        games = []
        planned = 0
        seed = 7_000
        while planned < moves + 50:
            game = _new_game(conn, seed)
            games.append(game)
            planned += len(game[2])
            seed += 1
        # warm up: every code path once, in both gunicorn workers
        for gid, toks, _ in games[:4]:
            _request(conn, "GET", f"/v1/games/{gid}", token=toks[0])
        queue = [(gid, toks, pos, seat, move) for gid, toks, plan in games for pos, (seat, move) in enumerate(plan)]
        for gid, toks, pos, seat, move in queue[:20]:
            _request(conn, "POST", f"/v1/games/{gid}/moves", {"move": move, "version": pos}, toks[seat])
        queue = queue[20:20 + moves]
        with _measure(rconn, master) as moved:
            for gid, toks, pos, seat, move in queue:
                status, body = _request(conn, "POST", f"/v1/games/{gid}/moves", {"move": move, "version": pos},
                                        toks[seat])
                assert status == 200, body
        views = [(gid, toks[0]) for gid, toks, _ in games]
        with _measure(rconn, master) as viewed:
            for i in range(moves):
                gid, token = views[i % len(views)]
                status, body = _request(conn, "GET", f"/v1/games/{gid}", token=token)
                assert status == 200, body
    return {"move": _per(moved, len(queue)), "view": _per(viewed, moves)}


# --------------------------------------------------------------------------- 3, 4: AI moves, memory

def ai_move_costs(url: str, games: int) -> dict[str, Any]:
    rconn = connections.client({"REDIS_URL": url})
    rconn.flushdb()
    port = free_port()
    # the plan's tables have a person at them, so their AI moves are not paced: an all-AI table's pace job
    # (service.queues, AI_PACE_MS) and the polls while it waits would be counted as the move's own cost
    with _processes(url, port, ai_workers=1, extra_env={"TILEHOUSE_AI_PACE_MS": "0"}) as procs:
        worker = procs[1].pid
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        time.sleep(1.0)  # the worker's start-up (imports, first maintenance) out of the figures
        memory0 = rconn.info("memory")["used_memory"]
        with _measure(rconn, None, worker) as played:
            ids = []
            for n in range(games):
                status, created = _request(conn, "POST", "/v1/games", {
                    "rules": "tiengow", "seed": 50 + n, "seats": [{"kind": "ai", "engine": "greedy"}] * 4})
                assert status == 201, created
                ids.append(created["game"]["id"])
            versions = 0
            deadline = time.monotonic() + 600
            for gid in ids:
                while True:
                    status, view = _request(conn, "GET", f"/v1/games/{gid}")
                    if view["status"] == "finished":
                        versions += view["version"]
                        break
                    assert time.monotonic() < deadline, "the AI games did not finish"
                    time.sleep(0.2)
        memory = rconn.info("memory")["used_memory"] - memory0
        # the game's own keys (what stays for the TTL) apart from what RQ holds for it: a play job's records
        # go once a later AI move of its game is played (service.queues.forget_earlier_play_jobs), the
        # last move's 60 s after the end (FINISHED_PLAY_RESULT_TTL_SECONDS)
        game_bytes = sum(int(rconn.memory_usage(key, samples=0) or 0) for gid in ids for key in keys_of(gid))
    # the polls of this loop are views: small next to the AI moves, left in (an upper bound)
    return {"ai_move": {**_per(played, versions), "moves": versions},
            "memory_bytes_per_finished_game": round(game_bytes / games),
            "memory_bytes_in_rq_per_game": round((memory - game_bytes) / games)}


# --------------------------------------------------------------------------- 5: WAIT

def wait_cost(url: str, moves: int, rounds: int) -> dict[str, Any]:
    binary, _ = redis_server_binary()
    replica_port = free_port()
    master_port = int(url.rsplit(":", 1)[1].split("/")[0])
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"tilehouse-bench-replica-{replica_port}"
    folder.mkdir(parents=True, exist_ok=True)
    replica = subprocess.Popen([binary, "--port", str(replica_port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", str(folder), "--replicaof", "127.0.0.1",
                                str(master_port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        rconn = connections.client({"REDIS_URL": url})
        # in sync, not merely connected: until its first (diskless, 5 s delayed) sync is done a replica
        # acknowledges nothing, so every WAIT would time out and the move answer 503
        deadline = time.monotonic() + 30
        while (rconn.info("replication").get("slave0") or {}).get("state") != "online":
            assert time.monotonic() < deadline, "the replica did not get in sync"
            time.sleep(0.1)
        ports = {"no WAIT": free_port(), "WAIT 1 replica": free_port()}
        latencies: dict[str, list[float]] = {label: [] for label in ports}
        with _processes(url, ports["no WAIT"], 0), \
                _processes(url, ports["WAIT 1 replica"], 0, extra_env={"TILEHOUSE_REDIS_WAIT_REPLICAS": "1"}):
            plans = {label: [] for label in ports}  # type: dict[str, list[tuple[str, dict[int, str], int, int, str]]]
            seed = 90_000
            for label, port in ports.items():
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                while len(plans[label]) < moves * rounds + 20:
                    gid, toks, plan = _new_game(conn, seed)
                    seed += 1
                    plans[label] += [(gid, toks, pos, seat, move) for pos, (seat, move) in enumerate(plan)]
            conns = {label: http.client.HTTPConnection("127.0.0.1", port, timeout=10) for label, port in ports.items()}
            for r in range(rounds + 1):
                for label in (list(ports) if r % 2 == 0 else list(ports)[::-1]):
                    batch = plans[label][:moves] if r else plans[label][:20]  # round 0 warms up
                    plans[label] = plans[label][len(batch):]
                    for gid, toks, pos, seat, move in batch:
                        t = time.perf_counter()
                        status, body = _request(conns[label], "POST", f"/v1/games/{gid}/moves",
                                                {"move": move, "version": pos}, toks[seat])
                        if r:
                            latencies[label].append(time.perf_counter() - t)
                        assert status == 200, body
    finally:
        replica.terminate()
        replica.wait()
    return {label: {"p50_ms": round(statistics.median(v) * 1000, 2), "p90_ms": round(_percentile(v, 0.9) * 1000, 2),
                    "moves": len(v)} for label, v in latencies.items()}


# --------------------------------------------------------------------------- 6: AI decisions

def _positions(rules_id: str, count: int, seed: int) -> list[engine.State]:
    rng = random.Random(seed)
    players = engine.RULES[rules_id].default_players
    out: list[engine.State] = []
    while len(out) < count:
        state = engine.new_game(rules_id, players=players, seed=rng.randrange(1 << 30))
        for _ in range(rng.randrange(0, 6)):
            if state.finished:
                break
            state.play(rng.choice(state.legal_moves()))
        if not state.finished and len(state.legal_moves()) > 1:
            out.append(state)
    return out


def decision_costs(positions: int, seed: int = 11) -> dict[str, dict[str, float]]:
    presets: list[tuple[str, str, dict[str, Any]]] = [
        ("ismcts", p.name, {**p.params, "time_ms": 600_000}) for p in ai.ENGINES["ismcts"].presets]
    presets += [("greedy", "-", {}), ("random", "-", {})]
    out: dict[str, dict[str, float]] = {}
    for rules_id in sorted(engine.RULES):
        states = _positions(rules_id, positions, seed)
        for engine_id, preset, params in presets:
            eng = ai.ENGINES[engine_id]
            full = eng.validate(params)
            rng = random.Random(seed)
            spent = []
            for state in states:
                seat = state.to_move
                assert seat is not None  # _positions keeps only positions with a seat to move
                t = time.process_time()
                eng.choose(state.clone(), seat, full, rng)
                spent.append(time.process_time() - t)
            out[f"{rules_id} {engine_id} {preset}"] = {"cpu_ms_mean": round(statistics.mean(spent) * 1000, 2),
                                                       "cpu_ms_max": round(max(spent) * 1000, 2)}
    return out


# --------------------------------------------------------------------------- the plan

def plan(report: dict[str, Any], human_move_seconds: float, ai_seats: int, preset: str, rules_id: str,
         ttl_days: float, table_minutes: float) -> dict[int, dict[str, float]]:
    """Cores and memory for each number of concurrent tables (one person and ``ai_seats`` AI seats each)."""
    move, view, ai_move = report["api"]["move"], report["api"]["view"], report["ai"]["ai_move"]
    decision_ms = report["decisions"][f"{rules_id} ismcts {preset}"]["cpu_ms_mean"]
    per_table_moves = (1 + ai_seats) / human_move_seconds           # moves per second, all seats
    human_moves = 1 / human_move_seconds
    ai_moves = ai_seats / human_move_seconds
    views = per_table_moves                                         # the person re-reads the view per move
    out = {}
    for tables in TABLES:
        api_cores = tables * (human_moves * move["api_cpu_us"] + views * view["api_cpu_us"]) / 1e6
        worker_cores = tables * ai_moves * (decision_ms * 1000 + ai_move["worker_cpu_us"]) / 1e6
        redis_cmds = tables * (human_moves * move["redis_commands"] + views * view["redis_commands"]
                               + ai_moves * ai_move["redis_commands"])
        redis_cpu = tables * (human_moves * move["redis_cpu_us"] + views * view["redis_cpu_us"]
                              + ai_moves * ai_move["redis_cpu_us"]) / 1e6
        redis_mbit = tables * 8 * (human_moves * (move["redis_bytes_in"] + move["redis_bytes_out"])
                                   + views * (view["redis_bytes_in"] + view["redis_bytes_out"])
                                   + ai_moves * (ai_move["redis_bytes_in"] + ai_move["redis_bytes_out"])) / 1e6
        # finished games stay for the TTL: the games started in ttl_days, tables restarting every table_minutes;
        # a running table holds its game's keys and RQ's records of its last AI move
        retained = tables * (ttl_days * 24 * 60 / table_minutes)
        game_bytes = report["ai"]["memory_bytes_per_finished_game"]
        live_bytes = tables * (game_bytes + report["ai"]["memory_bytes_in_rq_per_game"])
        memory_gib = (retained * game_bytes + live_bytes) / 2**30
        live_gib = live_bytes / 2**30
        out[tables] = {"api_cores": round(api_cores, 2), "worker_cores": round(worker_cores, 1),
                       "redis_commands_per_s": round(redis_cmds), "redis_cpu_cores": round(redis_cpu, 2),
                       "redis_mbit_per_s": round(redis_mbit, 1), "redis_memory_gib": round(memory_gib, 1),
                       "redis_memory_gib_without_finished_games": round(live_gib, 2)}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench capacity", description=__doc__.split("\n\n")[0])
    p.add_argument("--redis-url", default=None, help="a Redis to use (flushed!); default: a private one")
    p.add_argument("--moves", type=int, default=600, help="moves and views measured through the API")
    p.add_argument("--ai-games", type=int, default=20, help="all-greedy Tien Gow games played by one worker")
    p.add_argument("--wait-moves", type=int, default=200, help="moves per round and configuration for WAIT")
    p.add_argument("--wait-rounds", type=int, default=4)
    p.add_argument("--positions", type=int, default=5, help="positions per rule set for the AI decisions")
    p.add_argument("--human-move-seconds", type=float, default=10.0)
    p.add_argument("--ai-seats", type=int, default=3)
    p.add_argument("--preset", default="standard", help="the ismcts preset the AI seats play at")
    p.add_argument("--rules", default="tiengow", help="the rule set of the planned tables")
    p.add_argument("--ttl-days", type=float, default=7.0, help="TILEHOUSE_GAME_TTL_SECONDS, in days")
    p.add_argument("--table-minutes", type=float, default=15.0, help="how long one game lasts")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    args = p.parse_args(argv)
    report: dict[str, Any] = {}
    with bench_redis(args.redis_url) as url:
        report["api"] = api_costs(url, args.moves)
        report["ai"] = ai_move_costs(url, args.ai_games)
        report["wait"] = wait_cost(url, args.wait_moves, args.wait_rounds)
    report["decisions"] = decision_costs(args.positions)
    report["plan"] = plan(report, args.human_move_seconds, args.ai_seats, args.preset, args.rules, args.ttl_days,
                          args.table_minutes)
    report["assumptions"] = {k: getattr(args, k) for k in ("human_move_seconds", "ai_seats", "preset", "rules",
                                                          "ttl_days", "table_minutes")}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for kind in ("move", "view"):
        f = report["api"][kind]
        print(f"API {kind:4}: {f['api_cpu_us']:7.0f} us API CPU, {f['redis_commands']:5.1f} Redis commands, "
              f"{f['redis_bytes_in']:6} B in / {f['redis_bytes_out']:6} B out, {f['redis_cpu_us']:5.0f} us Redis CPU")
    f = report["ai"]["ai_move"]
    print(f"AI move (greedy, job overhead, {f['moves']} moves): {f['worker_cpu_us']:7.0f} us worker CPU, "
          f"{f['redis_commands']:5.1f} Redis commands, {f['redis_bytes_in']} B in / {f['redis_bytes_out']} B out, "
          f"{f['redis_cpu_us']:.0f} us Redis CPU")
    print(f"Redis memory per finished game: {report['ai']['memory_bytes_per_finished_game']} B (its keys); "
          f"RQ's records: {report['ai']['memory_bytes_in_rq_per_game']} B per game (its last AI move's)")
    for label, f in report["wait"].items():
        print(f"POST move, {label:14}: p50 {f['p50_ms']:6.2f} ms, p90 {f['p90_ms']:6.2f} ms ({f['moves']} moves)")
    for name, f in report["decisions"].items():
        print(f"decision {name:32}: {f['cpu_ms_mean']:9.2f} ms CPU mean, {f['cpu_ms_max']:9.2f} max")
    print(f"plan ({report['assumptions']}):")
    for tables, f in report["plan"].items():
        print(f"  {tables:>7,} tables: {f['api_cores']:7.2f} API cores, {f['worker_cores']:8.1f} worker cores, "
              f"Redis {f['redis_commands_per_s']:>9,} cmd/s, {f['redis_cpu_cores']:5.2f} cores, "
              f"{f['redis_mbit_per_s']:7.1f} Mbit/s, {f['redis_memory_gib']:7.1f} GiB "
              f"({f['redis_memory_gib_without_finished_games']:.2f} GiB without the finished games)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
