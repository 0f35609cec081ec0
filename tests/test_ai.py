"""The AI package: the engine registry and its plugins, ``ai.decide`` (parameters, fairness,
determinism), the engines on every rule set in ``engine.RULES``, and root-parallel merging.

Every rule-set-dependent test is parametrized over ``engine.RULES`` so that a rule set added later is
covered without touching this file.  The constructed endgames are in ``tests/test_ai_endgames.py``.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import math
import random
import time
from typing import Any, ClassVar

import pytest

import ai
import engine
from ai import BadParams, Decision, Engine, NotToMove, UnknownEngine, inference
from engine.game import Seat, State
from tests.positions import without_time

RULE_IDS = sorted(engine.RULES)
ENGINE_IDS = sorted(ai.ENGINES)

#: small budgets keep the suite fast; time_ms is large so that only the iteration count ends a search
#: (a time-limited search is not reproducible)
FAST: dict[str, dict[str, Any]] = {
    "random": {},
    "greedy": {},
    "ismcts": {"iterations": 60, "time_ms": 600_000},
}


def params_for(engine_id: str) -> dict[str, Any]:
    return dict(FAST.get(engine_id, {}))


def midgame_states(rules_id: str, players: int, count: int, seed: int) -> list[State]:
    """``count`` seeded states reached by random play (a few moves into the match, never finished)."""
    rng = random.Random(f"{rules_id}/{players}/{seed}")
    out: list[State] = []
    game_seed = seed
    while len(out) < count:
        state = engine.new_game(rules_id, players=players, seed=game_seed)
        game_seed += 1
        for _ in range(rng.randrange(0, 30)):
            if state.finished:
                break
            state.apply(rng.choice(state.legal_moves()))
        if not state.finished:
            out.append(state)
    return out


def same_information_set(state: State, seat: Seat, rng: random.Random) -> State:
    """Another state that looks exactly the same to ``seat`` but (as a rule) hides different tiles."""
    other = state.determinize(seat, rng)
    assert other.view(seat) == state.view(seat)
    return other


# --------------------------------------------------------------------------- registry and schema

def test_registry_lists_the_builtin_engines_with_json_schemas():
    assert {"random", "greedy", "ismcts"} <= set(ai.ENGINES)
    for engine_id, eng in ai.ENGINES.items():
        d = eng.to_dict()
        json.dumps(d)
        assert d["id"] == engine_id and d["description"]
        for p in d["params"]:
            assert {"name", "type", "default", "description"} <= set(p)
        # the defaults are valid values of their own schema
        assert eng.validate({}) == {p.name: p.default for p in eng.params}


def test_ismcts_declares_its_parameters_with_bounds_and_choices():
    params = {p["name"]: p for p in ai.ENGINES["ismcts"].to_dict()["params"]}
    assert set(params) == {"iterations", "time_ms", "uct_c", "playout", "inference", "inference_worlds",
                           "inference_mcmc", "inference_eps", "inference_model", "opponents", "opponents_eps",
                           "root"}
    assert params["iterations"]["type"] == "integer" and params["iterations"]["minimum"] == 1
    assert params["time_ms"]["type"] == "integer" and "maximum" in params["time_ms"]
    assert params["uct_c"]["type"] == "number"
    assert params["playout"]["enum"] == ["default", "random", "heuristic", "greedy"]
    assert params["playout"]["default"] == "default"
    assert params["inference"]["type"] == "boolean" and params["inference"]["default"] is True
    assert params["opponents"]["enum"] == ["default", "tree", "greedy", "typed"] and params["opponents"]["default"] == "default"
    assert params["inference_model"]["enum"] == ["greedy", "search", "softmax"] and params["inference_model"]["default"] == "greedy"
    assert params["root"]["enum"] == ["ucb", "uniform"] and params["root"]["default"] == "ucb"


# --------------------------------------------------------------------------- decide: errors

@pytest.fixture(scope="module")
def some_state() -> State:
    """A state of the first registered rule set where the seat to move has a real choice."""
    rid = RULE_IDS[0]
    for state in midgame_states(rid, engine.RULES[rid].default_players, 50, seed=11):
        if len(state.legal_moves()) > 1:
            return state
    raise AssertionError(f"no {rid} state with two legal moves in 50 tries")


@pytest.mark.parametrize(("params", "culprit"), [
    ({"iterations": 0}, "iterations"),
    ({"iterations": 2_000_000}, "iterations"),
    ({"iterations": "100"}, "iterations"),
    ({"iterations": True}, "iterations"),
    ({"iterations": 10.0}, "iterations"),
    ({"time_ms": -5}, "time_ms"),
    ({"uct_c": "high"}, "uct_c"),
    ({"uct_c": -0.1}, "uct_c"),
    ({"uct_c": float("nan")}, "uct_c"),
    ({"playout": "smart"}, "playout"),
    ({"depth": 3}, "depth"),
])
def test_bad_ismcts_params_are_refused_naming_the_parameter(some_state, params, culprit):
    with pytest.raises(BadParams) as e:
        ai.decide("ismcts", some_state, some_state.to_move, params, seed=1)
    assert e.value.param == culprit
    assert culprit in str(e.value)


def test_engines_without_parameters_refuse_any_parameter(some_state):
    for engine_id in ("random", "greedy"):
        with pytest.raises(BadParams) as e:
            ai.decide(engine_id, some_state, some_state.to_move, {"iterations": 10}, seed=1)
        assert e.value.param == "iterations"


def test_params_must_be_a_mapping_and_the_seed_an_integer(some_state):
    with pytest.raises(BadParams):
        ai.decide("ismcts", some_state, some_state.to_move, ["iterations"], seed=1)  # type: ignore[arg-type]
    with pytest.raises(BadParams) as e:
        ai.decide("random", some_state, some_state.to_move, {}, seed="7")  # type: ignore[arg-type]
    assert e.value.param == "seed"


def test_an_integer_is_accepted_where_a_number_is_wanted(some_state):
    d = ai.decide("ismcts", some_state, some_state.to_move, {"uct_c": 1, "iterations": 5}, seed=1)
    assert d.move in some_state.legal_moves()


def test_unknown_engine_is_refused(some_state):
    with pytest.raises(UnknownEngine):
        ai.decide("alphazero", some_state, some_state.to_move, {}, seed=1)


def test_only_the_seat_to_move_can_ask_for_a_decision(some_state):
    other = (some_state.to_move + 1) % some_state.players
    with pytest.raises(NotToMove):
        ai.decide("random", some_state, other, {}, seed=1)


# --------------------------------------------------------------------------- engines on every rule set

def _player_counts(rules_id: str) -> list[int]:
    rs = engine.RULES[rules_id]
    return sorted({rs.min_players, rs.default_players, rs.max_players})


LEGAL_CASES = [(r, n, e) for r in RULE_IDS for n in _player_counts(r) for e in ENGINE_IDS]


@pytest.mark.parametrize(("rules_id", "players", "engine_id"), LEGAL_CASES,
                         ids=[f"{r}-{n}p-{e}" for r, n, e in LEGAL_CASES])
def test_every_engine_returns_a_legal_move_of_the_real_state(rules_id, players, engine_id):
    for i, state in enumerate(midgame_states(rules_id, players, 3, seed=100)):
        before = state.to_dict()
        d = ai.decide(engine_id, state, state.to_move, params_for(engine_id), seed=i)
        assert d.move in state.legal_moves()
        # the very Move object of the real state, so that state.apply(d.move) is safe
        assert any(d.move is m for m in state.legal_moves())
        assert state.to_dict() == before, "deciding changed the state"
        json.dumps(d.to_dict())
        assert {"iterations", "elapsed_ms", "candidates"} <= set(d.stats)


@pytest.mark.parametrize("rules_id", RULE_IDS)
@pytest.mark.parametrize("playout", ["random", "heuristic", "greedy"])
def test_ismcts_statistics_account_for_every_iteration(rules_id, playout):
    state = midgame_states(rules_id, engine.RULES[rules_id].default_players, 1, seed=7)[0]
    d = ai.decide("ismcts", state, state.to_move, {"iterations": 80, "time_ms": 600_000, "playout": playout},
                  seed=3)
    legal = [m.id for m in state.legal_moves()]
    cands = d.stats["candidates"]
    assert sorted(c["move"] for c in cands) == sorted(legal)
    if len(legal) > 1:
        assert d.stats["iterations"] == 80
        assert sum(c["visits"] for c in cands) == 80, "each iteration visits exactly one root child"
        assert d.move.id == max(cands, key=lambda c: c["visits"])["move"]
    for c in cands:
        assert c["mean_reward"] is None or 0.0 <= c["mean_reward"] <= 1.0


@pytest.mark.parametrize("rules_id", [r for r in RULE_IDS if r != "tiengow_wall"])
def test_a_uniform_root_tries_the_roots_moves_in_turn_and_plays_the_best_mean(rules_id):
    """``root='uniform'`` (docs/ai.md, ``ismcts``): the root's moves share the iterations in turn, so their
    visits differ by at most one, and the move of the highest mean reward is played, where UCB plays the
    most visited.  (The wall game's root is paired, ``uniform`` does not apply.)"""
    checked = 0
    for state in midgame_states(rules_id, engine.RULES[rules_id].default_players, 6, seed=40):
        if len(state.legal_moves()) < 2:
            continue
        d = ai.decide("ismcts", state, state.to_move, {"iterations": 97, "time_ms": 600_000, "root": "uniform"},
                      seed=5)
        cands = d.stats["candidates"]
        visits = [c["visits"] for c in cands]
        assert sum(visits) == 97 and max(visits) - min(visits) <= 1
        assert d.move.id == cands[0]["move"]
        assert cands[0]["mean_reward"] == max(c["mean_reward"] for c in cands)
        checked += 1
    assert checked >= 3


def test_with_an_opponent_model_other_seats_play_the_models_moves_inside_the_tree():
    """``opponents='greedy'`` (docs/ai.md, ``ismcts``): at another seat's node of the tree the move is the
    model's choice from that seat's hand in the sampled world, not the tree's UCB.  A Tien Gow lead by the
    searching seat: the next seat's node (depth 2 of the tree) then has only children the model chose, where
    the tree's own UCB tries every observation sooner or later."""
    from ai.heuristics.tiengow import greedy_with
    from ai.ismcts import search

    state = engine.new_game("tiengow", players=4, seed=12)
    seat = state.to_move
    # the model: greedy keeping its strongest tile from beats (the greedy engine of before 2026-12-06 in
    # that), so that it discards where the tree also tries beats: the greedy engine of now beats whenever it
    # can, and over 400 worlds its cheapest beats cover every observation the tree tries at that node
    greedy = greedy_with(reserve_beats=True)
    chosen: set[int] = set()

    def model(world: State, rng: random.Random):
        move = greedy(world, world.to_move, rng)
        chosen.add(world.observed_keys((move,), seat)[0])
        return move

    def follower_keys(found) -> set[int]:
        tree = found.tree
        return {k for lead in tree.kids[0].values() for k in tree.kids[lead]}

    with_model = search(state, seat, iterations=400, time_ms=600_000, uct_c=0.7, policy=None,
                        rng=random.Random(1), model=model)
    assert follower_keys(with_model) <= chosen
    without = search(state, seat, iterations=400, time_ms=600_000, uct_c=0.7, policy=None, rng=random.Random(1))
    assert follower_keys(without) - chosen, "the tree's own choice never strays from the model's: no test"


@pytest.mark.parametrize("rules_id", RULE_IDS)
@pytest.mark.parametrize("engine_id", ENGINE_IDS)
def test_the_same_seed_gives_the_same_decision(rules_id, engine_id):
    for state in midgame_states(rules_id, engine.RULES[rules_id].default_players, 2, seed=300):
        a = ai.decide(engine_id, state, state.to_move, params_for(engine_id), seed=42)
        b = ai.decide(engine_id, state.clone(), state.to_move, params_for(engine_id), seed=42)
        assert a.move.id == b.move.id
        assert without_time(a.stats) == without_time(b.stats)


@pytest.mark.parametrize("rules_id", RULE_IDS)
@pytest.mark.parametrize("engine_id", ENGINE_IDS)
def test_states_in_the_same_information_set_get_the_same_decision_and_stats(rules_id, engine_id):
    rng = random.Random(f"iset/{rules_id}/{engine_id}")
    differed = 0
    for state in midgame_states(rules_id, engine.RULES[rules_id].default_players, 3, seed=500):
        seat = state.to_move
        other = same_information_set(state, seat, rng)
        differed += other.to_dict() != state.to_dict()
        for params in ([params_for(engine_id)] if engine_id != "ismcts"
                       else [*({**params_for("ismcts"), "playout": p} for p in ("random", "heuristic", "greedy")),
                             # the opponent model plays other seats from their hands in the sampled worlds only
                             {**params_for("ismcts"), "opponents": "greedy", "opponents_eps": 0.25},
                             # and the library's models, each seat's judged from its moves as the seat saw them
                             {**params_for("ismcts"), "opponents": "typed"}]):
            a = ai.decide(engine_id, state, seat, params, seed=9)
            b = ai.decide(engine_id, other, seat, params, seed=9)
            assert a.move.id == b.move.id
            assert without_time(a.stats) == without_time(b.stats)
    # the check has teeth only when the hidden tiles really differ
    assert differed, "every sampled state equalled its determinization"


class FakeClock:
    """Stands for ``time`` in ai.ismcts: ``perf_counter`` advances ``step_ms`` per call and records what it
    returned; everything else is the real ``time``."""

    def __init__(self, step_ms: float) -> None:
        self.step = step_ms / 1000.0
        self.readings: list[float] = []

    def perf_counter(self) -> float:
        # computed from the call count, not summed, so no rounding piles up
        self.readings.append(1000.0 + len(self.readings) * self.step)
        return self.readings[-1]

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


# (time_ms, fake step): no budget is a multiple of the step, so no reading lands on a deadline exactly
@pytest.mark.parametrize("budget_ms, step_ms", [(1, 7), (20, 7), (150, 7)])
def test_ismcts_honours_time_ms_before_iterations(some_state, monkeypatch, budget_ms, step_ms):
    from ai import ismcts

    fake = FakeClock(step_ms)
    monkeypatch.setattr(ismcts, "time", fake)
    d = ai.decide("ismcts", some_state, some_state.to_move,
                  {"iterations": 1_000_000, "time_ms": budget_ms}, seed=5)
    t0, deadline = fake.readings[0], fake.readings[0] + budget_ms / 1000.0
    checks = fake.readings[1:-1]  # between the start and the reading of the elapsed time
    assert checks, "the search never looked at the clock"
    # it stopped at the first reading that reached the deadline, not one reading later, nor before it
    assert all(r < deadline for r in checks[:-1]) and checks[-1] >= deadline
    assert len(checks) == math.ceil(budget_ms / step_ms)
    assert d.stats["elapsed_ms"] == pytest.approx((fake.readings[-1] - t0) * 1000.0)
    assert d.stats["elapsed_ms"] >= budget_ms, "the search stopped before its time budget"
    # the time budget ended it, long before the iteration cap; at least one iteration per look at the clock
    assert len(checks) <= d.stats["iterations"] < 1_000_000


def test_ismcts_honours_iterations_before_time_ms(some_state):
    d = ai.decide("ismcts", some_state, some_state.to_move, {"iterations": 25, "time_ms": 600_000}, seed=5)
    assert d.stats["iterations"] == 25


# --------------------------------------------------------------------------- fairness: no engine can peek

class SpyEngine(Engine):
    """Records the state it is handed: the test checks it is a determinization, never the real state."""

    id = "test-spy"
    description = "records what it is shown"
    seen: ClassVar[list[dict[str, Any]]] = []

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        SpyEngine.seen.append(state.to_dict())
        return Decision(state.legal_moves()[0], {"iterations": 0, "elapsed_ms": 0.0, "candidates": []})


@pytest.fixture
def spy():
    ai.register(SpyEngine())
    SpyEngine.seen = []
    yield SpyEngine
    del ai.ENGINES["test-spy"]


@pytest.mark.parametrize("rules_id", RULE_IDS)
def test_decide_shows_an_engine_only_a_sample_of_the_information_set(spy, rules_id):
    rng = random.Random(1)
    for state in midgame_states(rules_id, engine.RULES[rules_id].default_players, 3, seed=900):
        seat = state.to_move
        other = same_information_set(state, seat, rng)
        ai.decide("test-spy", state, seat, {}, seed=4)
        ai.decide("test-spy", other, seat, {}, seed=4)
        shown, shown_other = spy.seen[-2:]
        assert shown == state.determinize(seat, random.Random(4)).to_dict()
        assert shown == shown_other, "the engine saw something that differs inside the information set"


class LiarEngine(Engine):
    id = "test-liar"
    description = "returns a move that is not legal"

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        return Decision(engine.Move("play:no-such", "play"), {})


def test_an_engine_returning_an_illegal_move_is_caught(some_state):
    ai.register(LiarEngine())
    try:
        with pytest.raises(ai.EngineFailure):
            ai.decide("test-liar", some_state, some_state.to_move, {}, seed=1)
    finally:
        del ai.ENGINES["test-liar"]


# --------------------------------------------------------------------------- root parallelism

@pytest.mark.parametrize("rules_id", RULE_IDS)
def test_merged_root_statistics_are_the_sum_of_their_parts(rules_id):
    state = midgame_states(rules_id, engine.RULES[rules_id].default_players, 1, seed=21)[0]
    while len(state.legal_moves()) < 2:
        state.apply(state.legal_moves()[0])
    params = {"iterations": 50, "time_ms": 600_000}
    parts = [ai.decide("ismcts", state, state.to_move, params, seed=s) for s in (1, 2, 3)]
    merged = ai.merge(parts)
    assert merged.stats["iterations"] == sum(p.stats["iterations"] for p in parts) == 150
    assert merged.stats["elapsed_ms"] == pytest.approx(sum(p.stats["elapsed_ms"] for p in parts))
    visits = {c["move"]: c["visits"] for c in merged.stats["candidates"]}
    for mid, v in visits.items():
        assert v == sum(c["visits"] for p in parts for c in p.stats["candidates"] if c["move"] == mid)
    assert sum(visits.values()) == 150
    assert visits[merged.move.id] == max(visits.values())
    assert merged.move in state.legal_moves()
    for c in merged.stats["candidates"]:
        parts_c = [pc for p in parts for pc in p.stats["candidates"] if pc["move"] == c["move"] and pc["visits"]]
        if parts_c:
            expected = sum(pc["mean_reward"] * pc["visits"] for pc in parts_c) / c["visits"]
            assert c["mean_reward"] == pytest.approx(expected)
    json.dumps(merged.to_dict())


def test_merging_one_decision_keeps_it():
    rid = RULE_IDS[0]
    state = midgame_states(rid, engine.RULES[rid].default_players, 1, seed=3)[0]
    d = ai.decide("ismcts", state, state.to_move, {"iterations": 40, "time_ms": 600_000}, seed=8)
    m = ai.merge([d])
    assert m.move.id == d.move.id
    assert [(c["move"], c["visits"]) for c in m.stats["candidates"]] == \
        [(c["move"], c["visits"]) for c in d.stats["candidates"]]


def test_merge_names_a_winner_no_single_part_chose():
    moves = (engine.Move("a", "a"), engine.Move("b", "b"), engine.Move("c", "c"))

    def part(best: int, visits: list[int]) -> Decision:
        cands = [{"move": m.id, "visits": v, "mean_reward": 0.5} for m, v in zip(moves, visits, strict=True)]
        return Decision(moves[best], {"iterations": sum(visits), "elapsed_ms": 1.0, "candidates": cands}, moves)

    merged = ai.merge([part(0, [10, 9, 0]), part(2, [0, 9, 10])])
    assert merged.move.id == "b"
    assert merged.stats["iterations"] == 38


def test_merging_uniform_root_searches_plays_the_best_mean_payoff():
    # ``root='uniform'``: every part's root tried its moves in turn, so visits say nothing of a move's value;
    # the merge ranks by the parts' mean payoff (visit-weighted), not by summed visits
    moves = (engine.Move("a", "a"), engine.Move("b", "b"))

    def part(visits: list[int], payoffs: list[float], root: str | None) -> Decision:
        cands = [{"move": m.id, "visits": v, "mean_reward": 0.5, "mean_payoff": p}
                 for m, v, p in zip(moves, visits, payoffs, strict=True)]
        stats = {"iterations": sum(visits), "elapsed_ms": 1.0, "candidates": cands, **({"root": root} if root else {})}
        return Decision(moves[0], stats, moves)

    uniform = ai.merge([part([11, 10], [-2.0, 1.0], "uniform"), part([10, 10], [-1.0, 0.5], "uniform")])
    assert uniform.move.id == "b" and uniform.stats["root"] == "uniform"
    assert [c["move"] for c in uniform.stats["candidates"]] == ["b", "a"]
    by_visits = ai.merge([part([11, 10], [-2.0, 1.0], None), part([10, 10], [-1.0, 0.5], None)])
    assert by_visits.move.id == "a" and "root" not in by_visits.stats


def test_merge_needs_a_decision():
    with pytest.raises(ValueError):
        ai.merge([])


# --------------------------------------------------------------------------- plugins

class TinyEngine(Engine):
    """A third-party engine as a plugin package would ship it: always the last legal move."""

    id = "test-tiny"
    description = "plays the last legal move"
    params = (ai.Param("unused", int, 0, "a parameter to show in the schema", minimum=0, maximum=3),)

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        return Decision(state.legal_moves()[-1], {"iterations": 0, "elapsed_ms": 0.0, "candidates": []})


def _entry_point(name: str, value: str) -> importlib.metadata.EntryPoint:
    return importlib.metadata.EntryPoint(name=name, value=value, group=ai.ENTRY_POINT_GROUP)


def test_an_entry_point_plugin_is_registered_and_usable(some_state):
    try:
        added = ai.load_plugins([_entry_point("tiny", f"{__name__}:TinyEngine")])
        assert added == ["test-tiny"]
        assert ai.ENGINES["test-tiny"].to_dict()["params"][0]["name"] == "unused"
        d = ai.decide("test-tiny", some_state, some_state.to_move, {"unused": 2}, seed=1)
        assert d.move.id == some_state.legal_moves()[-1].id
        with pytest.raises(BadParams) as e:
            ai.decide("test-tiny", some_state, some_state.to_move, {"unused": 9}, seed=1)
        assert e.value.param == "unused"
    finally:
        ai.ENGINES.pop("test-tiny", None)


def test_a_broken_plugin_is_logged_and_skipped_without_harming_the_others(caplog):
    before = dict(ai.ENGINES)
    try:
        with caplog.at_level(logging.ERROR, logger="ai"):
            added = ai.load_plugins([
                _entry_point("missing", "no_such_module_for_tilehouse:Engine"),
                _entry_point("not-an-engine", "json:dumps"),
                _entry_point("clash", "ai.random:RandomEngine"),
                _entry_point("tiny", f"{__name__}:TinyEngine"),
            ])
        assert added == ["test-tiny"]
        assert {"missing", "not-an-engine", "clash"} <= {r.args[0] for r in caplog.records if r.args}
        assert ai.ENGINES["random"] is before["random"], "a plugin replaced a built-in engine"
    finally:
        ai.ENGINES.pop("test-tiny", None)
    assert before == ai.ENGINES


def test_the_installed_entry_point_group_is_read_at_import():
    # whatever is installed under the group was loaded (or skipped) when ai was imported; loading it
    # again must not register anything twice
    installed = list(importlib.metadata.entry_points(group=ai.ENTRY_POINT_GROUP))
    before = dict(ai.ENGINES)
    assert ai.load_plugins(installed) == []
    assert before == ai.ENGINES


# --------------------------------------------------------------------------- greedy dispatch and fallbacks

@pytest.mark.parametrize("rules_id", RULE_IDS)
def test_greedy_plays_the_rule_sets_heuristic_on_the_determinized_state(rules_id):
    from ai.greedy import heuristics_for

    module = heuristics_for(rules_id)
    if module is None:
        pytest.skip(f"{rules_id} has no heuristics yet")
    for i, state in enumerate(midgame_states(rules_id, engine.RULES[rules_id].default_players, 3, seed=40)):
        seat = state.to_move
        d = ai.decide("greedy", state, seat, {}, seed=i)
        world = state.determinize(seat, random.Random(i))
        assert d.move.id == module.greedy(world, seat, random.Random(f"ai/{i}")).id
        assert d.stats["policy"] == "heuristic"


def test_greedy_without_heuristics_plays_randomly_and_says_so(monkeypatch, some_state):
    import ai.greedy

    monkeypatch.setattr(ai.greedy, "heuristics_for", lambda rules_id: None)
    d = ai.decide("greedy", some_state, some_state.to_move, {}, seed=2)
    assert d.move in some_state.legal_moves()
    assert d.stats["policy"] == "random" and "no greedy heuristic" in d.stats["note"]


@pytest.mark.parametrize("rules_id", RULE_IDS)
def test_ismcts_default_playout_is_the_rule_sets_own(rules_id):
    """``ismcts:playout=default`` (the default) plays the rule set's ``Heuristics.default_playout``: the greedy
    playout at Kozel, which beats the heuristic one there at equal time (docs/ai-history.md, twelfth look),
    the heuristic playout elsewhere; the same decision as naming that playout."""
    state = midgame_states(rules_id, engine.RULES[rules_id].default_players, 1, seed=7)[0]
    budget = {"iterations": 60, "time_ms": 600_000}
    by_default = ai.decide("ismcts", state, state.to_move, budget, seed=5)
    expected = "greedy" if rules_id == "kozel" else "heuristic"
    assert by_default.stats["playout"] == expected
    named = ai.decide("ismcts", state, state.to_move, {**budget, "playout": expected}, seed=5)
    assert by_default.stats["candidates"] == named.stats["candidates"]


@pytest.mark.parametrize("rules_id", RULE_IDS)
def test_ismcts_default_opponents_and_worlds_are_the_rule_sets_own(rules_id):
    """``ismcts:opponents=default`` with ``inference=true`` (the defaults) plays the rule set's
    ``Heuristics.default_opponents`` in worlds shaped as ``ai.inference`` shapes them with one candidate:
    at Tien Gow the library of models in the tree, each seat by its likeliest (docs/ai-history.md, twentieth
    look), and worlds arranged as greedy discards, the same decision as naming both; elsewhere
    today's search node for node, the same decision as ``opponents=tree,inference=false``.  The search of
    before stays selectable at Tien Gow and differs from the default there."""
    budget = {"iterations": 80, "time_ms": 600_000}
    checked = 0
    for state in midgame_states(rules_id, engine.RULES[rules_id].default_players, 4, seed=17):
        if len(state.legal_moves()) < 2:
            continue  # nothing to search
        by_default = ai.decide("ismcts", state, state.to_move, budget, seed=5)
        before = ai.decide("ismcts", state, state.to_move, {**budget, "opponents": "tree", "inference": False},
                           seed=5)
        if rules_id == "tiengow":
            named = ai.decide("ismcts", state, state.to_move, {**budget, "opponents": "typed", "inference": True},
                              seed=5)
            assert by_default.stats["opponents"] == "typed" and "inference" in by_default.stats
            assert without_time(by_default.stats) == without_time(named.stats)
            checked += by_default.stats["candidates"] != before.stats["candidates"]
        else:
            assert by_default.stats.get("opponents") in ("tree", None)  # None: the wall game's paired root
            assert "inference" not in by_default.stats
            assert without_time(by_default.stats) == without_time(before.stats)
            checked += 1
    assert checked, "the default never differed from the search of before at Tien Gow: no test"


@pytest.mark.parametrize("rules_id", RULE_IDS)
def test_typed_opponents_play_each_seat_by_its_likeliest_model_of_the_library(rules_id):
    """``ismcts:opponents=typed`` (docs/ai.md, ``ismcts``): at Tien Gow, whose heuristics have a library of
    two models, each other seat that has moved is judged (``stats["inference"]``: its chances of each model
    and of none, summing to one, and its likeliest); a rule set without a library plays the greedy model,
    node for node."""
    budget = {"iterations": 80, "time_ms": 600_000, "inference": False}
    judged = 0
    kinds: set[str] = set()
    for state in midgame_states(rules_id, engine.RULES[rules_id].default_players, 6, seed=23):
        if len(state.legal_moves()) < 2:
            continue
        typed = ai.decide("ismcts", state, state.to_move, {**budget, "opponents": "typed"}, seed=5)
        greedy = ai.decide("ismcts", state, state.to_move, {**budget, "opponents": "greedy"}, seed=5)
        if rules_id != "tiengow":
            assert typed.stats.get("opponents") in ("greedy", None)  # None: the wall game's paired root
            assert without_time(typed.stats) == without_time(greedy.stats)
            judged += 1
            continue
        assert typed.stats["opponents"] == "typed"
        if "inference" not in typed.stats:  # a deal's first lead: nobody to judge, the greedy model's search
            assert not inference.others_moved(state, state.to_move)
            assert typed.stats["candidates"] == greedy.stats["candidates"]
            continue
        inferred = typed.stats["inference"]
        for p, cs in inferred["chances"].items():
            assert len(cs) == 3 and sum(cs) == pytest.approx(1.0, abs=1e-3) and int(p) != state.to_move
            assert inferred["types"][p] in ("greedy", "greedy_before", "other")
            judged += 1
        kinds.update(inferred["types"].values())
    assert judged
    # (that the tree then plays each seat by its model, node for node, is the harness check of the bench
    # variant measured, tests/test_bench_variants.py)
    assert rules_id != "tiengow" or len(kinds) > 1, kinds
    if rules_id == "tiengow":
        # the deal's first lead: nobody to judge, and the greedy model's search node for node
        opening = engine.new_game("tiengow", players=4, seed=2)
        typed = ai.decide("ismcts", opening, opening.to_move, {**budget, "opponents": "typed"}, seed=5)
        greedy = ai.decide("ismcts", opening, opening.to_move, {**budget, "opponents": "greedy"}, seed=5)
        assert "inference" not in typed.stats and typed.stats["candidates"] == greedy.stats["candidates"]


def test_ismcts_playouts_fall_back_to_random_without_heuristics(monkeypatch, some_state):
    import ai.greedy

    monkeypatch.setattr(ai.greedy, "heuristics_for", lambda rules_id: None)
    for playout in ("default", "heuristic", "greedy"):
        d = ai.decide("ismcts", some_state, some_state.to_move,
                      {"iterations": 20, "time_ms": 600_000, "playout": playout}, seed=2)
        assert d.stats["playout"] == "random"


def test_ismcts_keys_an_opponents_face_down_discards_by_what_the_seat_sees():
    # SO-ISMCTS: whatever tiles the sampled worlds give the next seat, its face-down discard is
    # one node of the searching seat's tree, and each world applies one of its own discards there
    from ai.ismcts import search
    from engine.tiengow import TienGowState

    state = TienGowState.from_position([["6-6", "1-1", "5-5"], ["4-4", "3-1", "6-1"], ["5-1", "2-2", "6-5"],
                                        ["6-4", "5-3", "4-1"]], banker=0)
    world = state.determinize(0, random.Random(1))
    tree, done, _elapsed, _lo, _hi = search(world, 0, iterations=300, time_ms=60_000, uct_c=0.7, policy=None,
                                            rng=random.Random(2))
    assert done == 300
    lead = next(m for m in state.legal_moves() if m.id == "play:6-6")
    after_lead = tree.kids[0][lead.key]
    follow_keys = set(tree.kids[after_lead])
    hidden = hash("discard:1 face down")
    assert hidden in follow_keys
    # nothing beats the Heaven single: seat 1 can only discard, so the node has exactly one child
    assert follow_keys == {hidden}
    # every visit after the one that expanded the lead went through that one node
    assert tree.visits[tree.kids[after_lead][hidden]] == tree.visits[after_lead] - 1
