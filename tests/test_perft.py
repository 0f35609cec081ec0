"""Move-generation regression: for fixed seeds, the number of move sequences of depth 1..k from the deal
(``tests/data/perft/*.json``).  A change in move generation shows up as a changed count.

Regenerate a file only for a deliberate rule change:
``python -m bench.perft --write tests/data/perft/<rules>.json <rules> --players N --seed S --depth K``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine

FILES = sorted((Path(__file__).parent / "data" / "perft").glob("*.json"))
CASES = [(f.stem, i, case) for f in FILES for i, case in enumerate(json.loads(f.read_text()))]


def test_every_rule_set_has_perft_data():
    covered = {case["rules"] for _, _, case in CASES}
    assert set(engine.RULES) <= covered, f"no perft data for {sorted(set(engine.RULES) - covered)}"


@pytest.mark.parametrize(("name", "index", "case"), CASES, ids=[f"{n}-{i}" for n, i, _ in CASES])
def test_move_generation_counts_match_the_recorded_perft(name, index, case):
    state = engine.new_game(case["rules"], players=case["players"], seed=case["seed"],
                            options=case.get("options"))
    got = [engine.perft(state, d) for d in range(1, len(case["counts"]) + 1)]
    assert got == case["counts"]
