"""``tilehouse bench variants``: screening variants of the shipped engines, seated by the arena of that
bench's process only (bench/variants.py)."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable

import pytest
from api_support import ROOT

import ai
import engine
from bench import kozel_value
from bench.variants import (
    GreedyKozel,
    GreedyTiebreak,
    GreedyTienGow,
    GreedyWall,
    KozelPlayout,
    KozelValue,
    PairedRoot,
    PairedTree,
    Pimc,
    SoftDiscards,
    TienGowPlayout,
    TiuUBefore,
    TiuUPlayout,
    TypedOpponents,
    WallPlayout,
)

PARAMS = {"iterations": 200, "time_ms": 600_000}


def _greedy_positions(rules_id: str, players: int, count: int, plies: Callable[[int], int]
                      ) -> list[tuple[engine.State, int]]:
    """Positions of greedy play where the seat to move has a real choice: the ``seed``-th match of
    ``rules_id`` (from seed 0 up) after ``plies(seed)`` greedy moves, until ``count`` such positions."""
    out = []
    seed = 0
    while len(out) < count:
        state = engine.new_game(rules_id, players=players, seed=seed)
        for ply in range(plies(seed)):
            if state.to_move is None:
                break
            state.apply(ai.decide("greedy", state, state.to_move, {}, seed=ply).move)
        seed += 1
        if state.to_move is not None and len(state.legal_moves()) > 1:
            out.append((state, state.to_move))
    return out


def _positions(count: int) -> list[tuple[engine.State, int]]:
    """Tien Gow positions of greedy play where the seat to move has a real choice."""
    return _greedy_positions("tiengow", 4, count, lambda seed: 5 + seed % 9)


def _run(eng: ai.Engine, state: engine.State, seat: int, extra: dict, seed: int = 3) -> ai.Decision:
    """``eng``'s decision on a determinization of ``state`` for ``seat``, as ``ai.decide`` makes one."""
    world = state.determinize(seat, random.Random(seed))
    return eng.choose(world, seat, eng.validate({**PARAMS, **extra}), random.Random(f"ai/{seed}"))


def _harness_check(variant: ai.Engine, positions: list[tuple[engine.State, int]], same: dict, other: dict,
                   plain: dict | None = None) -> int:
    """A variant's harness check: with the parameters ``same`` it is ``ismcts`` (with ``plain``) node for
    node, the same move and statistics at every position; returns at how many positions the parameters
    ``other`` change the statistics (a test asserts some)."""
    search = ai.ENGINES["ismcts"]
    differ = 0
    for state, seat in positions:
        reference = _run(search, state, seat, plain or {}, seed=5)
        found = _run(variant, state, seat, same, seed=5)
        assert found.move.id == reference.move.id
        assert found.stats["candidates"] == reference.stats["candidates"]
        changed = _run(variant, state, seat, other, seed=5)
        assert changed.stats["iterations"] == PARAMS["iterations"]
        differ += changed.stats["candidates"] != reference.stats["candidates"]
    return differ


def _choose(variant: GreedyTiebreak, state: engine.State, seat: int, tiebreak: float) -> ai.Decision:
    return _run(variant, state, seat, {"tiebreak": tiebreak})


def test_the_greedy_tiebreak_variant_defers_to_greedy_only_in_a_near_tie():
    # the variant's rule: greedy's move replaces the search's choice when its mean reward is within
    # ``tiebreak`` of the best one (and it has a tenth of the visits); with no margin it is the search itself
    variant = GreedyTiebreak()
    search = ai.ENGINES["ismcts"]
    deferred = 0
    for state, seat in _positions(12):
        plain = _run(search, state, seat, {})
        greedy_move = ai.greedy.heuristics_for("tiengow").greedy(state, seat, random.Random(0))
        assert _choose(variant, state, seat, 0.0).move.id == plain.move.id or (
            plain.stats["candidates"][1]["mean_reward"] == plain.stats["candidates"][0]["mean_reward"])
        wide = _choose(variant, state, seat, 1.0)
        if wide.stats.get("tiebreak"):
            deferred += 1
            assert wide.move.id == greedy_move.id != plain.move.id
        else:
            assert wide.move.id == plain.move.id
    assert deferred > 0


def test_the_soft_discards_variant_at_chance_one_is_the_search_itself_and_below_it_searches_other_worlds():
    # the variant's harness check: with every discard the weakest tiles (chance 1) its tree is ismcts's,
    # node for node, so the decisions and statistics are identical; with chance 0 the other seats' discards
    # in the tree differ, and so do the statistics.  The variant's model is the tree's own play of the
    # other seats (``opponents=tree``): Tien Gow's default plays them by the greedy model instead
    tree = {"opponents": "tree"}
    assert _harness_check(SoftDiscards(), _positions(8), {**tree, "weakest": 1.0}, {**tree, "weakest": 0.0},
                          plain=tree) > 0


def _kozel_positions(count: int) -> list[tuple[engine.State, int]]:
    """Two-player Kozel positions of greedy play where the seat to move has a real choice."""
    return _greedy_positions("kozel", 2, count, lambda seed: 3 + seed % 6)


def test_the_paired_root_variant_searches_every_legal_move_on_common_worlds():
    # the variant's rule: at a rule set without a paired root of its own (Kozel) every legal move is a
    # candidate of sequential halving (stats["search"] "paired"), each played in the first round's worlds,
    # and the budget is counted in playouts; the plain search of the same position is a tree
    variant = PairedRoot()
    checked = 0
    for state, seat in _kozel_positions(12):
        paired = _run(variant, state, seat, {"iterations": 60})
        plain = _run(ai.ENGINES["ismcts"], state, seat, {"iterations": 60})
        assert paired.stats["search"] == "paired" and "search" not in plain.stats
        assert paired.stats["iterations"] == 60
        assert {c["move"] for c in paired.stats["candidates"]} == {m.id for m in state.legal_moves()}
        assert all(c["visits"] >= 1 for c in paired.stats["candidates"])  # all met the first worlds
        checked += 1
    assert checked > 5


def test_the_kozel_playout_variant_with_the_shipped_weights_is_the_greedy_playout_search():
    # the variant's harness check: with ai.heuristics.kozel.SCORE's weights (its defaults) it is
    # ismcts:playout=greedy node for node; a block bonus (the next seat left without a match) changes the
    # playouts, so the statistics differ
    assert _harness_check(KozelPlayout(), _kozel_positions(8), {}, {"block": 20.0}, {"playout": "greedy"}) > 0


def test_the_kozel_greedy_variant_is_greedy_with_the_shipped_weights_and_the_shedding_greedy_without_them():
    # the variant's harness check: with ai.heuristics.kozel.SENSE's weights (its defaults) it plays as
    # ``greedy``; with both at 0 as the shedding greedy of before; positions where the two differ exist
    from ai.heuristics.kozel import greedy, shedding_greedy

    variant = GreedyKozel()
    differ = 0
    for state, seat in _kozel_positions(40):
        moves = [variant.choose(state, seat, variant.validate(p), random.Random(7)).move.id
                 for p in ({}, {"shut": 0.0, "scarce": 0.0})]
        assert moves == [greedy(state, seat, random.Random(7)).id, shedding_greedy(state, seat, random.Random(7)).id]
        differ += moves[0] != moves[1]
    assert differ > 0


def _wall_positions(count: int, players: int = 4) -> list[tuple[engine.State, int]]:
    """Wall-game positions of greedy play where the seat to move has a real choice, leads and follows."""
    return _greedy_positions("tiengow_wall", players, count, lambda seed: seed % 13)


def test_the_wall_greedy_variant_is_greedy_with_the_shipped_weights_and_the_greedy_of_before_without_them():
    # the variant's harness check: with its defaults it plays as ``greedy``; with middle=false as the
    # greedy engine of before 2026-12-06, whose rules are checked here: without a sure tile it leads the
    # weakest single, and it takes a single column whenever a tile of its hand goes on top (an open column
    # counts more than any tile, as it does today)
    from ai.heuristics.tiengow_wall import CHEAPEST, CHEAPEST_ON, STRENGTH, _unseen_tops, greedy
    from engine.tiengow_wall import CIVIL

    variant = GreedyWall()
    before = {"middle": False}
    differ = leads = follows = 0
    for state, seat in _wall_positions(300) + _wall_positions(100, players=3):
        moves = [variant.choose(state, seat, variant.validate(p), random.Random(7)).move for p in ({}, before)]
        assert moves[0].id == greedy(state, seat, random.Random(7)).id
        differ += moves[0] != moves[1]
        hand = state.hands[seat]
        if not state.cols:
            tops = _unseen_tops(state, seat)
            if not any(STRENGTH[f] >= tops[CIVIL[f]] for f in hand):
                assert moves[1].code == (next(f for f in CHEAPEST if f in hand),)
                leads += 1
        elif len(state.cols) == 1:
            beat = next((f for f in CHEAPEST_ON[state.cols[0][-1] >> 2] if f in hand), None)
            assert moves[1].code == (beat if beat is not None else next(f for f in CHEAPEST if f in hand),)
            follows += beat is not None
    assert differ > 0 and leads > 0 and follows > 0


def test_the_tiengow_greedy_variant_is_greedy_by_default_and_the_greedy_of_before_with_both_rules():
    # the variant's harness check: with its defaults it plays as ``greedy``; with strongest_lead and
    # reserve_beats as the greedy engine of before 2026-12-06, whose two rules are checked here: a lead is
    # the strongest group of the largest size without the hand's strongest tile, and before the last trick
    # a beat never uses that tile
    from ai.heuristics.tiengow import POWER, greedy

    variant = GreedyTienGow()
    before = {"strongest_lead": True, "reserve_beats": True}
    differ = leads = beats = 0
    for state, seat in _positions(200):
        moves = [variant.choose(state, seat, variant.validate(p), random.Random(7)).move for p in ({}, before)]
        assert moves[0].id == greedy(state, seat, random.Random(7)).id
        differ += moves[0] != moves[1]
        hand = state.hands[seat]
        reserve = max(hand, key=POWER.__getitem__)
        legal = state.legal_moves()
        if not state.cur and len(legal) > 1:
            keep = [m for m in legal if reserve not in m.code[1]] or legal
            size = max(len(m.code[1]) for m in keep)
            assert len(moves[1].code[1]) == size
            assert moves[1].code[3] == max(m.code[3] for m in keep if len(m.code[1]) == size)
            leads += 1
        elif moves[1].code[0] and len(hand) > len(moves[1].code[1]) and len(legal) > 1:
            assert reserve not in moves[1].code[1]
            beats += 1
    assert differ > 0 and leads > 0 and beats > 0


def test_the_wall_playout_variant_with_the_shipped_weights_is_the_search_itself():
    # the variant's harness check: with its defaults it is ismcts node for node in the wall game (the paired
    # root); the playouts of before 2026-12-06 (middle=false) change the statistics, and so do playouts
    # without random moves (explore=0, the search of before 2026-12-07)
    assert _harness_check(WallPlayout(), _wall_positions(6), {}, {"middle": False}) > 0
    assert _harness_check(WallPlayout(), _wall_positions(6), {"explore": 0.1}, {"explore": 0.0}) > 0


def test_the_tiengow_playout_variant_with_the_shipped_playout_is_the_search_itself():
    # the variant's harness check: with its defaults (greedy's leads) it is ismcts node for node at Tien Gow;
    # the uniform leads of before the sixteenth look change the statistics
    assert _harness_check(TienGowPlayout(), _positions(6), {}, {"lead": "uniform"}) > 0


def test_the_tiuu_playout_variant_with_the_shipped_weights_is_the_search_itself():
    # the variant's harness check: with its defaults (the shipped exploration and growth values) it is ismcts
    # node for node at Tiu U; a playout without random moves changes the statistics
    positions = _greedy_positions("tiuu", 2, 6, lambda seed: 3 + seed % 7)
    assert _harness_check(TiuUPlayout(), positions, {}, {"explore": 0.0}) > 0


def test_the_tiuu_before_variant_is_the_search_itself_at_a_fixed_budget():
    # the variant keeps point 5's bar reproducible: Tiu U's search at the cost of f020eca (its rollout, and the
    # unseen tiles counted for every world). At a fixed budget it plays the same moves with the same draws as
    # ismcts, two and three players, whatever its cost; only at equal time does it search less
    for players in (2, 3):
        positions = _greedy_positions("tiuu", players, 6, lambda seed: 3 + seed % 11)
        for state, seat in positions:
            found = _run(TiuUBefore(), state, seat, {}, seed=5)
            reference = _run(ai.ENGINES["ismcts"], state, seat, {}, seed=5)
            assert found.move.id == reference.move.id
            assert found.stats["candidates"] == reference.stats["candidates"]
            assert found.stats["iterations"] == PARAMS["iterations"]


def _mixed_positions(count: int) -> list[tuple[engine.State, int]]:
    """Tien Gow positions where seats 1 and 3 have played the greedy engine of before and seats 0 and 2
    today's, 10 to 21 moves in, the seat to move with a real choice."""
    from ai.heuristics.tiengow import greedy, greedy_with

    before = greedy_with(strongest_lead=True, reserve_beats=True)
    out = []
    seed = 0
    while len(out) < count:
        state = engine.new_game("tiengow", players=4, seed=seed)
        for ply in range(10 + seed % 12):
            mover = state.to_move
            state.apply((before if mover % 2 else greedy)(state, mover, random.Random(ply)))
        seed += 1
        if len(state.legal_moves()) > 1:
            out.append((state, state.to_move))
    return out


def test_the_typed_opponents_variant_with_one_model_is_the_search_itself_and_plays_seats_by_their_type():
    # the variant's harness check: with today's greedy as the only model it is ismcts node for node; with the
    # greedy engine of before among the models, seats that play like it are found and played by it in the
    # tree (the statistics name the types), which changes the search
    positions = _mixed_positions(6)
    assert _harness_check(TypedOpponents(), positions, {"models": "greedy"}, {}, plain={"opponents": "greedy"}) > 0
    found = 0
    for state, seat in positions:
        decision = _run(TypedOpponents(), state, seat, {"inference_eps": 0.1})
        assert decision.stats["opponents"] == "typed"
        types = decision.stats["inference"]["types"]
        found += sum(m == ("greedy_before" if int(p) % 2 else "greedy") for p, m in types.items())
    assert found >= 12  # of 18 seats
    # one model other than today's: every other seat is played by it
    state, seat = positions[0]
    assert _run(TypedOpponents(), state, seat, {"models": "greedy_before"}).stats["opponents"] == "greedy_before"
    with pytest.raises(ai.BadParams):
        TypedOpponents().choose(positions[0][0], positions[0][1],
                                TypedOpponents().validate({**PARAMS, "models": "greedy,nobody"}), random.Random(0))
    # judged by Bayes' rule on the averaged likelihood, with a player like none of the models: such seats are
    # named "other" and played by today's greedy; the prior of a table of one kind is the other judge's
    found = 0
    for state, seat in positions:
        decision = _run(TypedOpponents(), state, seat, {"inference_eps": 0.1, "judge": "marginal", "other": True})
        assert decision.stats["opponents"] == "typed"
        inferred = decision.stats["inference"]
        assert all(len(cs) == 3 for cs in inferred["chances"].values())
        assert set(inferred["types"].values()) <= {"greedy", "greedy_before", "other"}
        found += sum(m == ("greedy_before" if int(p) % 2 else "greedy") for p, m in inferred["types"].items())
    assert found >= 12  # of 18 seats (16 when written)
    # the served search's opponents=typed is this variant judged so beside a searching player (the one
    # measured, twenty-first look), node for node
    assert _harness_check(TypedOpponents(), positions, {"judge": "marginal", "other": True, "searcher": True,
                                                        "inference_eps": 0.1}, {}, plain={"opponents": "typed"}) > 0
    for bad in ({"judge": "marginal", "table": 0.5}, {"other": True}):
        with pytest.raises(ai.BadParams):
            TypedOpponents().choose(state, seat, TypedOpponents().validate({**PARAMS, **bad}), random.Random(0))


def test_the_typed_variant_can_judge_beside_a_searching_player_and_keep_only_confident_types():
    # the variant's rules: with `searcher` the player like none of the models is the fitted model of searching
    # players (a seat's chances differ from the uniform player's); `confidence` plays a seat by its likeliest
    # model only where that model's chance reaches it, else by today's greedy
    from ai.ismcts import likeliest_types

    chances = {"1": [0.3, 0.7, 0.0], "2": [0.1, 0.5, 0.4], "3": [0.5, 0.5, 0.0]}
    names = ("greedy", "greedy_before")
    assert likeliest_types(chances, names) == {"1": "greedy_before", "2": "greedy_before", "3": "greedy"}
    assert likeliest_types(chances, names, 0.6) == {"1": "greedy_before", "2": "greedy", "3": "greedy"}
    positions = _mixed_positions(6)
    differ = 0
    for state, seat in positions:
        judged = {}
        for searcher in (False, True):
            decision = _run(TypedOpponents(), state, seat, {"inference_eps": 0.1, "judge": "marginal", "other": True,
                                                            "searcher": searcher})
            judged[searcher] = decision.stats["inference"]["chances"]
            assert all(len(cs) == 3 and sum(cs) == pytest.approx(1.0, abs=1e-3) for cs in judged[searcher].values())
        differ += judged[False] != judged[True]
        confident = _run(TypedOpponents(), state, seat, {"inference_eps": 0.1, "judge": "marginal", "other": True,
                                                         "confidence": 0.99}).stats["inference"]
        assert confident["types"] == likeliest_types(confident["chances"], names, 0.99)
    assert differ == len(positions)
    with pytest.raises(ai.BadParams):
        TypedOpponents().choose(state, seat, TypedOpponents().validate({**PARAMS, "judge": "marginal",
                                                                        "searcher": True}), random.Random(0))


def test_pimc_splits_its_budget_among_sampled_worlds_and_sees_only_the_seats_information_set():
    # the variant's rule: ``pimc_worlds`` searches of an equal share of the iterations, each in one sampled
    # world of the seat's information set, their root visits summed, the most visited move played
    variant = Pimc()
    checked = 0
    for state, seat in _kozel_positions(8):
        found = _run(variant, state, seat, {"iterations": 120, "pimc_worlds": 4})
        assert found.stats["search"] == "pimc" and found.stats["iterations"] == 120
        assert sum(c["visits"] for c in found.stats["candidates"]) == 120
        assert {c["move"] for c in found.stats["candidates"]} == {m.id for m in state.legal_moves()}
        visits = [c["visits"] for c in found.stats["candidates"]]
        assert visits == sorted(visits, reverse=True) and found.move.id == found.stats["candidates"][0]["move"]
        checked += 1
    assert checked > 5


def test_the_paired_tree_searches_every_root_move_on_the_same_worlds_and_plays_the_best_mean():
    # the variant's rule: every legal move gets a tree of its own and the same count of common worlds (an
    # equal share of the iterations), and the move with the best mean payoff change is played
    variant = PairedTree()
    checked = 0
    for state, seat in _kozel_positions(8):
        found = _run(variant, state, seat, {"iterations": 120})
        candidates = found.stats["candidates"]
        k = len(state.legal_moves())
        assert found.stats["search"] == "paired_tree"
        assert {c["visits"] for c in candidates} == {120 // k}
        means = [c["mean_payoff"] for c in candidates]
        assert means == sorted(means, reverse=True) and found.move.id == candidates[0]["move"]
        checked += 1
    assert checked > 5


def test_the_kozel_value_variant_values_leaves_by_the_fitted_value_and_plays_out_the_rest():
    # the variant's rule: at two-player Kozel a leaf past the lead is valued by bench.kozel_value instead of
    # played out; with every leaf played out (value_mix=1) it is ismcts with the cheap playout it was fitted
    # to (its default playout) node for node
    assert _harness_check(KozelValue(), _kozel_positions(8), {"value_mix": 1.0}, {}, {"playout": "heuristic"}) > 0


def test_a_settled_kozel_world_moves_the_payoffs_by_the_value_and_ends_the_round():
    # kozel_value.settle: the seat to move's payoff changes by v, the other's by -v (payoffs are the
    # mean-centred totals negated), and nobody is to move
    for world in kozel_value.positions(20, seed=7):
        world.stop_after_deal()
        mover = world.turn
        before = world.running_payoffs()
        kozel_value.settle(world, 3.25)
        after = world.running_payoffs()
        assert after[mover] - before[mover] == pytest.approx(3.25)
        assert after[1 - mover] - before[1 - mover] == pytest.approx(-3.25)
        assert world.to_move is None


def test_the_fitted_kozel_value_predicts_a_playouts_mean_better_than_one_playout_does():
    # the premise of the value (bench/kozel_value.py): on fresh positions its squared error against the mean
    # of many playouts is smaller than one playout's own variance, and it explains part of the means' spread
    assert len(kozel_value.COEFFICIENTS) == kozel_value.NUM_FEATURES
    figures = kozel_value.held_out(kozel_value.COEFFICIENTS, 300, 16, seed=4242)
    assert figures["bias"] < figures["noise"] / 2
    assert figures["bias"] < figures["signal"]


def test_variants_are_seated_by_their_bench_alone_and_never_served():
    # GET /v1/engines, games and suggestions know ai.ENGINES: the bench registers its variants in its own
    # process, which the service never imports
    for variant in ("ismcts_greedy_tiebreak", "ismcts_soft_discards", "ismcts_kozel_playout", "pimc",
                    "ismcts_paired_tree", "ismcts_kozel_value", "greedy_wall", "ismcts_wall_playout", "greedy_tiengow",
                    "ismcts_tiengow_playout", "ismcts_tiuu_playout", "ismcts_typed"):
        assert variant not in ai.ENGINES
        with pytest.raises(ai.UnknownEngine):
            ai.get_engine(variant)
    out = subprocess.run(
        [sys.executable, "-m", "bench.variants", "tiuu", "--engine", "ismcts_greedy_tiebreak:iterations=20",
         "--engine", "greedy", "--sets", "1", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "margin ismcts_greedy_tiebreak:iterations=20 - greedy" in out.stdout
