"""``tilehouse bench regret``: an engine's choices judged by a long search's values at positions of real
deals (bench/regret.py).  The rules of the positions are Tiu U's (docs/rules/tiuu.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from api_support import ROOT

import ai
import engine
from ai.arena import Spec, deal_decisions
from bench import regret

REFERENCE_ITERATIONS = 400


def _positions(count: int = 8) -> list[dict]:
    return list(regret.make_positions("tiuu", 2, Spec.parse("greedy"), count, 3, REFERENCE_ITERATIONS))


def test_positions_are_whole_deals_of_real_choices_with_a_value_for_every_legal_move() -> None:
    records = _positions()
    assert len(records) >= 8
    by_set: dict[int, list[int]] = {}
    for r in records:
        state = engine.load_state(r["state"])
        moves = {m.id for m in state.legal_moves()}
        assert len(moves) > 1  # only decisions with a choice are recorded
        assert r["seat"] == state.to_move
        # root=uniform tries every root move once the iterations reach the moves
        assert set(r["values"]) == moves
        by_set.setdefault(r["set"], []).append(r["ply"])
    # the deal in progress is finished: the last recorded deal has every choice of greedy's play of it
    last = max(by_set)
    choices = [ply for ply, (state, _m, _s, _mv) in enumerate(deal_decisions("tiuu", [Spec.parse("greedy")] * 2, last))
               if len(state.legal_moves()) > 1]
    assert by_set[last] == choices


def test_regret_is_the_best_value_less_the_value_of_the_move_played() -> None:
    records = _positions(4)
    # the reference search itself, with the seed the records were valued with, plays a move of the best value
    reference = [dict(r) for r in records]
    for r in reference:
        state = engine.load_state(r["state"])
        found = ai.decide("ismcts", state, r["seat"], {**regret.REFERENCE, "iterations": REFERENCE_ITERATIONS},
                          seed=regret.reference_seed(r["set"], r["ply"]))
        assert r["values"][found.move.id] == max(r["values"].values())
    lost = regret.regrets(records, Spec.parse("random"), repeats=3)
    assert all(x >= 0 for x in lost)
    # a position where every move is valued alike costs nothing; one with a spread costs random play something
    assert sum(lost) > 0
    for r, x in zip(records, lost, strict=True):
        spread = max(r["values"].values()) - min(r["values"].values())
        assert x <= spread + 1e-9


def test_command_writes_the_positions_and_judges_engines_on_them_paired(tmp_path) -> None:
    out = tmp_path / "positions.jsonl"
    cmd = [sys.executable, "-m", "service.cli", "bench", "regret", "tiuu", "--positions", str(out), "--make", "6",
           "--play", "greedy", "--reference-iterations", str(REFERENCE_ITERATIONS), "--engine", "greedy",
           "--engine", "random", "--repeats", "2", "--json"]
    made = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    rows = [json.loads(line) for line in made.stdout.splitlines()]
    assert [r["engine"] for r in rows] == ["greedy", "random"]
    assert "minus_first" not in rows[0]
    # the paired difference of means is the difference of the means (up to the rounding of the report)
    assert abs(rows[1]["minus_first"][0] - (rows[1]["regret"] - rows[0]["regret"])) < 1e-3
    # read again without --make: the same positions, the same figures
    again = subprocess.run(cmd[:cmd.index("--make")] + cmd[cmd.index("--engine"):], cwd=ROOT, capture_output=True,
                           text=True, timeout=300, check=True)
    assert [json.loads(line) for line in again.stdout.splitlines()] == rows
    assert rows[0]["positions"] == len(out.read_text().splitlines())


def test_a_move_the_reference_did_not_value_is_refused_not_guessed() -> None:
    """A rule set whose root is paired (the wall game) values one move per class: the bench must not judge
    a move it has no value for (here a Tiu U record with all but one value taken away)."""
    record = dict(_positions(1)[0])
    kept = next(iter(record["values"]))
    record["values"] = {kept: record["values"][kept]}
    with pytest.raises(ValueError, match="did not value"):
        regret.regrets([record], Spec.parse("random"), repeats=20)
