"""Resigning, checked for every rule set, player count and variant the
conformance test plays: at the start, in the middle and near the end of a seeded random playout, every seat
resigns in turn (on a clone) and the match ends with the rule set's defined result (docs/rules/*.md,
"Resigning"): finished, zero-sum payoffs, the resigning seat (Kozel's team play: its side) ranked last, the
forfeit exactly as documented, a ``resign`` then a ``match_end`` event, an exact round trip through
``to_dict``, and a second resignation refused."""

from __future__ import annotations

import json
import random

import pytest
from test_conformance import CONFIGS, IDS

import engine
from engine.exceptions import IllegalMove, InvalidMove
from engine.game import State


def _positions(rid: str, n: int, opts: dict, seed: int = 5) -> list[State]:
    """The start of a match, a middle and a late position of one seeded random playout."""
    state = engine.new_game(rid, players=n, seed=seed, options=opts)
    rng = random.Random(seed)
    trail = [state.clone()]
    while not state.finished:
        state.apply(rng.choice(state.legal_moves()))
        if not state.finished:
            trail.append(state.clone())
    return [trail[0], trail[len(trail) // 2], trail[-1]]


def _forfeit_is_as_documented(rid: str, before: State, after: State, seat: int) -> None:
    n = before.players
    delta = [a - b for a, b in zip(after.result()["scores"], before.result()["scores"], strict=True)]
    others = [q for q in range(n) if q != seat]
    if rid == "tiengow":
        bf = before.banker_factor()  # type: ignore[attr-defined]
        want = {q: 5 * (bf if before.banker in (seat, q) else 1) for q in others}  # type: ignore[attr-defined]
        assert {q: delta[q] for q in others} == want and delta[seat] == -sum(want.values())
    elif rid == "tiuu":
        from engine.tiuu import catch_scores

        rounded = [catch_scores(c, before.classic)[1] for c in before.catches]  # type: ignore[attr-defined]
        want = {q: max(10, rounded[q]) for q in others}
        assert {q: delta[q] for q in others} == want and delta[seat] == -sum(want.values())
    elif rid == "tiengow_wall":
        h = max(1, len(before.hands[seat]))  # type: ignore[attr-defined]
        assert delta == [0 if q == seat else h for q in range(n)]
    elif rid == "kozel":
        side = before._side(seat)  # type: ignore[attr-defined]
        totals = after.totals  # type: ignore[attr-defined]
        assert totals[side] == max(before.totals[side], before.target)  # type: ignore[attr-defined]
        assert [t for i, t in enumerate(totals) if i != side] == [
            t for i, t in enumerate(before.totals) if i != side]  # type: ignore[attr-defined]
        assert after.result()["goats"] == [s for s in range(n) if after._side(s) == side]  # type: ignore[attr-defined]
    else:
        pytest.fail(f"no documented resignation for {rid}: write it in docs/rules/{rid}.md and here")


@pytest.mark.parametrize(("rid", "n", "opts"), CONFIGS, ids=IDS)
def test_a_resignation_ends_the_match_with_the_defined_zero_sum_result(rid, n, opts):
    for position in _positions(rid, n, opts):
        for seat in range(n):
            state = position.clone()
            events = state.resign(seat)
            assert state.finished and state.to_move is None and state.legal_moves() == []
            assert [e["type"] for e in events] == ["resign", "match_end"] and events[0]["seat"] == seat
            json.dumps(events)
            res = state.result()
            assert res["reason"] == "resigned" and res["resigned"] == seat
            assert abs(sum(res["payoffs"])) < 1e-9 and abs(sum(state.running_payoffs())) < 1e-9
            assert res["payoffs"] == state.running_payoffs()
            losers = [s for s in range(n) if rid == "kozel" and state._side(s) == state._side(seat)] or [seat]
            assert set(res["ranking"][-len(losers):]) == set(losers)
            assert sorted(res["ranking"]) == list(range(n))
            _forfeit_is_as_documented(rid, position, state, seat)
            # the resignation survives a round trip and a clone, and shows in every view
            d = state.to_dict()
            again = engine.load_state(json.loads(json.dumps(d)))
            assert again.to_dict() == d and again.result() == res and again.finished
            assert state.clone().result() == res
            for viewer in [None, *range(n)]:
                assert state.view(viewer)["result"] == res
            with pytest.raises(IllegalMove):
                state.resign(seat)
            with pytest.raises(IllegalMove):
                again.resign((seat + 1) % n)
        assert not position.finished  # resigning a clone left the position alone


@pytest.mark.parametrize("rid", sorted(engine.RULES))
def test_resigning_a_seat_the_match_does_not_have_is_refused(rid):
    rs = engine.RULES[rid]
    state = engine.new_game(rid, players=rs.default_players, seed=1)
    for bad in (-1, rs.default_players, True, "0"):
        with pytest.raises(InvalidMove):
            state.resign(bad)
    assert not state.finished
