"""The arena's reference engine (``perfect``: the ismcts search on the true state): it sees every hand, so
it plays only in the arena, which hands it the true state explicitly; ``ai.decide`` and the service refuse
it for a served seat."""

from __future__ import annotations

import random

import pytest
from api_support import create, humans

import ai
import engine
from ai.arena import Job, Spec, play_set

pytest_plugins = ["api_fixtures"]

BUDGET = {"iterations": 60, "time_ms": 600_000}


def _states(rules: str, players: int, count: int, moves: tuple[int, int], tag: str) -> list[engine.game.State]:
    """``count`` positions of ``rules``, each a few random moves (``moves``: the range) into a seeded match."""
    rng = random.Random(tag)
    out = []
    for seed in range(count):
        state = engine.new_game(rules, players=players, seed=seed)
        for _ in range(rng.randrange(*moves)):
            state.apply(rng.choice(state.legal_moves()))
        out.append(state)
    return out


def _tiengow_states(count: int) -> list[engine.game.State]:
    return _states("tiengow", 4, count, (4, 12), "reference")


def test_decide_refuses_the_reference_engine_for_a_served_seat():
    state = _tiengow_states(1)[0]
    with pytest.raises(ai.ArenaOnly, match="sees every hand"):
        ai.decide("perfect", state, state.to_move, BUDGET, seed=1)
    # an ArenaOnly is an UnknownEngine: whoever serves engines already refuses it
    with pytest.raises(ai.UnknownEngine):
        ai.get_engine("perfect")
    assert "perfect" not in ai.ENGINES and "perfect" in ai.REFERENCE_ENGINES


def test_only_a_reference_engine_is_handed_the_true_state():
    state = _tiengow_states(1)[0]
    with pytest.raises(ai.UnknownEngine):
        ai.decide_on_true_state("ismcts", state, state.to_move, BUDGET, seed=1)
    d = ai.decide_on_true_state("perfect", state, state.to_move, BUDGET, seed=1)
    assert any(d.move is m for m in state.legal_moves())
    assert d.stats["iterations"] == 60
    # the true state leaves nothing to infer: the reference takes ismcts's parameters but inference's
    with pytest.raises(ai.BadParams):
        ai.decide_on_true_state("perfect", state, state.to_move, {**BUDGET, "inference": True}, seed=1)


def test_the_reference_plays_the_other_seats_by_the_trees_statistics_by_default():
    """``perfect`` keeps ``opponents=tree`` as its default at every rule set (docs/ai.md, "An opponent model
    in the tree"): its figures were measured so, and ``ismcts``'s Tien Gow default, the greedy model, would
    change them."""
    differed = 0
    for state in _tiengow_states(4):
        if len(state.legal_moves()) < 2:
            continue
        by_default = ai.decide_on_true_state("perfect", state, state.to_move, BUDGET, seed=1)
        tree = ai.decide_on_true_state("perfect", state, state.to_move, {**BUDGET, "opponents": "tree"}, seed=1)
        model = ai.decide_on_true_state("perfect", state, state.to_move, {**BUDGET, "opponents": "greedy"}, seed=1)
        assert by_default.stats["opponents"] == "tree"
        assert by_default.stats["candidates"] == tree.stats["candidates"]
        differed += model.stats["candidates"] != tree.stats["candidates"]
    assert differed, "the model never changed the reference's search: no test"


def test_the_reference_engine_decides_from_the_hidden_tiles_too():
    # ismcts gives the same decision to two states its seat cannot tell apart (tests/test_ai.py); the
    # reference reads the true hands, so for some such pair its statistics differ
    differed = 0
    rng = random.Random("reference/iset")
    for state in _tiengow_states(6):
        seat = state.to_move
        other = state.determinize(seat, rng)
        assert other.view(seat) == state.view(seat)
        a = ai.decide_on_true_state("perfect", state, seat, BUDGET, seed=5)
        b = ai.decide_on_true_state("perfect", other, seat, BUDGET, seed=5)
        differed += a.stats["candidates"] != b.stats["candidates"]
    assert differed


def _kozel_states(count: int) -> list[engine.game.State]:
    return _states("kozel", 2, count, (2, 6), "reference/kozel")


def test_restocking_redraws_only_the_order_of_the_stock():
    # Kozel's bazaar and Tiu U's face-down stock: the same tiles in another order, every hand as it was
    tiuu = engine.new_game("tiuu", players=2, seed=4)
    for state, stock in ((_kozel_states(1)[0], "bazaar"), (tiuu, "down")):
        before = state.to_dict()
        orders = set()
        for k in range(5):
            after = state.restocked(random.Random(k)).to_dict()
            assert sorted(after[stock]) == sorted(before[stock])
            assert after["hands"] == before["hands"]
            orders.add(tuple(after[stock]))
        assert len(orders) > 1, f"{state.rules.id}: restocked never changed the stock's order"
        assert state.to_dict() == before, "restocked changed the state it copied"


def test_the_reference_that_sees_the_hands_does_not_see_the_stock():
    # Kozel (kozel.md, "What each player knows": the bazaar is face down): two true states that differ only in
    # the bazaar's order get the same decision from perfect:sees=hands; perfect itself reads the order
    hands_only = {**BUDGET, "sees": "hands"}
    differed = 0
    for state in _kozel_states(6):
        seat = state.to_move
        other = state.clone()
        random.Random(seat).shuffle(other.bazaar)
        assert other.bazaar != state.bazaar and sorted(other.bazaar) == sorted(state.bazaar)
        a = ai.decide_on_true_state("perfect", state, seat, hands_only, seed=5)
        b = ai.decide_on_true_state("perfect", other, seat, hands_only, seed=5)
        assert a.move.id == b.move.id and a.stats["candidates"] == b.stats["candidates"]
        full_a = ai.decide_on_true_state("perfect", state, seat, BUDGET, seed=5)
        full_b = ai.decide_on_true_state("perfect", other, seat, BUDGET, seed=5)
        differed += full_a.stats["candidates"] != full_b.stats["candidates"]
    assert differed


def test_the_arena_seats_the_reference_engine_on_the_true_state():
    specs = (Spec.parse("perfect:iterations=30,time_ms=600000"), Spec.parse("greedy"))
    result = play_set(Job("tiengow", 4, {}, specs, seed=3))
    row = result["engines"]["perfect:iterations=30,time_ms=600000"]
    assert row["seats"] == 4 and row["decisions"] > 0


def test_the_service_neither_lists_nor_serves_the_reference_engine(client):
    assert "perfect" not in {e["id"] for e in client.get("/v1/engines").get_json()}
    assert client.get("/v1/engines/perfect").status_code == 404
    r = client.post("/v1/games", json={"rules": "tiengow", "seats": [*humans(3), {"kind": "ai", "engine": "perfect"}]})
    assert r.status_code == 422 and "seats.3.engine" in r.get_json()["errors"]
    assert create(client, "tiengow", humans(4))["game"]["id"]
