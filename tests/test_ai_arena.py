"""``tilehouse arena`` (duplicate matches, confidence intervals, engine specs on the command line) and
``tilehouse bench ai``."""

from __future__ import annotations

import gc
import json
import statistics
from collections import Counter

import pytest

import engine
from ai import BadParams, UnknownEngine
from ai.arena import Spec, confidence_interval, lineups
from ai.arena_cli import main, margins_main
from bench.ai import main as bench_main

SMALL_RULES = "tiuu" if "tiuu" in engine.RULES else sorted(engine.RULES)[0]


def test_engine_specs_carry_typed_parameters():
    spec = Spec.parse("ismcts:iterations=500,uct_c=0.5,playout=heuristic")
    assert spec.engine == "ismcts"
    assert dict(spec.params) == {"iterations": 500, "uct_c": 0.5, "playout": "heuristic"}
    assert spec.label == "ismcts:iterations=500,playout=heuristic,uct_c=0.5"
    assert Spec.parse("greedy").label == "greedy"


def test_engine_specs_are_validated_before_any_match():
    with pytest.raises(BadParams) as e:
        Spec.parse("ismcts:iterations=0")
    assert e.value.param == "iterations"
    with pytest.raises(UnknownEngine):
        Spec.parse("alphazero")
    with pytest.raises(ValueError):
        Spec.parse("ismcts:iterations")


@pytest.mark.parametrize(("engines", "players"), [(2, 4), (2, 3), (3, 3), (2, 2), (4, 4)])
def test_duplicate_rotations_give_every_engine_every_seat_equally_often(engines, players):
    specs = [Spec(f"e{i}", ()) for i in range(engines)]
    rotations = lineups(specs, players)
    assert len(set(rotations)) == len(rotations)
    for spec in specs:
        per_seat = Counter(seat for lineup in rotations for seat, s in enumerate(lineup) if s == spec)
        assert len(set(per_seat.values())) == 1 and len(per_seat) == players, per_seat


def test_one_engine_against_three_is_rotated_over_all_four_seats():
    a, b = Spec("a", ()), Spec("b", ())
    rotations = lineups([a, b, b, b], 4)
    assert len(rotations) == 4
    assert sorted(lineup.index(a) for lineup in rotations) == [0, 1, 2, 3]


def test_confidence_interval_is_the_student_t_interval_of_the_mean():
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    mean, lo, hi = confidence_interval(values)
    half = 2.776 * statistics.stdev(values) / 5 ** 0.5
    assert mean == 3.0 and lo == pytest.approx(3.0 - half) and hi == pytest.approx(3.0 + half)
    assert confidence_interval([2.0]) is None


def _run(capsys, *args: str) -> dict:
    assert main([SMALL_RULES, "--engine", "greedy", "--engine", "random", "--sets", "4", "--json", *args]) == 0
    out = capsys.readouterr()
    return {"report": json.loads(out.out), "stderr": out.err}


def test_arena_reports_zero_sum_means_intervals_and_rates(capsys):
    run = _run(capsys)
    report = run["report"]
    assert "4/4 sets" in run["stderr"], "no progress bar on stderr"
    assert report["sets"] == 4
    by_label = {e["label"]: e for e in report["engines"]}
    assert set(by_label) == {"greedy", "random"}
    players = report["players"]
    assert report["matches"] == 4 * len(lineups([Spec("a", ()), Spec("b", ())], players))
    # zero-sum payoffs, each engine in half of the seats: the two means mirror each other
    if players % 2 == 0:
        assert by_label["greedy"]["mean_payoff"] == pytest.approx(-by_label["random"]["mean_payoff"])
    for e in report["engines"]:
        lo, hi = e["ci95"]
        assert lo <= e["mean_payoff"] <= hi
        assert 0.0 <= e["win_rate"] <= 1.0
        assert e["decisions"] > 0 and e["decisions_per_s"] > 0
        assert len(report["per_set_payoffs"][e["label"]]) == 4
    m = report["margin"]
    assert m["engines"] == ["greedy", "random"]
    assert m["mean"] == pytest.approx(by_label["greedy"]["mean_payoff"] - by_label["random"]["mean_payoff"])


def test_arena_results_do_not_depend_on_the_number_of_processes(capsys):
    one = _run(capsys, "--quiet")["report"]
    two = _run(capsys, "--quiet", "--processes", "2")["report"]
    assert one["per_set_payoffs"] == two["per_set_payoffs"]
    assert [(e["label"], e["mean_payoff"], e["win_rate"]) for e in one["engines"]] == \
        [(e["label"], e["mean_payoff"], e["win_rate"]) for e in two["engines"]]


def test_arena_prints_a_readable_table(capsys):
    assert main([SMALL_RULES, "--engine", "greedy", "--engine", "random", "--sets", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mean payoff" in out and "95% CI" in out and "margin greedy - random" in out


def test_arena_refuses_bad_engine_parameters(capsys):
    with pytest.raises(SystemExit) as e:
        main([SMALL_RULES, "--engine", "ismcts:uct_c=-1", "--engine", "greedy"])
    assert e.value.code == 2
    assert "uct_c" in capsys.readouterr().err


def _report(tmp_path, capsys, first: str, seed: int, sets: int) -> str:
    """An arena report of ``first`` against random on ``sets`` sets from ``seed``, written by ``--out``."""
    path = str(tmp_path / f"{first.replace(':', '_')}-{seed}-{sets}.json")
    assert main([SMALL_RULES, "--engine", first, "--engine", "random", "--sets", str(sets), "--seed", str(seed),
                 "--quiet", "--out", path]) == 0
    capsys.readouterr()
    return path


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _margins(capsys, *args: str) -> dict:
    assert margins_main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["margins"]


def test_pooled_reports_give_the_margin_of_one_run_over_all_their_sets(tmp_path, capsys):
    """``tilehouse margins`` (docs/ai.md, "The arena"): set i of a run is played from seed + i, so runs on
    seeds 1..3 and 4..5 pooled are the run on seeds 1..5, to the last digit."""
    whole = _load(_report(tmp_path, capsys, "greedy", 1, 5))
    pooled = _margins(capsys, _report(tmp_path, capsys, "greedy", 4, 2), _report(tmp_path, capsys, "greedy", 1, 3))
    assert pooled["sets"] == 5 and pooled["seeds"] == [1, 5]
    assert pooled["mean"] == pytest.approx(whole["margin"]["mean"])
    assert pooled["ci95"] == pytest.approx(whole["margin"]["ci95"])
    assert margins_main([_report(tmp_path, capsys, "greedy", 1, 3)]) == 0
    assert "3 sets, seeds 1..3" in capsys.readouterr().out


def test_margins_compare_two_arenas_set_by_set_on_the_seeds_both_played(tmp_path, capsys):
    """``--minus``: per set, on the common seeds only, the first arena's margin minus the second's.  The same
    arena on overlapping seeds (1..5 and 3..7) differs by exactly zero on 3..5: the sets are matched by seed,
    not by their place in the report."""
    same = _margins(capsys, _report(tmp_path, capsys, "greedy", 1, 5), "--minus",
                    _report(tmp_path, capsys, "greedy", 3, 5))
    assert same["sets"] == 3 and same["seeds"] == [3, 5]
    assert same["mean"] == 0.0 and same["sd"] == 0.0
    a, b = _report(tmp_path, capsys, "greedy", 1, 4), _report(tmp_path, capsys, "ismcts:iterations=5", 2, 4)
    one, two = (_load(path)["per_set_payoffs"] for path in (a, b))
    # seeds 2..4: the second to fourth sets of the first report, the first to third of the second
    searched = two["ismcts:iterations=5"]
    expected = [(one["greedy"][i] - one["random"][i]) - (searched[i - 1] - two["random"][i - 1]) for i in (1, 2, 3)]
    got = _margins(capsys, a, "--minus", b)
    assert got["sets"] == 3 and got["mean"] == pytest.approx(statistics.fmean(expected))
    assert got["ci95"] == pytest.approx(list(confidence_interval(expected)[1:]))


@pytest.mark.parametrize("case", ["overlap", "engines", "game", "round-robin"])
def test_margins_refuse_reports_that_cannot_be_pooled(tmp_path, capsys, case):
    """A set counted twice, or sets of different engines or games, would give a figure of nothing, and a
    round robin's leaderboard has no single margin: refused with a message and exit status 2."""
    first = _report(tmp_path, capsys, "greedy", 1, 2)
    if case == "overlap":
        args, message = [first, _report(tmp_path, capsys, "greedy", 2, 2)], "seeds 2..2 are in more than one"
    elif case == "engines":
        args, message = [first, _report(tmp_path, capsys, "random", 3, 2)], "different arenas"
    elif case == "round-robin":
        board = str(tmp_path / "board.json")
        pytest.importorskip("openskill")
        assert main([SMALL_RULES, "--round-robin", "--engine", "greedy", "--engine", "random", "--engine",
                     "ismcts:iterations=5", "--sets", "1", "--quiet", "--out", board]) == 0
        capsys.readouterr()
        args, message = [board], "not a two-engine arena report"
    else:
        other = str(tmp_path / "other.json")
        assert main([SMALL_RULES, "--engine", "greedy", "--engine", "random", "--sets", "2", "--option",
                     "games=2", "--quiet", "--out", other]) == 0
        capsys.readouterr()
        args, message = [first, "--minus", other], "different games"
    with pytest.raises(SystemExit) as e:
        margins_main(args)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_bench_ai_can_time_a_fixed_number_of_iterations(capsys):
    assert bench_main([SMALL_RULES, "--iterations", "20", "--playout", "random", "--json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "playout" in line]
    assert row["iterations"] == 20 and row["cpu_seconds"] >= 0


def test_bench_ai_reports_a_fresh_workers_memory_after_its_searches(capsys):
    # RSS of a worker-like process after N searches, with the collections they caused
    assert bench_main([SMALL_RULES, "--rss", "3", "--rss-iterations", "5", "--json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["rules"] == SMALL_RULES and row["searches"] == 3 and row["iterations"] == 5
    assert 0 < row["rss_before_mib"] <= row["peak_rss_mib"] and 0 < row["rss_after_mib"] <= row["peak_rss_mib"]
    assert row["full_collections"] >= 0


def test_bench_ai_reports_iterations_per_second(capsys):
    assert bench_main([SMALL_RULES, "--seconds", "0.05", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows = [r for r in lines if "playout" in r]
    assert [r["playout"] for r in rows] == ["random", "heuristic", "greedy"]
    for r in rows:
        assert r["rules"] == SMALL_RULES and r["iterations"] >= 1 and r["iterations_per_s"] > 0
        assert r["iterations_per_cpu_s"] is None or r["iterations_per_cpu_s"] > 0
    # the collections during those searches, counted and timed through gc.callbacks
    (pauses,) = [r for r in lines if "playout" not in r]
    assert pauses["rules"] == SMALL_RULES and pauses["gc"] == "settled"
    assert pauses["collections"] >= pauses["full_collections"] >= 0
    assert pauses["total_pause_ms"] >= pauses["longest_pause_ms"] >= 0
    assert gc.get_freeze_count() == 0, "the bench leaves the collector as it found it"


def test_fitted_ratings_rank_the_winner_first_and_a_draw_keeps_engines_level():
    from ai.ratings import MU0, SIGMA0, fit

    wins = [{"lineup": ["a", "b", "a", "b"], "payoffs": [2, -2, 1, -1]}] * 5
    ratings = fit(wins, ["a", "b"])
    assert ratings["a"][0] > MU0 > ratings["b"][0]
    assert ratings["a"][1] < SIGMA0 and ratings["b"][1] < SIGMA0
    draws = fit([{"lineup": ["a", "b"], "payoffs": [0, 0]}] * 3, ["a", "b"])
    assert draws["a"] == pytest.approx(draws["b"]) and draws["a"][0] == pytest.approx(MU0)


def test_a_round_robin_of_three_engines_prints_a_leaderboard_with_uncertainty_and_writes_json(tmp_path, capsys):
    out = tmp_path / "ratings.json"
    args = ["tiengow", "--round-robin", "--engine", "random", "--engine", "greedy", "--engine",
            "ismcts:iterations=10", "--sets", "2", "--quiet", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "mu +- 1.96 sigma" in printed and "random - greedy" in printed
    report = json.loads(out.read_text())
    board = report["leaderboard"]
    ordinals = [e["ordinal"] for e in board]
    assert ordinals == sorted(ordinals, reverse=True) and [e["rank"] for e in board] == [1, 2, 3]
    assert {e["label"] for e in board} == {"random", "greedy", "ismcts:iterations=10"}
    # three pairs, two sets each, two rotations of A B A B per set
    assert report["matches"] == 3 * 2 * 2 and len(report["pairs"]) == 3
    for e in board:
        assert e["sigma"] < 25 / 3 and e["interval95"][0] < e["mu"] < e["interval95"][1]
    by_label = {e["label"]: e for e in board}
    # greedy beats random at Tien Gow by about ten points per seat: the ratings must say so
    assert by_label["greedy"]["mu"] > by_label["random"]["mu"]
    # reproducible: the same run gives the same ratings
    assert main([*args[:-1], str(tmp_path / "again.json")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())
    assert [(e["label"], e["mu"], e["sigma"]) for e in again["leaderboard"]] == \
        [(e["label"], e["mu"], e["sigma"]) for e in board]


def test_a_round_robin_needs_two_different_engines(capsys):
    with pytest.raises(SystemExit):
        main(["tiuu", "--round-robin", "--engine", "greedy", "--engine", "greedy", "--quiet"])
    assert "two different engines" in capsys.readouterr().err
