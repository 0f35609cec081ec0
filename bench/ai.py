"""``tilehouse bench ai``: ISMCTS iterations per second at the opening decision of each rule set, on one
core, with each playout policy (random, the cheap heuristic, greedy); the garbage-collection pauses of
those searches; and, with ``--rss N``, the memory of a worker process after ``N`` searches.

The opening decision is the first decision of a fresh match (seed 1, the rule set's default player
count) where the seat to move has a real choice: forced moves are played first, since ``ismcts`` does
not search when there is one legal move.  Each measurement is one time-limited search through
``ai.decide`` (so it includes the determinization ``decide`` makes), reporting the iterations it managed.
The targets: 3,000 iterations per second at the Tien Gow opening with random playouts, and
12,000 with the heuristic playout (the default there; Kozel's default is the greedy one).

Garbage collection: the bench settles the collector as a worker does
(``ai.ismcts.settle_gc``; ``--gc default`` leaves Python's settings) and times every collection during
the searches with ``gc.callbacks``: per rule set, how many collections ran, how many were full
(generation 2), the longest pause and the total.

``--rss N`` runs ``N`` searches per rule set (``--rss-iterations`` each, default 100) in a fresh process set
up like ``tilehouse worker`` (engines imported, collector settled), each on a different position (seed
``i``, a random number of random moves into the match), and prints the process's resident memory before
and after, and its peak.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import multiprocessing
import random
import resource
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import ai
import engine

POLICIES = ("random", "heuristic", "greedy")


def opening(rules_id: str, players: int, seed: int = 1) -> engine.State:
    state = engine.new_game(rules_id, players=players, seed=seed)
    while not state.finished and len(state.legal_moves()) == 1:
        state.apply(state.legal_moves()[0])
    return state


def bench(rules_id: str, players: int, playout: str, seconds: float, seed: int = 1,
          iterations: int = 0) -> dict[str, object]:
    """One search at the opening: for ``seconds`` of wall-clock time, or of exactly ``iterations``."""
    state = opening(rules_id, players, seed)
    seat = state.to_move
    assert seat is not None, f"{rules_id}: the match ended on forced moves"
    budget = ({"iterations": iterations, "time_ms": 600_000} if iterations
              else {"iterations": 1_000_000, "time_ms": max(1, int(seconds * 1000))})
    cpu = time.process_time()
    d = ai.decide("ismcts", state, seat, {**budget, "playout": playout}, seed=seed)
    cpu = time.process_time() - cpu
    it = d.stats["iterations"]
    ms = d.stats["elapsed_ms"]
    return {"rules": rules_id, "players": players, "playout": playout, "playout_used": d.stats.get("playout"),
            "legal_moves": len(state.legal_moves()), "iterations": it, "seconds": round(ms / 1000.0, 3),
            "iterations_per_s": round(it / (ms / 1000.0), 1) if ms else None,
            # the rate per second of this process's own CPU time: the figure to compare on a shared machine,
            # where other processes take the core for part of the wall-clock time
            "cpu_seconds": round(cpu, 3), "iterations_per_cpu_s": round(it / cpu, 1) if cpu > 0 else None}


class GcPauses:
    """Every garbage collection while active, timed through ``gc.callbacks``: (generation, seconds)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._t0 = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._t0))

    @contextmanager
    def active(self) -> Iterator[GcPauses]:
        gc.callbacks.append(self._callback)
        try:
            yield self
        finally:
            gc.callbacks.remove(self._callback)

    def summary(self) -> dict[str, Any]:
        full = [p for g, p in self.pauses if g == 2]
        return {"collections": len(self.pauses), "full_collections": len(full),
                "longest_pause_ms": round(max((p for _g, p in self.pauses), default=0.0) * 1000, 2),
                "longest_full_ms": round(max(full, default=0.0) * 1000, 2),
                "total_pause_ms": round(sum(p for _g, p in self.pauses) * 1000, 2)}


def rss_kib() -> int:
    """This process's resident set size in KiB (Linux ``/proc``; elsewhere the peak)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _searches(rules_id: str, searches: int, iterations: int, settle: bool) -> dict[str, Any]:
    """In a fresh process: ``searches`` searches of ``iterations`` each on varied positions."""
    from ai.ismcts import settle_gc

    with suppress(ImportError):
        # what ``tilehouse worker`` imports (RQ, Redis, the service's job code), when run from a checkout
        importlib.import_module("worker")
    if settle:
        settle_gc()
    rs = engine.get_rules(rules_id)
    before = rss_kib()
    pauses = GcPauses()
    t0 = time.perf_counter()
    with pauses.active():
        for i in range(searches):
            rng = random.Random(i)
            state = rs.new(rs.default_players, i)
            for _ in range(rng.randrange(12)):
                if state.finished:
                    break
                state.apply(rng.choice(state.legal_moves()))
            while not state.finished and len(state.legal_moves()) == 1:
                state.apply(state.legal_moves()[0])
            if state.finished:
                state = rs.new(rs.default_players, i)
            seat = state.to_move
            assert seat is not None
            ai.decide("ismcts", state, seat, {"iterations": iterations}, seed=i)
    return {"rules": rules_id, "searches": searches, "iterations": iterations,
            "seconds": round(time.perf_counter() - t0, 1), "rss_before_mib": round(before / 1024, 1),
            "rss_after_mib": round(rss_kib() / 1024, 1),
            "peak_rss_mib": round(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, rss_kib()) / 1024, 1),
            **pauses.summary()}


def rss_after_searches(rules_id: str, searches: int, iterations: int, settle: bool = True) -> dict[str, Any]:
    """``_searches`` in a fresh (spawned) process, so that every rule set starts from a new worker."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(_searches, (rules_id, searches, iterations, settle))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench ai", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rules", nargs="*", help="rule set ids (default: all)")
    p.add_argument("--seconds", type=float, default=3.0, help="search time per rule set and playout policy")
    p.add_argument("--playout", choices=POLICIES, action="append",
                   help="playout policies to measure (default: all)")
    p.add_argument("--iterations", type=int, default=0,
                   help="instead of --seconds: searches of exactly this many iterations")
    p.add_argument("--gc", choices=("settled", "default"), default="settled",
                   help="collector settings: as a worker sets them (ai.ismcts.settle_gc) or Python's defaults")
    p.add_argument("--rss", type=int, metavar="N", default=0,
                   help="instead: the memory of a fresh worker-like process after N searches per rule set")
    p.add_argument("--rss-iterations", type=int, default=100, help="iterations per search with --rss")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    a = p.parse_args(argv)
    rules = a.rules or sorted(engine.RULES)
    if a.rss:
        for rid in rules:
            r = rss_after_searches(rid, a.rss, a.rss_iterations, a.gc == "settled")
            if a.json:
                print(json.dumps(r), flush=True)
            else:
                print(f"{rid:14s} after {r['searches']} searches of {r['iterations']} iterations ({r['seconds']} s):"
                      f" RSS {r['rss_before_mib']} -> {r['rss_after_mib']} MiB (peak {r['peak_rss_mib']} MiB);"
                      f" {r['full_collections']} full collections (longest {r['longest_full_ms']} ms)", flush=True)
        return 0
    with _collector(a.gc == "settled"):
        _speed(rules, a.playout or POLICIES, a.seconds, a.iterations, a.gc, a.json)
    return 0


@contextmanager
def _collector(settle: bool) -> Iterator[None]:
    """The collector settled as in a worker for the duration (and restored after: the bench may run
    inside another process, such as the test suite)."""
    if not settle:
        yield
        return
    from ai.ismcts import settle_gc

    thresholds = gc.get_threshold()
    settle_gc()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def _speed(rules: list[str], playouts: Sequence[str], seconds: float, iterations: int, gc_mode: str,
           as_json: bool) -> None:
    for rid in rules:
        rs = engine.get_rules(rid)
        pauses = GcPauses()
        with pauses.active():
            for playout in playouts:
                r = bench(rid, rs.default_players, playout, seconds, iterations=iterations)
                if as_json:
                    print(json.dumps(r), flush=True)
                else:
                    note = "" if r["playout_used"] == playout else f" (no heuristics: {r['playout_used']})"
                    print(f"{rid:14s} {r['players']}p  {playout:9s} {r['iterations_per_s']:>9} iterations/s"
                          f"  ({r['iterations']} in {r['seconds']} s, {r['legal_moves']} legal moves;"
                          f" {r['iterations_per_cpu_s']} per CPU second){note}", flush=True)
        g = {"rules": rid, "gc": gc_mode, **pauses.summary()}
        if as_json:
            print(json.dumps(g), flush=True)
        else:
            print(f"{rid:14s} gc ({gc_mode}): {g['collections']} collections, {g['full_collections']} full;"
                  f" longest pause {g['longest_pause_ms']} ms (full: {g['longest_full_ms']} ms);"
                  f" {g['total_pause_ms']} ms in all", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
