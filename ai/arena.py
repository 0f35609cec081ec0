"""Duplicate matches between AI engines on one rule set, and how strong each engine is (the library behind
``tilehouse arena``, whose command line is :mod:`ai.arena_cli`).

Duplicate format (as in duplicate bridge): a *set* is one seed -- one sequence of deals -- played once per
rotation of the line-up over the seats, so every engine plays every seat's tiles of every deal equally
often and the luck of the deal cancels out.  The line-up is the ``--engine`` list repeated to the number of
players (``--engine A --engine B`` on 4 seats is ``A B A B``; give four ``--engine`` for ``A B B B``);
rotations that give the same assignment are played once, which keeps every seat balanced.

Per engine (engines with the same id and parameters are one engine) the arena reports

* the mean payoff per seat per match (payoffs are the rule set's zero-sum ``result()["payoffs"]``), with a
  95% confidence interval over the duplicate sets (Student t; the set is the independent unit);
* the win rate: the share of its seats that finished with the highest payoff of the match (a tie
  on top shares the credit; a match where every seat has the same payoff has no winner);
* decisions per second of its own thinking time.

With exactly two engines it also reports the margin (first engine minus second) with its interval: the
first engine is stronger when the whole interval is above zero.

Engines take parameters on the command line: ``--engine ismcts:iterations=1000,playout=heuristic``.  Besides
the served engines the arena seats the reference engines (``ai.REFERENCE_ENGINES``: ``perfect`` sees every
hand), which it alone hands the true state (``ai.decide_on_true_state``).
Every decision goes through ``ai.decide`` with a seed derived from the set and the move number, so a run
is reproducible (time budgets aside) whatever ``--processes`` is.  :mod:`ai.ratings` builds the round
robin on this module.  The progress bar is hand-written (no dependency) and goes to stderr.
"""

from __future__ import annotations

import math
import multiprocessing
import statistics
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import engine
from ai import REFERENCE_ENGINES, arena_engine, decide_on_true_state
from ai import decide as ai_decide
from ai.ismcts import settle_gc
from engine.game import Move, State

#: two-sided 95% Student t quantiles for 1..30 degrees of freedom (beyond: the normal 1.96)
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042)


def t95(df: int) -> float:
    return _T95[df - 1] if df <= len(_T95) else 1.96


def confidence_interval(values: Sequence[float]) -> tuple[float, float, float] | None:
    """``(mean, low, high)`` of the 95% interval of the mean, or ``None`` for fewer than two values."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


# --------------------------------------------------------------------------- engine specs

def parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Spec:
    """An engine with its parameters, as named on the command line."""

    engine: str
    params: tuple[tuple[str, Any], ...]

    @property
    def label(self) -> str:
        if not self.params:
            return self.engine
        return self.engine + ":" + ",".join(f"{k}={v}" for k, v in self.params)

    @classmethod
    def parse(cls, text: str) -> Spec:
        """``id`` or ``id:name=value,name=value``; validated against the engine's schema."""
        engine_id, _, rest = text.partition(":")
        params: dict[str, Any] = {}
        for item in filter(None, rest.split(",")):
            name, eq, value = item.partition("=")
            if not eq or not name:
                raise ValueError(f"engine parameter {item!r} is not name=value")
            params[name.strip()] = parse_value(value.strip())
        arena_engine(engine_id).validate(params)  # UnknownEngine / BadParams now, not in a worker later
        return cls(engine_id, tuple(sorted(params.items())))


def lineups(specs: Sequence[Spec], players: int) -> list[tuple[Spec, ...]]:
    """The distinct rotations of the line-up (the specs repeated to ``players`` seats)."""
    base = [specs[i % len(specs)] for i in range(players)]
    out: list[tuple[Spec, ...]] = []
    for r in range(players):
        rotated = tuple(base[(s + r) % players] for s in range(players))
        if rotated not in out:
            out.append(rotated)
    return out


# --------------------------------------------------------------------------- playing

@dataclass(frozen=True)
class Job:
    rules: str
    players: int
    options: Mapping[str, Any]
    specs: tuple[Spec, ...]
    seed: int


def decision_seed(set_seed: int, ply: int) -> int:
    # distinct, reproducible seeds per decision; the same in every rotation, so engines meet the same luck
    return (set_seed * 1_000_003 + ply) % (1 << 62)


def deal_decisions(rules_id: str, lineup: Sequence[Spec], seed: int) -> Iterator[tuple[State, int, Spec, Move]]:
    """Every decision of one deal (``seed``) with ``lineup`` in the seats, as the arena plays it
    (``ai.decide``, decisions seeded from the set and the move number): the position before the move (valid
    until the next step), the mover, its engine and the move.  For the benches that study decisions
    (``tilehouse bench inference``, ``tilehouse bench regret``)."""
    state = engine.new_game(rules_id, players=len(lineup), seed=seed)
    deal = state.deals_done
    ply = 0
    while not state.finished and state.deals_done == deal:
        mover = state.to_move
        assert mover is not None
        spec = lineup[mover]
        move = ai_decide(spec.engine, state, mover, dict(spec.params), decision_seed(seed, ply)).move
        yield state, mover, spec, move
        state.apply(move)
        ply += 1


def play_set(job: Job) -> dict[str, Any]:
    """Play one duplicate set; per engine label: payoff sum, seats played, win credit, decisions
    and thinking seconds."""
    acc: dict[str, dict[str, float]] = {}
    records: list[dict[str, Any]] = []
    for lineup in lineups(job.specs, job.players):
        state = engine.new_game(job.rules, players=job.players, seed=job.seed, options=dict(job.options))
        ply = 0
        while not state.finished:
            seat = state.to_move
            assert seat is not None
            spec = lineup[seat]
            t0 = time.perf_counter()
            # a reference engine (it sees every hand) is handed the true state, explicitly; every other engine
            # sees only a determinization of the seat's information set
            decide = decide_on_true_state if spec.engine in REFERENCE_ENGINES else ai_decide
            d = decide(spec.engine, state, seat, dict(spec.params), decision_seed(job.seed, ply))
            spent = time.perf_counter() - t0
            a = acc.setdefault(spec.label, {"payoff": 0.0, "seats": 0, "wins": 0.0, "decisions": 0,
                                            "seconds": 0.0})
            a["decisions"] += 1
            a["seconds"] += spent
            state.apply(d.move)
            ply += 1
        payoffs = state.result()["payoffs"]
        records.append({"lineup": [spec.label for spec in lineup], "payoffs": list(payoffs)})
        top = max(payoffs)
        winners = [s for s, p in enumerate(payoffs) if p == top] if top > min(payoffs) else []
        for seat, spec in enumerate(lineup):
            a = acc.setdefault(spec.label, {"payoff": 0.0, "seats": 0, "wins": 0.0, "decisions": 0,
                                            "seconds": 0.0})
            a["payoff"] += payoffs[seat]
            a["seats"] += 1
            if seat in winners:
                a["wins"] += 1.0 / len(winners)
    return {"seed": job.seed, "engines": acc, "matches": len(lineups(job.specs, job.players)),
            "pair": [spec.label for spec in dict.fromkeys(job.specs)], "records": records}


def run_sets(jobs: list[Job], processes: int) -> Iterator[dict[str, Any]]:
    if processes <= 1:
        for job in jobs:
            yield play_set(job)
        return
    # each pool process settles its garbage collector as a worker does
    with multiprocessing.get_context().Pool(processes, initializer=settle_gc) as pool:
        yield from pool.imap_unordered(play_set, jobs, chunksize=1)


class Progress:
    """A one-line progress bar on a terminal stream, redrawn in place."""

    def __init__(self, total: int, stream: TextIO, enabled: bool = True, width: int = 30) -> None:
        self.total, self.stream, self.enabled, self.width = total, stream, enabled, width
        self.done = 0
        self.t0 = time.perf_counter()

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.t0
        filled = self.width * self.done // max(self.total, 1)
        eta = elapsed / self.done * (self.total - self.done)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} sets"
                          f"  {elapsed:6.0f}s elapsed  ~{eta:5.0f}s left ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def summarize(results: list[dict[str, Any]], specs: Sequence[Spec]) -> dict[str, Any]:
    results = sorted(results, key=lambda r: r["seed"])
    labels = list(dict.fromkeys(s.label for s in specs))
    engines_out = []
    per_set: dict[str, list[float]] = {}
    for label in labels:
        rows = [r["engines"][label] for r in results]
        per_set[label] = [row["payoff"] / row["seats"] for row in rows]
        seats = sum(row["seats"] for row in rows)
        decisions = sum(row["decisions"] for row in rows)
        seconds = sum(row["seconds"] for row in rows)
        ci = confidence_interval(per_set[label])
        spec = next(s for s in specs if s.label == label)
        engines_out.append({
            "label": label, "engine": spec.engine, "params": dict(spec.params),
            "mean_payoff": statistics.fmean(per_set[label]) if per_set[label] else None,
            "ci95": [ci[1], ci[2]] if ci else None,
            "win_rate": sum(row["wins"] for row in rows) / seats if seats else None,
            "seats_played": seats, "decisions": decisions,
            "decisions_per_s": decisions / seconds if seconds > 0 else None,
        })
    margin = None
    if len(labels) == 2:
        diffs = [a - b for a, b in zip(per_set[labels[0]], per_set[labels[1]], strict=True)]
        ci = confidence_interval(diffs)
        margin = {"engines": labels, "mean": statistics.fmean(diffs) if diffs else None,
                  "ci95": [ci[1], ci[2]] if ci else None,
                  "significant": bool(ci and (ci[1] > 0 or ci[2] < 0))}
    return {"sets": len(results), "matches": sum(r["matches"] for r in results), "engines": engines_out,
            "margin": margin, "per_set_payoffs": per_set}


# --------------------------------------------------------------------------- pooling reports

class ReportError(ValueError):
    """Arena reports that cannot be pooled or compared (``set_margins``, ``pool``, ``paired``)."""


def set_margins(report: Mapping[str, Any]) -> dict[int, float]:
    """The per-set margins of a two-engine report (``summarize`` with the run's ``seed``, as ``tilehouse
    arena --out`` writes it), keyed by each set's seed: the first engine's mean payoff per seat minus the
    second's.  Set ``i`` of a run was played from seed ``seed + i`` (the sets are listed in seed order)."""
    try:
        first, second = report["margin"]["engines"]
        a, b = report["per_set_payoffs"][first], report["per_set_payoffs"][second]
        return {int(report["seed"]) + i: float(x) - float(y) for i, (x, y) in enumerate(zip(a, b, strict=True))}
    except (KeyError, TypeError, ValueError) as e:
        raise ReportError("not a two-engine arena report with per-set payoffs (tilehouse arena --out FILE): "
                          f"{type(e).__name__} {e}") from e


def _game(report: Mapping[str, Any]) -> tuple[Any, ...]:
    """What must agree for two reports' sets to be pooled: the game and the engines, in order."""
    return (report.get("rules"), report.get("players"), report.get("options"),
            tuple((report.get("margin") or {}).get("engines") or ()))


def pool(reports: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """The per-set margins of several runs of the same arena (the same rule set, players, options and
    engines in the same order) on disjoint seeds, by seed.  A set played twice would count twice, so
    overlapping seeds are refused, as are reports of different arenas."""
    if not reports:
        raise ReportError("no report to pool")
    game = _game(reports[0])
    pooled: dict[int, float] = {}
    for report in reports:
        if _game(report) != game:
            raise ReportError(f"reports of different arenas cannot be pooled: {game[0]} {list(game[3])} and "
                              f"{report.get('rules')} {(report.get('margin') or {}).get('engines')}")
        margins = set_margins(report)
        twice = sorted(pooled.keys() & margins.keys())
        if twice:
            raise ReportError(f"seeds {twice[0]}..{twice[-1]} are in more than one report ({len(twice)} sets)")
        pooled.update(margins)
    return dict(sorted(pooled.items()))


def paired(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Per set, the pooled margin of the ``first`` reports minus that of the ``second`` ones, on the seeds
    both played (for example an engine's margin over greedy minus today's search's over greedy on the same
    deals: the deals' luck cancels).  Both must be of the same game (rule set, players and options)."""
    if first and second and _game(first[0])[:3] != _game(second[0])[:3]:
        raise ReportError(f"reports of different games cannot be compared: {first[0].get('rules')} "
                          f"{first[0].get('players')} players and {second[0].get('rules')} "
                          f"{second[0].get('players')} players, or other options")
    a, b = pool(first), pool(second)
    common = sorted(a.keys() & b.keys())
    if not common:
        raise ReportError("the two groups of reports share no seed")
    return {s: a[s] - b[s] for s in common}


def describe(margins: Mapping[int, float]) -> dict[str, Any]:
    """Sets, first and last seed, mean with its 95% interval (``confidence_interval``) and the per-set
    standard deviation of some per-set margins."""
    values = list(margins.values())
    ci = confidence_interval(values)
    return {"sets": len(values), "seeds": [min(margins), max(margins)] if margins else None,
            "mean": statistics.fmean(values) if values else None, "ci95": [ci[1], ci[2]] if ci else None,
            "sd": statistics.stdev(values) if len(values) > 1 else None}
