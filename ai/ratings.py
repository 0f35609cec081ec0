"""Ratings of AI engines from a round robin of duplicate matches: ``tilehouse arena RULES
--round-robin --engine A --engine B --engine C ...``.

Every pair of engines plays ``--sets`` duplicate sets (:mod:`ai.arena`: one seed per set, played in every
rotation of the pair's line-up, so the deal's luck cancels out).  Each match is then one rated game between
two teams, the seats of one engine and the seats of the other, ranked by their mean payoff per seat (equal
means: a draw).  The ratings are fitted with **openskill**'s Plackett-Luce model (Weng & Lin's Bayesian
approximation, the maintained open successor of TrueSkill), processing the matches in a fixed order (pair,
set, rotation) so a run is reproducible.  Each engine gets ``mu`` and ``sigma``; the leaderboard sorts by the
conservative ``ordinal = mu - 3 sigma`` (openskill's) and shows ``mu +- 1.96 sigma`` as the uncertainty,
next to each engine's mean payoff per seat against the field with its 95% interval over the sets and each
pair's margin.

Choice made where the requirements are silent: openskill is in the optional ``agents`` extra, not the base install
(the server never rates); without it ``--round-robin`` stops with an explanation.  A match in which every
seat gets the same payoff still counts, as a draw.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from ai.arena import Job, Progress, Spec, confidence_interval, run_sets, summarize

#: openskill's defaults for a new rating
MU0 = 25.0
SIGMA0 = 25.0 / 3


def _model() -> Any:
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        raise SystemExit("tilehouse arena --round-robin fits ratings with openskill: "
                         "pip install 'tilehouse[agents]'") from None
    return PlackettLuce(mu=MU0, sigma=SIGMA0)


def fit(matches: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``label -> (mu, sigma)`` after rating ``matches`` in order; each match is ``{"lineup": [label per
    seat], "payoffs": [...]}`` between exactly two engines."""
    model = _model()
    ratings = {label: model.rating(mu=MU0, sigma=SIGMA0, name=label) for label in labels}
    for m in matches:
        teams = list(dict.fromkeys(m["lineup"]))
        means = [statistics.fmean(p for s, p in zip(m["lineup"], m["payoffs"], strict=True) if s == t)
                 for t in teams]
        # rank 1 is best; equal means share a rank (a draw)
        ranks = [1 + sum(1 for other in means if other > mine) for mine in means]
        rated = model.rate([[ratings[t]] for t in teams], ranks=ranks)
        for t, team in zip(teams, rated, strict=True):
            ratings[t] = team[0]
    return {label: (float(r.mu), float(r.sigma)) for label, r in ratings.items()}


def round_robin(rules: str, players: int, options: Mapping[str, Any], specs: Sequence[Spec], sets: int,
                seed: int, processes: int, progress: bool = True) -> dict[str, Any]:
    """Play the round robin and fit the ratings: the report ``tilehouse arena --round-robin`` prints."""
    import sys

    labels = list(dict.fromkeys(s.label for s in specs))
    distinct = [next(s for s in specs if s.label == label) for label in labels]
    pairs = list(combinations(distinct, 2))
    jobs = [Job(rules, players, dict(options), pair, seed + i) for pair in pairs for i in range(sets)]
    bar = Progress(len(jobs), sys.stderr, enabled=progress)
    t0 = time.perf_counter()
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {(a.label, b.label): [] for a, b in pairs}
    for r in run_sets(jobs, processes):
        by_pair[(r["pair"][0], r["pair"][1])].append(r)
        bar.step()
    bar.close()
    matches: list[dict[str, Any]] = []
    per_set: dict[str, list[float]] = {label: [] for label in labels}
    pair_rows = []
    for (a, b), results in by_pair.items():
        results.sort(key=lambda r: r["seed"])
        for r in results:
            matches.extend(r["records"])
            for label in (a, b):
                row = r["engines"][label]
                per_set[label].append(row["payoff"] / row["seats"])
        spec_a = next(s for s in distinct if s.label == a)
        spec_b = next(s for s in distinct if s.label == b)
        margin = summarize(results, [spec_a, spec_b])["margin"]
        pair_rows.append({"engines": [a, b], "sets": len(results), "margin": margin["mean"],
                          "ci95": margin["ci95"], "significant": margin["significant"]})
    ratings = fit(matches, labels)
    board: list[dict[str, Any]] = []
    for label in labels:
        mu, sigma = ratings[label]
        ci = confidence_interval(per_set[label])
        spec = next(s for s in distinct if s.label == label)
        board.append({"label": label, "engine": spec.engine, "params": dict(spec.params), "mu": mu,
                      "sigma": sigma, "ordinal": mu - 3 * sigma, "interval95": [mu - 1.96 * sigma, mu + 1.96 * sigma],
                      "mean_payoff": statistics.fmean(per_set[label]) if per_set[label] else None,
                      "ci95": [ci[1], ci[2]] if ci else None,
                      "matches": sum(1 for m in matches if label in m["lineup"])})
    board.sort(key=lambda e: -e["ordinal"])
    for rank, e in enumerate(board, 1):
        e["rank"] = rank
    return {"rules": rules, "players": players, "options": dict(options), "seed": seed, "sets_per_pair": sets,
            "processes": processes, "model": "openskill PlackettLuce (mu0 25, sigma0 25/3), two teams per match",
            "matches": len(matches), "seconds": time.perf_counter() - t0, "leaderboard": board, "pairs": pair_rows}


def render(report: Mapping[str, Any]) -> str:
    lines = [f"round robin: {report['rules']}, {report['players']} players, options {report['options']}, "
             f"{report['sets_per_pair']} duplicate sets per pair ({report['matches']} matches), first seed "
             f"{report['seed']}, {report['seconds']:.1f} s", f"ratings: {report['model']}", ""]
    width = max(len(e["label"]) for e in report["leaderboard"]) + 2
    lines.append(f"{'#':>2s} {'engine':{width}s} {'mu':>7s} {'sigma':>6s}  {'mu +- 1.96 sigma':>17s}  "
                 f"{'ordinal':>8s}  {'payoff/seat':>11s}  {'95% CI':>19s}")
    for e in report["leaderboard"]:
        ci = f"[{e['ci95'][0]:+.3f}, {e['ci95'][1]:+.3f}]" if e["ci95"] else "-"
        pay = f"{e['mean_payoff']:+.3f}" if e["mean_payoff"] is not None else "-"
        lines.append(f"{e['rank']:>2d} {e['label']:{width}s} {e['mu']:7.2f} {e['sigma']:6.2f}  "
                     f"[{e['interval95'][0]:6.2f}, {e['interval95'][1]:6.2f}]  {e['ordinal']:8.2f}  {pay:>11s}  {ci:>19s}")
    lines += ["", "pairs (margin = first minus second, payoff per seat per match):"]
    for p in report["pairs"]:
        ci = f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]" if p["ci95"] else "(one set: no interval)"
        mean = f"{p['margin']:+.3f}" if p["margin"] is not None else "-"
        lines.append(f"  {p['engines'][0]} - {p['engines'][1]}: {mean} {ci}"
                     f"{'  significant' if p['significant'] else ''}")
    return "\n".join(lines)
