"""Each rule set's heuristics are one typed record registered by rule-set id (``ai.heuristics``)."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

import engine
from ai.greedy import heuristic
from ai.heuristics import Heuristics, heuristics_for, register


def test_every_rule_set_registers_one_frozen_record_under_its_id():
    for rules_id in sorted(engine.RULES):
        found = heuristics_for(rules_id)
        assert isinstance(found, Heuristics), rules_id
        module = importlib.import_module(f"ai.heuristics.{rules_id}")
        assert module.HEURISTICS is found
        assert found.greedy is module.greedy and found.playout is module.playout
        with pytest.raises(dataclasses.FrozenInstanceError):
            found.playout = module.greedy


def test_a_rule_set_registers_its_heuristics_once():
    found = heuristics_for("kozel")
    assert found is not None
    with pytest.raises(ValueError, match="registered already"):
        register("kozel", found)
    assert heuristics_for("kozel") is found


def test_a_rule_set_without_a_heuristics_module_has_none():
    assert heuristics_for("no_such_rules") is None


def test_a_field_looked_up_by_name_must_be_a_function_of_the_record():
    assert heuristic("tiengow", "observe") is heuristics_for("tiengow").observe
    assert heuristic("kozel", "distinct") is None
    for name in ("ROLLOUT_DRAWS", "rollout_draws", "move_class"):
        with pytest.raises(ValueError, match="no function field"):
            heuristic("tiengow_wall", name)
