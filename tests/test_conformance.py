"""The engine protocol (``engine/game.py``, ``docs/developing.md``), checked for every rule set in ``engine.RULES``, present
and future: seeded random playouts to the end of the match with invariants checked at every step."""

from __future__ import annotations

import json
import random

import pytest

import engine
from engine.game import State


def _configs() -> list[tuple[str, int, dict]]:
    out = []
    for rid, rs in sorted(engine.RULES.items()):
        for n in rs.players:
            out.append((rid, n, {}))
        for n, opts in rs.variants:
            out.append((rid, n, dict(opts)))
    return out


CONFIGS = _configs()
IDS = [f"{r}-{n}p-{json.dumps(o, sort_keys=True)}" if o else f"{r}-{n}p" for r, n, o in CONFIGS]


def test_registry_is_not_empty_and_every_rule_set_describes_itself():
    assert engine.RULES, "no rule set registered"
    for rid, rs in engine.RULES.items():
        d = rs.to_dict()
        assert d["id"] == rid and d["title"] and d["players"]["min"] <= d["players"]["max"]
        json.dumps(d)
        for o in rs.options:
            assert o.validate(o.default) == o.default, f"{rid}.{o.name} default is not valid"


def _check_step(state: State, rng: random.Random) -> None:
    n = state.players
    # load_state(to_dict()) round-trips exactly, through JSON
    d = state.to_dict()
    assert json.loads(json.dumps(d)) == d
    again = engine.load_state(json.loads(json.dumps(d)))
    assert again.to_dict() == d
    assert [m.id for m in again.legal_moves()] == [m.id for m in state.legal_moves()]
    # payments are zero-sum at every moment
    assert abs(sum(state.running_payoffs())) < 1e-9
    # views are JSON and hide what they must
    for seat in [None, *range(n)]:
        v = state.view(seat)
        json.dumps(v)
        assert v["you"] == seat
        assert (v["hand"] is None) == (seat is None)
        assert len(v["seats"]) == n
    for seat in range(n):
        world = state.determinize(seat, random.Random(rng.random()))
        # everything the seat has seen is kept ...
        assert world.view(seat) == state.view(seat), "determinize changed what the seat sees"
        # ... and so is everything public
        assert world.view(None) == state.view(None), "determinize changed public facts"
        assert world.to_move == state.to_move
        assert world.deals_done == state.deals_done
        # the payoffs so far are public (a search measures every sample's rewards from the root's)
        assert world.running_payoffs() == state.running_payoffs(), "determinize changed the payoffs so far"
        # the determinization depends only on what the seat knows (information-set invariance)
        k = rng.random()
        assert (state.determinize(seat, random.Random(k)).to_dict()
                == world.determinize(seat, random.Random(k)).to_dict()), "determinize read hidden facts"
        if not state.finished:
            assert world.legal_moves(), "a determinized world has no legal move"
        if seat == state.to_move:
            assert [m.id for m in world.legal_moves()] == [m.id for m in state.legal_moves()]


@pytest.mark.parametrize(("rules_id", "players", "options"), CONFIGS, ids=IDS)
def test_random_playouts_keep_every_protocol_invariant(rules_id, players, options):
    for seed in (1, 2):
        rng = random.Random(seed * 7919)
        state = engine.new_game(rules_id, players=players, seed=seed, options=options)
        same = engine.new_game(rules_id, players=players, seed=seed, options=options)
        assert same.to_dict() == state.to_dict(), "the same seed must give the same game"
        deals = 0
        steps = 0
        while not state.finished:
            if steps % 3 == 0:
                _check_step(state, rng)
            moves = state.legal_moves()
            assert moves, "legal moves are empty before the end"
            assert len({m.id for m in moves}) == len(moves), "duplicate move ids"
            for m in moves:
                assert set(m.to_dict()) <= type(state).move_fields, f"{m.id}: a field move_fields does not declare"
            move = rng.choice(moves)
            # clone() is independent of the original
            before = state.to_dict()
            twin = state.clone()
            twin.apply(move)
            assert state.to_dict() == before, "applying a move to a clone changed the original"
            # the checked path accepts the id and the move object, and agrees with the fast path
            events = state.play(move.id if steps % 2 else move.to_dict())
            assert state.to_dict() == twin.to_dict()
            for ev in events:
                assert set(ev) == {"type", "seat", "data", "secret"}
                json.dumps(ev["data"])
            assert state.deals_done >= deals
            deals = state.deals_done
            steps += 1
            assert steps < 20000, "the match does not end"
        _check_step(state, rng)
        assert state.legal_moves() == []
        res = state.result()
        assert res["reason"]
        assert sorted(res["ranking"]) == list(range(players))
        assert len(res["scores"]) == players and len(res["payoffs"]) == players
        assert abs(sum(res["payoffs"])) < 1e-9
        assert res["payoffs"] == pytest.approx(state.running_payoffs())
        assert res["deals"], "a finished match reports its deals"
        with pytest.raises(engine.IllegalMove):
            state.play("pass")


@pytest.mark.parametrize(("rules_id", "players", "options"), CONFIGS, ids=IDS)
def test_a_state_set_to_halt_stops_at_the_end_of_the_deal_with_the_same_payoffs(rules_id, players, options):
    # a search's sample does not deal the next deal, and scores the finished one exactly
    for seed in (1, 2):
        rng = random.Random(seed)
        state = engine.new_game(rules_id, players=players, seed=seed, options=options)
        halted = state.clone()
        halted.halt_at_deal_end = True
        while halted.to_move is not None:
            move = rng.choice(halted.legal_moves())
            halted.apply(move)
            state.apply(next(m for m in state.legal_moves() if m.id == move.id))
        assert state.deals_done == halted.deals_done == 1
        assert halted.running_payoffs() == state.running_payoffs()
        assert halted.legal_moves() == []


def _positions(rules_id: str, players: int, options: dict, *, seed: int, steps: int):
    """The positions of a seeded random walk through a match (at most ``steps``, until it ends), numbered; the
    walk goes on from each position after the caller has looked at it."""
    walk = random.Random(seed)
    state = engine.new_game(rules_id, players=players, seed=seed, options=options)
    for step in range(steps):
        if state.finished:
            return
        yield step, state
        state.apply(walk.choice(state.legal_moves()))


@pytest.mark.parametrize(("rules_id", "players", "options"), CONFIGS, ids=IDS)
def test_a_determinizer_samples_worlds_as_determinize_does_call_after_call(rules_id, players, options):
    # a search asks the root once for ``determinizer(seat)`` and calls it every iteration; each
    # call must be ``determinize(seat, rng)`` from the same generator, with nothing carried from one call to
    # the next (the closure reuses what it worked out once)
    for _step, state in _positions(rules_id, players, options, seed=5, steps=60):
        for seat in range(players):
            sample = state.determinizer(seat)
            fast, slow = random.Random(seat), random.Random(seat)
            for _ in range(3):
                assert sample(fast).to_dict() == state.determinize(seat, slow).to_dict()
            assert fast.getstate() == slow.getstate()


@pytest.mark.parametrize(("rules_id", "players", "options"), CONFIGS, ids=IDS)
def test_a_restocked_state_looks_the_same_to_every_seat_and_keeps_every_hand(rules_id, players, options):
    # ``restocked`` (the reference ``perfect:sees=hands``, docs/ai.md) redraws only what nobody has seen: the
    # stock's order and later deals; every hand, the table and the payoffs stay, and it depends on rng alone
    for step, state in _positions(rules_id, players, options, seed=11, steps=80):
        copy = state.restocked(random.Random(step))
        for seat in (*range(players), None):
            assert copy.view(seat) == state.view(seat), f"restocked changed what seat {seat} sees"
        assert copy.running_payoffs() == state.running_payoffs()
        assert [m.id for m in copy.legal_moves()] == [m.id for m in state.legal_moves()]
        assert copy.to_dict() == state.restocked(random.Random(step)).to_dict()


def _seen_by(state: State, move, seat: int) -> str:
    """The event ``move`` produces first (the move's own event), as ``seat`` may see it."""
    ev = state.clone().play(move.id)[0]
    return json.dumps([ev["type"], ev["seat"], ev["data"], ev["secret"].get(seat)], sort_keys=True)


@pytest.mark.parametrize(("rules_id", "players", "options"), CONFIGS, ids=IDS)
def test_moves_share_an_observed_key_exactly_when_their_events_look_the_same_to_the_seat(
        rules_id, players, options):
    # the search keys other seats' moves by what the searching seat observes of them
    rng = random.Random(17)
    state = engine.new_game(rules_id, players=players, seed=3, options=options)
    steps = 0
    while not state.finished and steps < 120:
        moves = state.legal_moves()
        sample = [moves[i] for i in sorted(rng.sample(range(len(moves)), min(len(moves), 25)))]
        for seat in range(players):
            keys = state.observed_keys(sample, seat)
            ids = [state.observed_id(m, seat) for m in sample]
            looks = [_seen_by(state, m, seat) for m in sample]
            for i in range(len(sample)):
                for j in range(i):
                    same = looks[i] == looks[j]
                    assert (keys[i] == keys[j]) == same, (sample[i], sample[j], seat)
                    assert (ids[i] == ids[j]) == same, (sample[i], sample[j], seat)
            if seat == state.to_move:
                assert ids == [m.id for m in sample], "the mover observes its own moves in full"
            elif not type(state).hides_moves:
                assert ids == [m.id for m in sample], "a rule set that hides no move shows every move in full"
        state.apply(rng.choice(moves))
        steps += 1


def test_a_face_down_tien_gow_discard_looks_the_same_to_the_other_seats_whatever_its_tiles():
    from engine.tiengow import TienGowState

    state = TienGowState.from_position([["6-6", "1-1"], ["4-4", "3-1"], ["5-5", "2-2"], ["6-5", "6-4"]], banker=0)
    state.play("play:6-6")
    discards = [m for m in state.legal_moves() if m.action == "discard"]
    assert [m.id for m in discards] == ["discard:4-4", "discard:3-1"]
    for seat in (0, 2, 3):
        assert state.observed_id(discards[0], seat) == state.observed_id(discards[1], seat) == "discard:1 face down"
        assert len(set(state.observed_keys(discards, seat))) == 1
    assert len(set(state.observed_keys(discards, 1))) == 2


@pytest.mark.parametrize(("rules_id", "players", "options"), CONFIGS, ids=IDS)
def test_malformed_and_illegal_moves_are_refused_without_change(rules_id, players, options):
    state = engine.new_game(rules_id, players=players, seed=5, options=options)
    before = state.to_dict()
    for bad in ("", "???", "play:9-9", "play:banana", 42):
        with pytest.raises((engine.InvalidMove, engine.IllegalMove)):
            state.play(bad)  # type: ignore[arg-type]
    legal = state.legal_moves()[0].to_dict()
    for extra in ({"junk": "x" * 1000}, {"ID": legal["id"]}):
        with pytest.raises(engine.InvalidMove, match="has no field"):
            state.play({**legal, **extra})
    assert state.to_dict() == before


@pytest.mark.parametrize("rules_id", sorted(engine.RULES))
def test_options_are_validated_and_name_the_culprit(rules_id):
    rs = engine.RULES[rules_id]
    n = rs.default_players
    with pytest.raises(engine.BadOptions) as e:
        engine.new_game(rules_id, players=n, seed=1, options={"no_such_option": 1})
    assert e.value.option == "no_such_option"
    with pytest.raises(engine.BadOptions):
        engine.new_game(rules_id, players=rs.max_players + 1, seed=1)
    for o in rs.options:
        wrong = "x" if o.type is not str else 3
        with pytest.raises(engine.BadOptions) as e:
            engine.new_game(rules_id, players=n, seed=1, options={o.name: wrong})
        assert e.value.option == o.name
        if o.maximum is not None:
            with pytest.raises(engine.BadOptions):
                engine.new_game(rules_id, players=n, seed=1, options={o.name: o.maximum + 1})


def test_unknown_rules_are_refused():
    with pytest.raises(engine.UnknownRules):
        engine.new_game("chess", players=2, seed=1)
