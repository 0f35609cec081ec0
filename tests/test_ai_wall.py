"""The search on ``tiengow_wall``: strategic classes of moves (``ai.heuristics.tiengow_wall``
``move_class`` / ``distinct``) and the paired root (``ai.ismcts.paired_search``).

Rules checked (``engine/tiengow_wall.py``, ``docs/rules/tiengow_wall.md``): a column belongs to the owner of
its top tile; a follower's tile goes on top when it is of the column's suit and higher, otherwise underneath
at the very bottom; a higher Pai Gow pair takes over a standing pair.  So two placements that differ only in
which losing tile lies under which column leave the same game, and those are the only moves merged.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import pytest

import ai
import engine
from ai.greedy import heuristic
from ai.heuristics import tiengow_wall as heuristics
from ai.ismcts import paired_search
from engine.game import Move
from engine.tiengow_wall import TienGowWallState as W
from engine.tiengow_wall import lead_move, place_move, random_faces


def positions(players: int, count: int, seed: int, follows: bool | None = None) -> list[W]:
    """Seeded positions reached by random play; ``follows``: only follows (True) or only leads (False)."""
    rng = random.Random(f"wall-search/{players}/{seed}")
    out: list[W] = []
    game_seed = seed
    while len(out) < count:
        s = engine.new_game("tiengow_wall", players=players, seed=game_seed)
        game_seed += 1
        for _ in range(rng.randrange(0, 12)):
            if s.finished:
                break
            s.apply(rng.choice(s.legal_moves()))
        if not s.finished and (follows is None or bool(s.cols) == follows):
            out.append(s)
    return out


def standing_pair() -> W:
    """Seat 0 leads the pair 6-3+5-4 (a military Pai Gow pair: it stands); seat 1 holds the Supreme, 4-2+2-1,
    which is higher, and 1-1, which goes underneath either column."""
    s = W.from_hands([["6-3", "5-4", "1-1"], ["4-2", "2-1", "1-1"], ["6-6", "3-3", "4-1"], ["6-5", "5-5", "3-1"]],
                     leader=0)
    s.play("lead:6-3+5-4")
    return s


def outcome(state: W, move: Move) -> tuple[Any, ...]:
    """Everything the rules read after ``move``: hands, each column's top (tile and owner), the tiles on
    the table, the standing pair, the scores and whose turn it is; not the order of tiles under a top."""
    s = state.clone()
    s.apply(move)

    def tops(cols: list[list[int]] | None) -> Any:
        return None if cols is None else [c[-1] for c in cols]

    def cells(cols: list[list[int]] | None) -> Any:
        return None if cols is None else sorted(x for c in cols for x in c)

    return (s.hands, tops(s.cols), cells(s.cols), s.pair, s.out, s.points, s.game_cols, s.turn, s.leader,
            s.round_no, tops(s.last_cols), cells(s.last_cols), s.last_won, s.deals_done)


def follow_positions() -> list[W]:
    return [standing_pair(), *positions(4, 12, 1, follows=True), *positions(3, 6, 2, follows=True),
            *positions(2, 3, 3, follows=True)]


@pytest.mark.parametrize("state", follow_positions(), ids=lambda s: f"{s.players}p-seed{s.seed}-r{s.round_no}")
def test_placements_share_a_class_exactly_when_they_leave_the_same_game(state):
    by_class: dict[tuple[int, ...], set[Any]] = defaultdict(set)
    by_outcome: dict[Any, set[tuple[int, ...]]] = defaultdict(set)
    moves = list(state.legal_moves())
    for m in moves[:3000]:  # a 16-tile hand has thousands: the first 3000 cover many tile sets
        key = heuristics.move_class(state, m)
        out = repr(outcome(state, m))
        by_class[key].add(out)
        by_outcome[out].add(key)
    # merges what it should: one outcome per class; and nothing else: one class per outcome
    assert all(len(v) == 1 for v in by_class.values())
    assert all(len(v) == 1 for v in by_outcome.values())


def test_the_classes_do_merge_placements():
    """The check above has teeth only if classes hold several moves: most follows do."""
    merged = [len(heuristics.distinct(s)) < len(s.legal_moves()) for s in follow_positions()]
    assert sum(merged) > len(merged) // 2


def test_a_standing_pair_taken_over_is_a_class_of_its_own_each_way_round():
    s = standing_pair()
    cls = {m.id: heuristics.move_class(s, m) for m in s.legal_moves()}
    # the higher pair takes both columns whichever way round: two moves, two classes (the tops differ)
    for mid in ("place:4-2>0+2-1>1", "place:2-1>0+4-2>1"):
        assert [other for other, k in cls.items() if k == cls[mid]] == [mid]
    assert outcome(s, s.find_move("place:4-2>0+2-1>1"))[3] == 100  # the Supreme now stands


def test_moves_of_one_class_play_out_the_same():
    """Two placements of one class, continued by the same greedy play, end the game with the same payoffs."""
    checked = 0
    for s in positions(4, 10, 7, follows=True):
        groups: dict[tuple[int, ...], list[Move]] = defaultdict(list)
        for m in s.legal_moves():
            groups[heuristics.move_class(s, m)].append(m)
        for ms in groups.values():
            if len(ms) < 2:
                continue
            ends = set()
            for m in ms:
                w = s.clone()
                w.apply(m)
                rng = random.Random(0)
                while not w.finished:
                    w.apply(heuristics.greedy(w, w.to_move, rng))
                ends.add(tuple(w.running_payoffs()))
            assert len(ends) == 1
            checked += 1
    assert checked > 10


def test_every_lead_is_a_class_of_its_own():
    for s in positions(4, 5, 11, follows=False) + positions(2, 2, 12, follows=False):
        moves = list(s.legal_moves())
        assert heuristics.distinct(s) == moves
        assert len({heuristics.move_class(s, m) for m in moves}) == len(moves)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_distinct_keeps_the_first_legal_move_of_every_class(players):
    for s in positions(players, 6, 20 + players, follows=True):
        moves = list(s.legal_moves())
        reps = heuristics.distinct(s)
        first: dict[tuple[int, ...], Move] = {}
        for m in moves:
            first.setdefault(heuristics.move_class(s, m), m)
        assert reps == list(first.values())
        assert all(any(r is m for m in moves) for r in reps)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_root_moves_are_legal_in_every_sampled_world(players):
    """The paired root plays the searching seat's class representatives in worlds sampled from its
    information set: its hand is the same in all of them, so they are legal in every one."""
    rng = random.Random(players)
    for s in positions(players, 8, 40 + players):
        seat = s.to_move
        reps = heuristics.distinct(s)
        for _ in range(10):
            world = s.determinize(seat, rng)
            legal = {m.id for m in world.legal_moves()}
            assert all(m.id in legal for m in reps)


def test_the_search_never_applies_an_illegal_move(monkeypatch):
    """Every move the search plays, through ``apply`` or the greedy rollout's ``_play`` (which ``apply``
    calls too), is legal."""
    applied = []
    real = W._play

    def checked(self: W, faces: tuple[int, ...], log: Any = None) -> None:
        move = place_move(faces) if self.cols else lead_move(faces)
        assert move.id in {m.id for m in self.legal_moves()}, f"illegal {move.id}"
        applied.append(move.id)
        real(self, faces, log)

    monkeypatch.setattr(W, "_play", checked)
    for s in positions(4, 4, 60) + positions(3, 2, 61):
        d = ai.decide("ismcts", s, s.to_move, {"iterations": 120, "time_ms": 600_000}, seed=3)
        assert d.move in s.legal_moves()
    assert len(applied) > 1000


def test_the_paired_search_reads_nothing_beyond_the_information_set():
    """Called directly (not through ``ai.decide``), the search gives the same result from two states that
    look the same to the seat but hold different hidden hands: it samples the others' hands itself."""
    rng = random.Random(5)
    differed = 0
    for s in positions(4, 4, 80):
        seat = s.to_move
        other = s.determinize(seat, rng)
        assert other.view(seat) == s.view(seat)
        differed += other.hands != s.hands
        reps = heuristics.distinct(s)
        assert [m.id for m in heuristics.distinct(other)] == [m.id for m in reps]
        runs = [paired_search(x, seat, reps, iterations=150, time_ms=600_000,
                              policy=heuristics.playout, rng=random.Random(9)) for x in (s, other)]
        a, b = ([r[:4] + r[5:] for r in runs])  # all but the elapsed time
        assert a == b
    assert differed


def test_the_paired_search_spends_exactly_its_budget_and_picks_a_most_played_survivor():
    for s in positions(4, 6, 90):
        reps = heuristics.distinct(s)
        if len(reps) < 3:
            continue
        for n in (len(reps) // 2 or 1, 300):
            visits, totals, winner, done, _t, lo, hi = paired_search(
                s, s.to_move, reps, iterations=n, time_ms=600_000, policy=heuristics.playout, rng=random.Random(1))
            assert done == sum(visits) == n
            assert visits[winner] == max(visits)
            assert lo <= min(t / v for t, v in zip(totals, visits, strict=True) if v) <= hi


def test_a_rollout_that_declares_no_draws_gets_no_generator_and_one_that_draws_anyway_fails_loudly():
    """A greedy rollout without exploring moves (``greedy_with(explore=0)``, the playouts of the search of
    before) never draws, so the paired root seeds no generator per playout for it; the same search with a
    fresh generator per playout decides the same, and a rollout that drew after declaring it never does would
    stop the search, not skew it.  The shipped rollout explores, so it declares that it draws
    (``ROLLOUT_DRAWS``)."""
    assert heuristics.PLAYOUT_EXPLORE > 0.0 and heuristics.ROLLOUT_DRAWS is True
    _greedy, policy, rollout = heuristics.greedy_with(explore=0.0)
    s = positions(4, 1, 91)[0]
    reps = heuristics.distinct(s)
    runs = [paired_search(s, s.to_move, reps, iterations=200, time_ms=600_000, policy=policy,
                          rng=random.Random(4), rollout=rollout, rollout_draws=draws)
            for draws in (False, True)]
    assert runs[0][:4] == runs[1][:4]

    def drawing(state, rng):
        rng.random()
        rollout(state, rng)

    with pytest.raises(AssertionError, match="ROLLOUT_DRAWS"):
        paired_search(s, s.to_move, reps, iterations=20, time_ms=600_000, policy=policy,
                      rng=random.Random(4), rollout=drawing, rollout_draws=False)


def test_exploring_playouts_play_random_moves_at_their_share():
    """The search's playouts (rule: the playout policy, ``ai.heuristics.tiengow_wall.playout``) play a random
    move (``engine.tiengow_wall.random_faces``) with chance ``PLAYOUT_EXPLORE`` and the greedy engine's
    otherwise: over many sampled positions the share of moves that differ from greedy's sits near
    ``PLAYOUT_EXPLORE`` times the share of random moves that differ, and is zero with ``explore=0``."""
    from ai.heuristics import tiengow_wall as wall

    explore = wall.PLAYOUT_EXPLORE
    _g, plain, _r = wall.greedy_with(explore=0.0)
    differ = random_differ = total = 0
    for i, s in enumerate(positions(4, 60, 92)):
        seat = s.to_move
        greedy_move = wall.greedy(s, seat, random.Random(0))
        for k in range(20):
            total += 1
            differ += wall.playout(s, random.Random(f"{i}/{k}")) != greedy_move
            assert plain(s, random.Random(k)) == greedy_move
            faces = random_faces(s, seat, random.Random(f"random {i}/{k}"))
            random_differ += (place_move(faces) if s.cols else lead_move(faces)) != greedy_move
    expected = explore * random_differ / total
    assert total > 500 and abs(differ / total - expected) < 0.35 * expected
def test_only_the_wall_variant_opts_into_the_paired_root():
    assert [r for r in sorted(engine.RULES) if heuristic(r, "distinct") is not None] == ["tiengow_wall"]
    for rules_id in sorted(engine.RULES):
        s = engine.new_game(rules_id, players=engine.RULES[rules_id].default_players, seed=1)
        d = ai.decide("ismcts", s, s.to_move, {"iterations": 30, "time_ms": 600_000}, seed=1)
        assert (d.stats.get("search") == "paired") == (rules_id == "tiengow_wall")


def test_a_single_class_costs_no_search():
    # two columns, both of seat 1's tiles go underneath either: its two placements are one class
    s = W.from_hands([["6-6", "1-1"], ["3-1", "4-1"], ["2-2", "5-1"], ["4-3", "6-1"]], leader=0)
    s.play("lead:6-6+1-1")
    assert len(s.legal_moves()) == 2 and len(heuristics.distinct(s)) == 1
    d = ai.decide("ismcts", s, 1, {"iterations": 500}, seed=1)
    assert d.stats["iterations"] == 0 and d.move.id == "place:4-1>0+3-1>1" == s.legal_moves()[0].id
