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


def test_tiengow_greedy_leads_its_weakest_largest_group_and_beats_with_its_cheapest_group():
    """Tien Gow's greedy engine (``ai.heuristics.tiengow.greedy``, tuned by self-play: docs/ai.md, "Tien Gow's
    greedy engine"): a lead is a group of the largest size that does not use the hand's strongest tile (kept
    for the last trick), and of those the weakest; a follower who can beat the trick beats it with the
    cheapest (lowest ranked) winning group, the strongest tile included, and otherwise discards."""
    import random

    from ai.heuristics.tiengow import POWER, greedy

    leads = beats_with_reserve = discards = 0
    for seed in range(60):
        state = engine.new_game("tiengow", players=4, seed=seed)
        rng = random.Random(seed)
        while state.to_move is not None and state.deals_done == 0:
            seat = state.to_move
            legal = state.legal_moves()
            move = greedy(state, seat, random.Random(0))
            hand = state.hands[seat]
            if len(legal) > 1 and not state.cur:
                reserve = max(hand, key=POWER.__getitem__)
                keep = [m for m in legal if reserve not in m.code[1]] or legal
                size = max(len(m.code[1]) for m in keep)
                assert len(move.code[1]) == size and move in keep
                assert move.code[3] == min(m.code[3] for m in keep if len(m.code[1]) == size)
                leads += 1
            elif len(legal) > 1:
                winning = [m for m in legal if m.code[0]]
                if winning:
                    assert move.code[0] and move.code[3] == min(m.code[3] for m in winning)
                    beats_with_reserve += max(hand, key=POWER.__getitem__) in move.code[1]
                else:
                    discards += 1
            state.apply(move if rng.random() < 0.7 else rng.choice(legal))
    assert leads > 100 and beats_with_reserve > 10 and discards > 100, (leads, beats_with_reserve, discards)


@pytest.mark.parametrize("options", [{}, {"early_death": False}], ids=["default", "no-early-death"])
def test_tiengow_greedy_playout_is_the_greedy_engine_move_for_move_and_draw_for_draw(options):
    """``ai.heuristics.tiengow.greedy_playout`` (the search's opponent model, Tien Gow's default since
    2026-12-07, and ``ismcts:playout=greedy``) is ``greedy`` for the seat to move -- the cheapest beat, else
    the weakest discard (docs/rules/tiengow.md: a follower that cannot beat discards face down) -- found
    without listing every discard: the same move and the same generator state, at leads and follows of
    random play, the §7 last single trick included."""
    import random

    from ai.heuristics.tiengow import greedy, greedy_playout

    kinds = {"lead": 0, "beat": 0, "discard": 0}
    for seed in range(600):
        state = engine.new_game("tiengow", players=4, seed=seed, options=options)
        walk = random.Random(seed)
        for _ in range(walk.randrange(40)):
            if state.finished:
                break
            state.apply(walk.choice(state.legal_moves()))
        if state.finished:
            continue
        a_rng, b_rng = random.Random(seed), random.Random(seed)
        a = greedy(state, state.to_move, a_rng)
        b = greedy_playout(state, b_rng)
        assert a.id == b.id and a_rng.getstate() == b_rng.getstate(), (seed, a.id, b.id)
        kinds["lead" if not state.cur else "beat" if a.code[0] else "discard"] += 1
    assert all(kinds.values()), kinds


@pytest.mark.parametrize("model", ["greedy", "greedy_before"])
def test_tiengow_model_playouts_are_their_greedy_engines_move_for_move(model):
    """``greedy_playout_with(...)`` of each greedy model an opponent may play like
    (``ai.heuristics.tiengow.MODELS``: today's ``greedy`` and the engine of before, which leads its strongest
    group and keeps its reserved tile back from beats before the last trick) plays as ``greedy_with(...)``:
    the same move and the same generator state at random positions; ``model_choice``, which reads only the
    hand, its beats and the trick's size, plays the same group (or face-down tiles of the same power)."""
    import random

    from ai.heuristics.tiengow import MODELS, POWER, greedy_playout_with, greedy_with, model_choice
    from engine.tiengow import LEAD, beats_for, situations

    strongest_lead, reserve_beats = MODELS[model]
    engine_move = greedy_with(strongest_lead=strongest_lead, reserve_beats=reserve_beats)
    playout = greedy_playout_with(strongest_lead=strongest_lead, reserve_beats=reserve_beats)
    held_back = 0
    for seed in range(400):
        state = engine.new_game("tiengow", players=4, seed=seed)
        walk = random.Random(seed)
        for _ in range(walk.randrange(31)):
            if state.finished or state.deals_done:
                break
            state.apply(walk.choice(state.legal_moves()))
        if state.finished or state.deals_done:
            continue
        a_rng, b_rng = random.Random(seed), random.Random(seed)
        a = engine_move(state, state.to_move, a_rng)
        b = playout(state, b_rng)
        assert a.id == b.id and a_rng.getstate() == b_rng.getstate(), (seed, a.id, b.id)
        hand = state.hands[state.to_move]
        if len(state.legal_moves()) > 1:
            # the situation of the move about to be made, as the search kit reads it from the history
            after = state.clone()
            after.apply(a)
            sit = situations(after)[-1]
            beats = None if sit == LEAD else beats_for(hand, sit)
            # ties between leads of one size and rank are broken by a draw: model_choice draws from Random(0)
            a = engine_move(state, state.to_move, random.Random(0))
            c = model_choice(hand, beats, len(a.code[1]), MODELS[model])
            same = c.code[0] == a.code[0] and (
                c.code[2:4] == a.code[2:4] if a.code[0] else
                abs(sum(POWER[f] for f in c.code[1]) - sum(POWER[f] for f in a.code[1])) < 1e-9)
            assert same, (seed, a.id, c.id)
            held_back += reserve_beats and bool(state.cur) and not a.code[0] and bool(beats)
    assert held_back > 0 if reserve_beats else held_back == 0
