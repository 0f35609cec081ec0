"""``tilehouse arena``: the command line of the duplicate arena (:mod:`ai.arena`) and its round robin
(:mod:`ai.ratings`).

``tilehouse arena RULES --engine A --engine B --sets N`` plays duplicate sets and prints each engine's mean
payoff with its 95% interval, win rate, speed and, for two engines, the margin.  ``--round-robin`` plays every
pair of the engines instead and fits ratings; ``--out FILE`` writes either report as JSON; ``--json`` prints
one JSON document on stdout.  The progress bar goes to stderr.

``tilehouse margins A.json B.json ...`` pools the per-set margins of several ``--out`` reports of the same
arena on disjoint seeds (one figure over all their sets); ``--minus C.json ...`` prints, per set on the seeds
both groups played, the first group's margin minus the second's (for example a new engine's margin over
greedy minus today's search's over greedy on the same deals).  Figures that used to come from throwaway
scripts are then one command each.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from typing import Any

import engine
from ai import ENGINES, REFERENCE_ENGINES, arena, ratings
from ai.exceptions import AIError


def _fmt(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "-"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def render(report: dict[str, Any]) -> str:
    lines = [f"arena: {report['rules']}, {report['players']} players, options {report['options']}, "
             f"{report['sets']} duplicate sets ({report['matches']} matches), first seed {report['seed']}, "
             f"{report['seconds']:.1f} s", ""]
    width = max(len(e["label"]) for e in report["engines"]) + 2
    lines.append(f"{'engine':{width}s} {'mean payoff':>12s}  {'95% CI':>21s}  {'win rate':>9s}  {'decisions/s':>11s}")
    for e in report["engines"]:
        ci = f"[{_fmt(e['ci95'][0])}, {_fmt(e['ci95'][1])}]" if e["ci95"] else "-"
        rate = f"{100 * e['win_rate']:.1f}%" if e["win_rate"] is not None else "-"
        dps = f"{e['decisions_per_s']:.1f}" if e["decisions_per_s"] is not None else "-"
        lines.append(f"{e['label']:{width}s} {_fmt(e['mean_payoff']):>12s}  {ci:>21s}  {rate:>9s}  {dps:>11s}")
    m = report.get("margin")
    if m and m["mean"] is not None:
        ci = f"[{_fmt(m['ci95'][0])}, {_fmt(m['ci95'][1])}]" if m["ci95"] else "(no interval: one set)"
        verdict = ("the first is stronger" if m["ci95"] and m["ci95"][0] > 0 else
                   "the second is stronger" if m["ci95"] and m["ci95"][1] < 0 else "no significant difference")
        lines += ["", f"margin {m['engines'][0]} - {m['engines'][1]}: {_fmt(m['mean'])} {ci}  ({verdict})"]
    return "\n".join(lines)


def _parse_option(text: str) -> tuple[str, Any]:
    name, eq, value = text.partition("=")
    if not eq:
        raise argparse.ArgumentTypeError(f"option {text!r} is not name=value")
    return name, arena.parse_value(value)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="tilehouse arena", description="Duplicate matches between AI engines on one rule set.",
        epilog="example: tilehouse arena tiengow --engine ismcts:iterations=1000 --engine greedy --sets 20")
    p.add_argument("rules", choices=sorted(engine.RULES), help="rule set id")
    p.add_argument("--engine", action="append", required=True, metavar="ID[:NAME=VALUE,...]",
                   help=f"an engine and its parameters; repeat (engines: {', '.join(sorted(ENGINES))}; "
                        f"reference, seeing every hand: {', '.join(sorted(REFERENCE_ENGINES))})")
    p.add_argument("--players", type=int, help="number of players (default: the rule set's default)")
    p.add_argument("--option", action="append", default=[], type=_parse_option, metavar="NAME=VALUE",
                   help="a rule option, e.g. deals=2; repeat")
    p.add_argument("--sets", type=int, default=20, help="duplicate sets (each played in every rotation)")
    p.add_argument("--seed", type=int, default=1, help="seed of the first set (set i uses seed + i)")
    p.add_argument("--processes", type=int, default=1, help="worker processes (one set at a time each)")
    p.add_argument("--round-robin", action="store_true",
                   help="every pair of the engines plays --sets duplicate sets; fit openskill ratings and print "
                        "a leaderboard (needs the agents extra: pip install 'tilehouse[agents]')")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--out", metavar="FILE", help="also write the report as JSON to FILE")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    rs = engine.get_rules(a.rules)
    players = a.players or rs.default_players
    options = dict(a.option)
    try:
        specs = tuple(arena.Spec.parse(t) for t in a.engine)
        rs.validate_options(options, players)
    except (AIError, engine.BadOptions, ValueError) as e:
        p.error(str(e))
    if a.sets < 1 or a.processes < 1:
        p.error("--sets and --processes must be at least 1")
    if a.round_robin:
        if len({s.label for s in specs}) < 2:
            p.error("a round robin needs at least two different engines")
        report = ratings.round_robin(a.rules, players, options, specs, a.sets, a.seed, a.processes,
                                     progress=not a.quiet)
        _write(report, a.out)
        print(json.dumps(report, indent=2) if a.json else ratings.render(report))
        return 0
    if len(specs) > players:
        p.error(f"{len(specs)} engines do not fit {players} seats")
    jobs = [arena.Job(a.rules, players, options, specs, a.seed + i) for i in range(a.sets)]
    progress = arena.Progress(len(jobs), sys.stderr, enabled=not a.quiet)
    t0 = time.perf_counter()
    results = []
    for r in arena.run_sets(jobs, a.processes):
        results.append(r)
        progress.step()
    progress.close()
    report = {"rules": a.rules, "players": players, "options": options, "seed": a.seed,
              "processes": a.processes, "seconds": time.perf_counter() - t0, **arena.summarize(results, specs)}
    _write(report, a.out)
    print(json.dumps(report, indent=2) if a.json else render(report))
    return 0


def render_margins(out: Mapping[str, Any]) -> str:
    d = out["margins"]
    ci = f"[{_fmt(d['ci95'][0])}, {_fmt(d['ci95'][1])}]" if d["ci95"] else "(no interval: one set)"
    verdict = ("above zero" if d["ci95"] and d["ci95"][0] > 0 else
               "below zero" if d["ci95"] and d["ci95"][1] < 0 else "not separated from zero")
    name = " - ".join(out["engines"])
    if out.get("minus"):
        name = f"({name}) - ({' - '.join(out['minus'])}), per set"
    return (f"{out['rules']}: {name}\n{d['sets']} sets, seeds {d['seeds'][0]}..{d['seeds'][1]}: "
            f"{_fmt(d['mean'])} {ci}, per-set sd {_fmt(d['sd'], signed=False)}  ({verdict})")


def margins_main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="tilehouse margins",
        description="Pool the per-set margins of arena reports (tilehouse arena --out FILE) of the same arena on "
                    "disjoint seeds; with --minus, the per-set difference of two such margins on common seeds.",
        epilog="example: tilehouse margins new-vs-greedy.json --minus today-vs-greedy.json")
    p.add_argument("reports", nargs="+", metavar="FILE", help="two-engine arena reports to pool")
    p.add_argument("--minus", nargs="+", default=[], metavar="FILE",
                   help="reports whose pooled margin is subtracted set by set, on the seeds both played")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    a = p.parse_args(argv)
    try:
        first = [_read(f) for f in a.reports]
        second = [_read(f) for f in a.minus]
        margins = arena.paired(first, second) if second else arena.pool(first)
    except (OSError, ValueError) as e:  # arena.ReportError and json's errors are ValueErrors
        p.error(str(e))
    out = {"rules": first[0]["rules"], "engines": first[0]["margin"]["engines"],
           "minus": second[0]["margin"]["engines"] if second else None, "margins": arena.describe(margins)}
    print(json.dumps(out, indent=2) if a.json else render_margins(out))
    return 0


def _read(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    if not isinstance(report, dict):
        raise arena.ReportError(f"{path}: not an arena report")
    return report


def _write(report: Mapping[str, Any], path: str | None) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    raise SystemExit(main())
