"""Tien Gow, wall-and-dice variant (seed 003, ``docs/rules/tiengow_wall.md`` and its
decisions): one test per rule, on positions built from chosen hands."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

import engine
from ai.heuristics import tiengow_wall as heuristics
from engine.tiengow_wall import NAME, TienGowWallState, pair_rank, parse_tile

W = TienGowWallState


def ids(state: W) -> set[str]:
    return {m.id for m in state.legal_moves()}


def columns(state: W) -> list[list[tuple[str, int]]]:
    """The current round's columns, bottom to top, as (tile, seat)."""
    return [[(c["tile"], c["seat"]) for c in col["tiles"]] for col in state.view(None)["table"]["columns"]]


def last_won(state: W) -> list[int]:
    return state.view(None)["table"]["last_round"]["won"]


def all_tiles(state: W) -> Counter[str]:
    c: Counter[str] = Counter()
    for h in state.to_dict()["hands"]:
        c.update(h)
    return c


# --------------------------------------------------------------------------- deal

def test_four_players_are_dealt_eight_tiles_each_from_the_whole_set():
    s = engine.new_game("tiengow_wall", players=4, seed=11)
    assert [len(h) for h in s.to_dict()["hands"]] == [8, 8, 8, 8]
    tiles = all_tiles(s)
    assert sum(tiles.values()) == 32 and tiles["6-6"] == 2 and tiles["6-3"] == 1


def test_two_players_are_dealt_sixteen_tiles_each():
    s = engine.new_game("tiengow_wall", players=2, seed=11)
    assert [len(h) for h in s.to_dict()["hands"]] == [16, 16]
    assert sum(all_tiles(s).values()) == 32


def test_three_players_play_without_the_commanders_ten_tiles_each():
    for seed in range(5):
        s = engine.new_game("tiengow_wall", players=3, seed=seed)
        assert [len(h) for h in s.to_dict()["hands"]] == [10, 10, 10]
        tiles = all_tiles(s)
        assert sum(tiles.values()) == 30
        assert tiles["4-2"] == 0 and tiles["2-1"] == 0


def test_three_players_can_never_hold_a_commander():
    # the 3-player set has no 4-2 / 2-1 at all, so a position with one is refused
    with pytest.raises(ValueError):
        W.from_hands([["4-2"], ["6-6"], ["1-1"]], leader=0)


# --------------------------------------------------------------------------- dice for the first leader

@pytest.mark.parametrize("players", [2, 3, 4])
def test_first_leader_is_chosen_by_a_seeded_dice_throw_of_seat_zero(players):
    openers = set()
    for seed in range(30):
        s = engine.new_game("tiengow_wall", players=players, seed=seed)
        dice = s.view(None)["table"]["dice"]
        expect = random.Random(f"{seed}/0/opener")
        d1, d2 = expect.randint(1, 6), expect.randint(1, 6)
        assert dice["purpose"] == "first leader" and dice["thrower"] == 0
        assert dice["throws"] == [[[0, d1, d2]]]
        # seat 0 counts d1 + d2 players in turn order, counting himself as 1
        assert s.to_move == dice["winner"] == (d1 + d2 - 1) % players
        assert engine.new_game("tiengow_wall", players=players, seed=seed).to_dict() == s.to_dict()
        openers.add(s.to_move)
    assert openers == set(range(players))


# --------------------------------------------------------------------------- leads and placements

def test_a_lead_is_any_one_to_four_tiles():
    s = W.from_hands([["6-6", "5-5", "3-3", "2-2", "6-3"], ["1-1", "4-4", "3-1", "6-5", "6-4"]], leader=0)
    sizes = Counter(len(m.tiles) for m in s.legal_moves())
    assert sizes == {1: 5, 2: 10, 3: 10, 4: 5}
    assert all(m.action == "lead" for m in s.legal_moves())


def test_identical_tiles_give_one_lead_and_one_placement():
    s = W.from_hands([["6-6", "6-6", "1-1"], ["5-5", "5-5", "4-4"]], leader=0)
    assert ids(s) == {"lead:6-6", "lead:1-1", "lead:6-6+6-6", "lead:6-6+1-1", "lead:6-6+6-6+1-1"}
    s.play("lead:6-6+1-1")
    assert ids(s) == {"place:5-5>0+5-5>1", "place:5-5>0+4-4>1", "place:4-4>0+5-5>1"}


def test_each_follower_puts_one_tile_on_every_column_choosing_where():
    s = W.from_hands([["6-6", "3-1"], ["1-1", "6-3"]], leader=0)
    s.play("lead:6-6+3-1")
    assert ids(s) == {"place:1-1>0+6-3>1", "place:6-3>0+1-1>1"}
    s.play("place:6-3>0+1-1>1")
    t = s.view(None)["table"]["last_round"]["columns"]
    assert [[c["tile"] for c in col["tiles"]] for col in t] == [["6-3", "6-6"], ["3-1", "1-1"]]


def test_move_ids_accept_tiles_in_any_order_and_halves_either_way():
    s = W.from_hands([["6-6", "3-1"], ["1-1", "6-3"]], leader=0)
    s.play("lead:1-3+6-6")
    assert columns(s) == [[("6-6", 0)], [("3-1", 0)]]
    s.play("place:1-1>1+3-6>0")
    assert last_won(s) == [1, 1]


def test_a_placement_object_pairs_tiles_with_columns():
    s = W.from_hands([["6-6", "3-1"], ["1-1", "6-3"]], leader=0)
    s.play({"action": "lead", "tiles": ["3-1", "6-6"]})
    s.play({"action": "place", "tiles": ["1-1", "3-6"], "columns": [1, 0]})
    assert last_won(s) == [1, 1]


def test_a_placement_must_cover_every_column_once():
    s = W.from_hands([["6-6", "3-1"], ["1-1", "6-3"]], leader=0)
    s.play("lead:6-6+3-1")
    before = s.to_dict()
    for bad in ("place:1-1>0", "place:1-1>0+6-3>0", "place:1-1>0+6-3>2", "place:1-1>x", "place:9-9>0+1-1>1"):
        with pytest.raises((engine.IllegalMove, engine.InvalidMove)):
            s.play(bad)
    assert s.to_dict() == before


# --------------------------------------------------------------------------- per-column beating

def test_a_higher_tile_of_the_same_suit_goes_on_top_and_takes_the_column():
    s = W.from_hands([["3-3"], ["1-1"]], leader=0)
    s.play("lead:3-3")
    s.play("place:1-1>0")
    assert s.view(None)["table"]["last_round"]["columns"][0]["owner"] == 1
    assert last_won(s) == [0, 1]


def test_a_lower_tile_goes_underneath():
    s = W.from_hands([["1-1"], ["3-3"]], leader=0)
    s.play("lead:1-1")
    s.play("place:3-3>0")
    col = s.view(None)["table"]["last_round"]["columns"][0]
    assert [c["tile"] for c in col["tiles"]] == ["3-3", "1-1"] and col["owner"] == 0


def test_an_equal_tile_stays_underneath():
    s = W.from_hands([["6-3", "6-6"], ["5-4", "6-6"]], leader=0)
    s.play("lead:6-6+6-3")
    s.play("place:6-6>0+5-4>1")
    assert last_won(s) == [2, 0]


def test_a_tile_of_the_other_suit_goes_underneath_however_strong():
    s = W.from_hands([["4-1", "5-1"], ["6-6", "6-3"]], leader=0)
    s.play("lead:5-1+4-1")
    s.play("place:6-3>0+6-6>1")  # the nine on the civil 5-1, Heaven on the military five
    assert last_won(s) == [2, 0]


def test_the_column_belongs_to_the_owner_of_its_top_tile():
    s = W.from_hands([["5-1"], ["6-1"], ["2-2"], ["6-4"]], leader=0)
    s.play("lead:5-1")
    s.play("place:6-1>0")  # 6-1 beats 5-1
    s.play("place:2-2>0")  # bench beats long-leg seven
    s.play("place:6-4>0")  # partition is below the bench: underneath
    col = s.view(None)["table"]["last_round"]["columns"][0]
    assert [(c["tile"], c["seat"]) for c in col["tiles"]] == [("6-4", 3), ("5-1", 0), ("6-1", 1), ("2-2", 2)]
    assert col["owner"] == 2 and last_won(s) == [0, 0, 1, 0]


def test_commanders_rank_above_the_nines_as_singles():
    # three columns, so no Pai Gow pair is involved: each commander goes on top of a nine by itself
    s = W.from_hands([["6-3", "5-4", "1-1"], ["4-2", "2-1", "5-1"]], leader=0)
    s.play("lead:6-3+5-4+1-1")
    s.play("place:4-2>0+2-1>1+5-1>2")
    assert last_won(s) == [1, 2]


def test_commanders_are_equal_to_each_other():
    for lead, follow in (("4-2", "2-1"), ("2-1", "4-2")):
        s = W.from_hands([[lead], [follow]], leader=0)
        s.play(f"lead:{lead}")
        s.play(f"place:{follow}>0")
        assert last_won(s) == [1, 0]


def test_an_equal_nine_a_lower_military_tile_and_a_civil_tile_all_go_under_a_nine():
    s = W.from_hands([["6-3"], ["6-6"], ["6-2"], ["5-4"]], leader=0)
    s.play("lead:6-3")
    for seat, t in ((1, "6-6"), (2, "6-2"), (3, "5-4")):
        assert s.to_move == seat  # followers in turn order
        s.play(f"place:{t}>0")
    assert last_won(s) == [1, 0, 0, 0]


# --------------------------------------------------------------------------- Pai Gow pairs

def test_pai_gow_pairs_rank_supreme_then_civil_in_civil_order_then_military_nine_eight_seven_five():
    order = [("4-2", "2-1"), *[(t, t) for t in ("6-6", "1-1", "4-4", "3-1", "5-5", "3-3", "2-2", "6-5", "6-4",
                                                 "6-1", "5-1")],
             ("6-3", "5-4"), ("6-2", "5-3"), ("5-2", "4-3"), ("4-1", "3-2")]
    ranks = [pair_rank(parse_tile(a), parse_tile(b)) for a, b in order]
    assert all(r > 0 for r in ranks)
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) == len(ranks)
    assert pair_rank(parse_tile("6-6"), parse_tile("1-1")) == 0
    assert pair_rank(parse_tile("4-2"), parse_tile("4-1")) == 0


def test_a_higher_civil_pair_takes_both_columns_of_a_military_pair():
    # tile by tile the civil 5-1s would go underneath the nines; as a higher Pai Gow pair they take both
    s = W.from_hands([["6-3", "5-4"], ["5-1", "5-1"]], leader=0)
    s.play("lead:6-3+5-4")
    s.play("place:5-1>0+5-1>1")
    assert last_won(s) == [0, 2]


def test_the_supreme_takes_both_columns_of_a_heaven_pair():
    s = W.from_hands([["6-6", "6-6"], ["4-2", "2-1"]], leader=0)
    s.play("lead:6-6+6-6")
    s.play("place:2-1>0+4-2>1")
    assert last_won(s) == [0, 2]
    assert [[c["tile"] for c in col["tiles"]] for col in s.view(None)["table"]["last_round"]["columns"]] == [
        ["6-6", "2-1"], ["6-6", "4-2"]]


def test_a_lower_pair_is_settled_tile_by_tile():
    s = W.from_hands([["1-1", "1-1"], ["3-3", "3-3"]], leader=0)
    s.play("lead:1-1+1-1")
    s.play("place:3-3>0+3-3>1")
    assert last_won(s) == [2, 0]


def test_a_lower_military_pair_cannot_take_a_higher_one():
    s = W.from_hands([["6-3", "5-4"], ["6-2", "5-3"]], leader=0)
    s.play("lead:6-3+5-4")
    s.play("place:6-2>0+5-3>1")
    assert last_won(s) == [2, 0]


def test_two_led_tiles_that_are_no_pair_are_settled_tile_by_tile():
    # the follower's Earth pair would beat any civil pair, but the lead is no pair
    s = W.from_hands([["5-5", "6-2"], ["1-1", "1-1"]], leader=0)
    s.play("lead:5-5+6-2")
    assert s.view(None)["table"]["standing_pair"] is None
    s.play("place:1-1>0+1-1>1")
    assert last_won(s) == [1, 1]


def test_a_follower_without_a_higher_pair_settles_a_pair_lead_tile_by_tile():
    s = W.from_hands([["5-1", "5-1"], ["6-6", "6-3"]], leader=0)
    s.play("lead:5-1+5-1")
    s.play("place:6-6>0+6-3>1")
    assert last_won(s) == [1, 1]


def test_a_later_follower_must_beat_the_pair_that_took_over():
    s = W.from_hands([["5-1", "5-1"], ["3-3", "3-3"], ["2-2", "2-2"], ["6-6", "6-6"]], leader=0)
    s.play("lead:5-1+5-1")
    s.play("place:3-3>0+3-3>1")  # higher pair: takes both columns and now stands
    assert s.view(None)["table"]["standing_pair"] == {"tiles": ["3-3", "3-3"], "seat": 1}
    s.play("place:2-2>0+2-2>1")  # beats the led 5-1s but not the standing 3-3s: underneath
    assert [c[-1] for c in columns(s)] == [("3-3", 1), ("3-3", 1)]
    s.play("place:6-6>0+6-6>1")
    assert last_won(s) == [0, 0, 0, 2]


def test_a_pair_broken_tile_by_tile_no_longer_stands():
    s = W.from_hands([["5-1", "5-1"], ["6-6", "6-3"], ["3-3", "3-3"]], leader=0)
    s.play("lead:5-1+5-1")
    s.play("place:6-6>0+6-3>1")  # Heaven goes on top of column 0 tile by tile: the pair is broken
    assert s.view(None)["table"]["standing_pair"] is None
    s.play("place:3-3>0+3-3>1")  # would beat the 5-1 pair, but only column 1 is taken, tile by tile
    assert last_won(s) == [0, 1, 1]


# --------------------------------------------------------------------------- next leader, points, games

def test_the_owner_of_most_columns_leads_the_next_round():
    s = W.from_hands([["6-6", "1-1", "6-3", "2-2"], ["5-1", "5-1", "5-2", "6-5"]], leader=1)
    s.play("lead:5-2+5-1+5-1")
    s.play("place:6-6>0+6-3>1+2-2>2")  # 6-6 under the seven; the nine on 5-1 goes under; bench beats 5-1
    assert last_won(s) == [1, 2]
    assert s.to_move == 1 and s.view(None)["table"]["leader"] == 1


def test_a_tie_for_most_columns_is_broken_by_a_seeded_dice_throw_among_the_tied():
    winners = set()
    for seed in range(16):
        s = W.from_hands([["6-6", "5-1", "3-3"], ["1-1", "6-1", "2-2"], ["4-4", "6-3", "3-1"]],
                         leader=0, seed=seed)
        s.play("lead:6-6+5-1")
        s.play("place:1-1>0+6-1>1")  # seat 1 takes column 1
        s.play("place:4-4>0+6-3>1")  # nothing more: seats 0 and 1 tie with one column each
        dice = s.view(None)["table"]["dice"]
        assert dice["purpose"] == "tie" and dice["tied"] == [0, 1]
        rng = random.Random(f"{seed}/0/0/tie")
        contenders = [0, 1]
        for throw in dice["throws"]:
            assert throw == [[p, rng.randint(1, 6), rng.randint(1, 6)] for p in contenders]
            top = max(d1 + d2 for _, d1, d2 in throw)
            contenders = [p for p, d1, d2 in throw if d1 + d2 == top]
        assert contenders == [dice["winner"]] and s.to_move == dice["winner"]
        winners.add(dice["winner"])
    assert winners == {0, 1}


def test_one_point_per_column_won():
    s = W.from_hands([["6-6", "6-3", "3-1", "5-5"], ["1-1", "6-2", "2-2", "6-1"]], leader=0)
    s.play("lead:6-6+5-5+6-3+3-1")
    s.play("place:1-1>0+2-2>1+6-2>2+6-1>3")
    assert s.result()["scores"] == [4, 0]
    s2 = W.from_hands([["6-6", "6-3", "3-1", "5-5"], ["1-1", "6-2", "2-2", "6-1"]], leader=0)
    s2.play("lead:6-6+3-1")
    s2.play("place:6-2>0+1-1>1")  # 1-1 beats the goose
    assert s2.result()["scores"] == [1, 1]


def test_running_payoffs_are_points_minus_the_mean():
    s = W.from_hands([["6-6", "6-3", "5-5"], ["1-1", "6-2", "2-2"], ["4-4", "5-2", "6-4"]], leader=0)
    s.play("lead:6-6+5-5+6-3")
    s.play("place:1-1>0+2-2>1+6-2>2")
    s.play("place:4-4>0+6-4>1+5-2>2")
    assert s.result()["scores"] == [3, 0, 0]
    pts = s.result()["scores"]
    mean = sum(pts) / 3
    assert s.running_payoffs() == pytest.approx([p - mean for p in pts])


def test_a_game_ends_when_the_hands_are_empty_and_reports_columns_per_seat():
    s = W.from_hands([["6-6", "5-5"], ["1-1", "6-3"], ["2-2", "4-4"]], leader=0)
    s.play("lead:6-6")
    s.play("place:1-1>0")
    s.play("place:4-4>0")
    assert s.to_move == 0 and not s.finished
    s.play("lead:5-5")
    s.play("place:6-3>0")
    s.play("place:2-2>0")
    res = s.result()
    assert s.finished and res["reason"]
    assert res["deals"] == [{"game": 1, "opener": 0, "columns": [2, 0, 0], "last_round_winner": 0}]
    assert res["scores"] == [2, 0, 0] and res["ranking"] == [0, 1, 2]
    assert res["payoffs"] == pytest.approx([4 / 3, -2 / 3, -2 / 3])


def test_the_next_game_is_opened_by_the_winner_of_the_previous_games_last_round():
    s = W.from_hands([["6-3"], ["6-6"], ["4-2"], ["6-1"]], leader=0, games=2, seed=3)
    s.play("lead:6-3")
    s.play("place:6-6>0")
    s.play("place:4-2>0")  # the commander beats the nine
    s.play("place:6-1>0")
    assert s.deals_done == 1
    assert s.to_move == 2 and s.view(None)["table"]["opener"] == 2 and s.view(None)["table"]["game"] == 2
    assert [len(h) for h in s.to_dict()["hands"]] == [8, 8, 8, 8]
    assert sum(all_tiles(s).values()) == 32


def test_the_match_plays_the_given_number_of_games_and_ranks_by_points():
    s = engine.new_game("tiengow_wall", players=3, seed=4, options={"games": 3})
    rng = random.Random(4)
    while not s.finished:
        s.apply(heuristics.playout(s, rng))
    res = s.result()
    assert len(res["deals"]) == 3 and s.deals_done == 3
    assert [d["game"] for d in res["deals"]] == [1, 2, 3]
    # every game distributes its columns: as many as leads made, one point each
    assert sum(res["scores"]) == sum(sum(d["columns"]) for d in res["deals"])
    assert [res["scores"][p] for p in res["ranking"]] == sorted(res["scores"], reverse=True)
    for prev, nxt in zip(res["deals"], res["deals"][1:], strict=False):
        assert nxt["opener"] == prev["last_round_winner"]


def test_games_option_is_bounded_one_to_a_hundred():
    with pytest.raises(engine.BadOptions):
        engine.new_game("tiengow_wall", players=4, seed=1, options={"games": 0})
    with pytest.raises(engine.BadOptions):
        engine.new_game("tiengow_wall", players=4, seed=1, options={"games": 101})
    with pytest.raises(engine.BadOptions):
        engine.new_game("tiengow_wall", players=5, seed=1)


# --------------------------------------------------------------------------- information

def test_the_view_hides_other_hands_and_shows_the_table():
    s = W.from_hands([["6-6", "5-3"], ["1-1", "4-3"], ["2-2", "6-2"]], leader=0)
    s.play("lead:6-6")
    v1 = s.view(1)
    assert v1["hand"] == ["4-3", "1-1"] and v1["you"] == 1
    assert [x["hand_size"] for x in v1["seats"]] == [1, 2, 2]
    text = json.dumps(v1)
    for hidden in ("5-3", "6-2"):  # single-copy tiles held by seats 0 and 2
        assert hidden not in text
    spectator = s.view(None)
    assert spectator["hand"] is None and "4-3" not in json.dumps(spectator)
    assert spectator["table"]["columns"] == [{"tiles": [{"tile": "6-6", "seat": 0}], "owner": 0}]


def test_tiles_put_underneath_are_face_up():
    s = W.from_hands([["6-6", "5-3"], ["1-1", "4-3"], ["2-2", "6-2"]], leader=0)
    before = Counter(s.view(None)["table"]["played"])  # from_hands counts tiles in no hand as played
    s.play("lead:6-6")
    s.play("place:4-3>0")
    assert columns(s) == [[("4-3", 1), ("6-6", 0)]]
    s.play("place:2-2>0")
    after = Counter(s.view(None)["table"]["played"])
    assert after - before == Counter(["2-2", "4-3", "6-6"])
    col = s.view(2)["table"]["last_round"]["columns"][0]
    assert [c["tile"] for c in col["tiles"]] == ["2-2", "4-3", "6-6"]


def test_determinize_resamples_other_hands_from_unseen_tiles_and_replaces_the_seed():
    s = engine.new_game("tiengow_wall", players=4, seed=8, options={"games": 2})
    s.play(s.legal_moves()[-1])
    seat = s.to_move
    own = s.to_dict()["hands"][seat]
    seen_others = Counter()
    for k in range(20):
        w = s.determinize(seat, random.Random(k))
        hands = w.to_dict()["hands"]
        assert hands[seat] == own
        assert [len(h) for h in hands] == [len(h) for h in s.to_dict()["hands"]]
        assert w.seed != s.seed
        assert all_tiles(w) + Counter(t for col in columns(w) for t, _ in col) == all_tiles(s) + Counter(
            t for col in columns(s) for t, _ in col)
        for p, h in enumerate(hands):
            if p != seat:
                seen_others[(p, tuple(h))] += 1
    assert len(seen_others) > 3  # the other hands really are resampled


# --------------------------------------------------------------------------- heuristics

def test_greedy_follower_takes_a_column_cheaply_and_dumps_its_weakest_tile():
    s = W.from_hands([["5-1", "6-3", "5-5"], ["6-6", "6-1", "4-1"]], leader=0)
    s.play("lead:6-3+5-1")
    move = heuristics.greedy(s, 1, random.Random(1))
    # 6-1 is the cheapest tile that beats the 5-1; the nine cannot be beaten, so the weak five goes under it
    assert move.id == "place:4-1>0+6-1>1"
    assert move.id in ids(s)


def test_greedy_leader_leads_the_tiles_nobody_can_beat():
    s = W.from_hands([["6-6", "6-6", "6-3", "5-1"], ["1-1", "1-1", "4-4", "2-2"]], leader=0)
    move = heuristics.greedy(s, 0, random.Random(1))
    # nothing unseen beats a Heaven, and the commanders are out of this position, so the nine is safe too
    assert move.id == "lead:6-6+6-6+6-3" and move.id in ids(s)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_heuristic_moves_are_always_legal(players):
    rng = random.Random(players)
    s = engine.new_game("tiengow_wall", players=players, seed=players)
    while not s.finished:
        m = heuristics.greedy(s, s.to_move, rng) if s.to_move == 0 else heuristics.playout(s, rng)
        assert m.id in ids(s)
        s.apply(m)


def test_names_are_written_high_half_first():
    assert all(int(n[0]) >= int(n[2]) for n in NAME)


# --------------------------------------------------------------------------- move lists: order, laziness, memory

def _reference_ids(state: W) -> list[str]:
    """The legal move ids rebuilt from the rules with plain itertools and strings (the engine's lists are
    lazy and counted by arithmetic): leads are the distinct tile sets of 1..4 tiles, by size, in
    ``combinations`` order; follows are the distinct tile sets of one tile per column in ``combinations``
    order, each with its distinct orders in ``permutations`` order."""
    from itertools import combinations, permutations

    hand = sorted(parse_tile(t) for t in state.view(state.to_move)["hand"])
    n = len(state.view(None)["table"]["columns"])
    if n == 0:
        return ["lead:" + "+".join(NAME[f] for f in c) for k in range(1, min(4, len(hand)) + 1)
                for c in dict.fromkeys(combinations(hand, k))]
    return ["place:" + "+".join(f"{NAME[f]}>{i}" for i, f in enumerate(p))
            for c in dict.fromkeys(combinations(hand, n)) for p in dict.fromkeys(permutations(c))]


def test_move_lists_list_every_lead_and_placement_in_combination_then_permutation_order():
    for seed in range(6):
        s = engine.new_game("tiengow_wall", players=2, seed=seed)
        rng = random.Random(seed)
        while not s.finished:
            moves = s.legal_moves()
            assert [m.id for m in moves] == _reference_ids(s)
            s.play(moves[rng.randrange(len(moves))])


def test_picking_a_move_by_index_gives_the_same_move_as_the_filled_list():
    # a 16-tile follower facing a 4-tile lead: ~26000 placements, which a random pick must not build
    s = engine.new_game("tiengow_wall", players=2, seed=3)
    s.play(next(m for m in s.legal_moves() if len(m.tiles) == 4))
    lazy = s.legal_moves()
    full = [m.id for m in s.legal_moves()]
    assert len(lazy) == len(full) > 10000
    rng = random.Random(1)
    for i in [0, 1, len(full) - 1, -1, -len(full), *rng.sample(range(len(full)), 300)]:
        assert lazy[i].id == full[i]
        assert lazy[i].to_dict() == {"id": full[i], "action": "place", "tiles": list(lazy[i].tiles),
                                     "columns": [0, 1, 2, 3]}
    for bad in (len(full), -len(full) - 1):
        with pytest.raises(IndexError):
            lazy[bad]


def test_legal_move_lists_behave_as_plain_lists_the_caller_owns():
    import copy
    import pickle

    s = engine.new_game("tiengow_wall", players=2, seed=5)
    s.play(next(m for m in s.legal_moves() if len(m.tiles) == 3))
    ref = [m.id for m in s.legal_moves()]
    a = s.legal_moves()
    assert a[2:5] == [s.legal_moves()[i] for i in range(2, 5)]
    assert a[-1] in s.legal_moves() and a == s.legal_moves() and s.legal_moves() == a and bool(a)
    assert [m.id for m in s.legal_moves() + s.legal_moves()] == ref + ref
    assert [m.id for m in list(s.legal_moves()) + s.legal_moves()] == ref + ref
    assert [m.id for m in pickle.loads(pickle.dumps(s.legal_moves()))] == ref
    assert [m.id for m in copy.deepcopy(s.legal_moves())] == ref
    assert [m.id for m in [*s.legal_moves()]] == [m.id for m in reversed(s.legal_moves())][::-1] == ref
    # shuffling or emptying a returned list leaves the next one untouched
    random.Random(0).shuffle(a)
    b = s.legal_moves()
    b.clear()
    b.append(a[0])
    assert [m.id for m in s.legal_moves()] == ref
    assert s.legal_moves().index(s.legal_moves()[7]) == 7


def test_move_caches_stay_within_their_limits(monkeypatch):
    import engine.tiengow_wall as wall

    # empty tables with tiny limits, so that a few games overflow every table many times over
    for name in ("_PLACE_MOVES", "_PLACEMENTS", "_LISTS", "_ORDERS"):
        monkeypatch.setattr(wall, name, {})
    monkeypatch.setattr(wall, "_list_refs", 0)
    monkeypatch.setattr(wall, "_PLACE_LIMIT", 500)
    monkeypatch.setattr(wall, "_LIST_REFS", 3000)
    monkeypatch.setattr(wall, "_ORDERS_LIMIT", 50)
    for players in (2, 3, 4):
        for seed in range(3):
            s = engine.new_game("tiengow_wall", players=players, seed=seed)
            rng = random.Random(seed)
            while not s.finished:
                moves = s.legal_moves()
                if rng.random() < 0.3:
                    assert [m.id for m in moves] == _reference_ids(s)  # fills the list from the tables
                s.play(moves[rng.randrange(len(moves))])
                assert len(wall._PLACE_MOVES) <= 500
                assert wall._list_refs <= 3000 and sum(map(len, wall._LISTS.values())) == wall._list_refs
                assert len(wall._ORDERS) <= 50
                # the per-tile-set lists hold interned placements only, so no table keeps a second copy
                assert all(wall._PLACE_MOVES.get(m.code) is m for ms in wall._PLACEMENTS.values() for m in ms)
