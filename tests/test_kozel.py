"""Kozel (docs/rules/kozel.md, seed 002): each test names the rule it checks.

Exact situations are built with ``KozelState.from_position`` (chosen hands, bazaar and line); rules that are
about whole games (the fish, determinizations) are checked as properties over seeded random games.
"""

from __future__ import annotations

import json
import random

import pytest

import engine
from engine.kozel import (
    NUM_TILES,
    OPENING_ORDER,
    OUTRANKED_BY,
    KozelState,
    find_opener,
    hand_value,
    mask_of,
    names,
)
from engine.tiles import D_HI, D_LO, D_NAME, parse_domino


def ids(state: KozelState) -> list[str]:
    return [m.id for m in state.legal_moves()]


def hand(*tiles: str) -> int:
    return mask_of([parse_domino(t) for t in tiles])


# --------------------------------------------------------------------------- opening (kozel.md §3)

def test_holder_of_the_highest_double_opens_and_must_lead_it():
    st = KozelState.from_position([["5-5", "6-5"], ["6-6", "0-0"], ["4-4", "3-1"]])
    assert st.to_move == 1
    assert ids(st) == ["play:6-6"]


def test_without_6_6_the_next_highest_double_opens():
    st = KozelState.from_position([["4-4", "6-5"], ["3-3", "6-4"], ["5-5", "0-0"]])
    assert st.to_move == 2 and ids(st) == ["play:5-5"]


def test_the_lone_low_double_beats_every_non_double():
    st = KozelState.from_position([["6-5", "6-4"], ["0-0", "1-0"]])
    assert st.to_move == 1 and ids(st) == ["play:0-0"]


def test_without_any_double_the_highest_non_double_opens():
    st = KozelState.from_position([["6-4", "5-4"], ["6-5", "1-0"], ["6-3", "2-1"]])
    assert st.to_move == 1 and ids(st) == ["play:6-5"]


def test_non_doubles_rank_by_high_half_then_low_half_not_by_pips():
    # 6-0 (6 pips) outranks 5-4 (9 pips); 6-3 and 5-4 have equal pips but 6-3 ranks first.
    assert find_opener([hand("5-4", "4-3"), hand("6-0", "1-0")]) == (1, parse_domino("6-0"))
    assert find_opener([hand("5-4"), hand("6-3")]) == (1, parse_domino("6-3"))
    assert find_opener([hand("5-3", "4-1"), hand("5-4", "2-0")]) == (1, parse_domino("5-4"))
    assert OPENING_ORDER[:8] == tuple(parse_domino(t) for t in
                                      ("6-6", "5-5", "4-4", "3-3", "2-2", "1-1", "0-0", "6-5"))
    assert OPENING_ORDER[-1] == parse_domino("1-0")


def test_opener_must_lead_the_deciding_tile_even_with_other_tiles_in_hand():
    st = KozelState.from_position([["6-6", "6-5", "5-5", "4-1"], ["3-3", "2-1"]])
    assert ids(st) == ["play:6-6"]
    with pytest.raises(engine.IllegalMove):
        st.play("play:6-5")


def test_a_new_game_deals_by_player_count_and_opens_by_the_seed_rule():
    for players, size, bazaar in ((2, 7, 14), (3, 5, 13), (4, 5, 8)):
        st = engine.new_game("kozel", players=players, seed=11)
        assert isinstance(st, KozelState)
        assert [s["hand_size"] for s in st.view(None)["seats"]] == [size] * players
        assert st.view(None)["table"]["bazaar_size"] == bazaar
        assert (st.to_move, st.lead) == find_opener(st.hands)


# --------------------------------------------------------------------------- a turn (kozel.md §4)

def test_a_tile_must_match_an_end_and_its_other_half_becomes_the_end():
    st = KozelState.from_position([["6-3", "4-1"], ["2-2", "5-0"]],
                                  line=[("6-5", "first")], to_move=0, bazaar=["1-1"])
    assert ids(st) == ["play:6-3@left"]
    st.play("play:3-6@left")
    assert (st.left, st.right) == (3, 5)
    assert st.view(None)["table"]["line"] == [{"tile": "6-3", "halves": [3, 6]},
                                             {"tile": "6-5", "halves": [6, 5]}]
    assert st.to_move == 1


def test_a_tile_fitting_both_ends_may_go_on_either():
    st = KozelState.from_position([["6-5", "4-1"], ["2-2", "1-0"]],
                                  line=[("6-3", "first"), ("5-3", "right")], to_move=0)
    assert (st.left, st.right) == (6, 5)
    assert ids(st) == ["play:6-5@left", "play:6-5@right"]
    st.play("play:5-6@right")
    assert (st.left, st.right) == (6, 6)


def test_no_draw_or_pass_while_holding_a_playable_tile():
    st = KozelState.from_position([["6-1", "2-0"], ["3-3", "4-4"]],
                                  line=[("6-6", "first")], to_move=0, bazaar=["1-0"])
    assert ids(st) == ["play:6-1@left", "play:6-1@right"]
    for illegal in ("draw", "pass"):
        with pytest.raises(engine.IllegalMove):
            st.play(illegal)


def test_two_doubles_fitting_the_two_ends_may_be_laid_in_one_move():
    st = KozelState.from_position([["5-5", "3-3", "1-0"], ["2-2", "4-1"]],
                                  line=[("5-3", "first")], to_move=0, bazaar=["6-6"])
    assert ids(st) == ["play:5-5@left", "play:3-3@right", "doubles:5-5+3-3"]
    st.play("doubles:3-3+5-5")  # halves and tiles in either order
    assert st.hands[0] == hand("1-0")
    assert (st.left, st.right) == (5, 3)
    assert st.view(None)["table"]["line"] == [{"tile": "5-5", "halves": [5, 5]},
                                             {"tile": "5-3", "halves": [5, 3]},
                                             {"tile": "3-3", "halves": [3, 3]}]
    assert st.to_move == 1


def test_two_doubles_move_needs_both_doubles_and_two_different_ends():
    one = KozelState.from_position([["5-5", "2-2"], ["4-1", "6-0"]], line=[("5-3", "first")], to_move=0)
    assert not any(m.action == "doubles" for m in one.legal_moves())
    with pytest.raises(engine.IllegalMove):
        one.play("doubles:5-5+3-3")
    equal_ends = KozelState.from_position(
        [["5-5", "6-0"], ["4-1", "2-0"]],
        line=[("5-1", "first"), ("1-1", "right"), ("1-0", "right"), ("5-0", "right")], to_move=0)
    assert (equal_ends.left, equal_ends.right) == (5, 5)
    assert ids(equal_ends) == ["play:5-5@left", "play:5-5@right"]


def test_without_a_fitting_tile_the_player_draws_one_tile_at_a_time_until_one_fits():
    # The bazaar is drawn from its end: 2-0 (no fit), 1-1 (no fit), then 6-2 (fits 6).
    st = KozelState.from_position([["4-1", "3-0"], ["5-5", "4-4"]],
                                  line=[("6-6", "first")], to_move=0, bazaar=["5-0", "6-2", "1-1", "2-0"])
    assert ids(st) == ["draw"]
    events = st.play("draw")
    assert events[0]["secret"] == {0: {"tile": "2-0"}} and "tile" not in events[0]["data"]
    assert st.to_move == 0 and ids(st) == ["draw"]
    st.play("draw")
    assert st.to_move == 0 and ids(st) == ["draw"]
    st.play("draw")
    # the drawn tile fits: it is the only playable tile and the player's next move plays it
    assert st.to_move == 0 and ids(st) == ["play:6-2@left", "play:6-2@right"]
    assert st.view(None)["seats"][0]["drawn"] == 3
    assert st.view(None)["table"]["bazaar_size"] == 1
    st.play("play:6-2@left")
    assert st.to_move == 1
    assert st.hands[0] == hand("4-1", "3-0", "2-0", "1-1")


def test_pass_only_when_the_bazaar_is_empty_and_nothing_fits():
    st = KozelState.from_position([["4-1", "3-0"], ["6-5", "5-5"], ["2-2", "1-1"]],
                                  line=[("6-6", "first")], to_move=0)
    assert ids(st) == ["pass"]
    with pytest.raises(engine.IllegalMove):
        st.play("draw")
    st.play("pass")
    assert st.to_move == 1 and not st.finished


# --------------------------------------------------------------------------- end of a round (§5, §6)

def test_going_out_ends_the_round_and_everyone_records_his_own_pips():
    st = KozelState.from_position([["6-3"], ["5-5", "4-4"], ["6-1", "2-0"]],
                                  line=[("6-6", "first")], to_move=0)
    st.play("play:6-3@left")
    deal = st.result()["deals"][0]
    assert deal["reason"] == "out" and deal["out"] == 0 and deal["winner"] == 0
    assert deal["points"] == [0, 18, 9]
    assert deal["recorded"] == [0, 18, 0]  # 9 < 13 does not open the record of seat 2
    assert st.scores() == [0, 18, 0]
    assert st.deals_done == 1 and st.to_move is not None  # the next round is dealt


# A line with both ends 0 that holds all seven 0-tiles once 6-0 is laid on the right (6) end.
FISH_LINE = [("0-0", "first"), ("3-0", "right"), ("4-3", "right"), ("4-0", "right"), ("5-0", "right"),
             ("6-5", "right"), ("2-0", "left"), ("2-1", "left"), ("1-0", "left")]
FISH_REST = ["6-6", "6-4", "6-3", "5-5", "5-4", "5-3", "3-2",  # 63 pips
             "1-1", "2-2", "3-1", "3-3", "4-1", "4-2", "4-4", "5-1", "5-2", "6-1", "6-2"]  # 63 pips


def test_fish_when_the_bazaar_is_empty_and_nobody_can_play():
    st = KozelState.from_position([["6-0", *FISH_REST[:9]], FISH_REST[9:]], line=FISH_LINE, to_move=0)
    assert not st.finished and (st.left, st.right) == (0, 6)
    st.play("play:6-0@right")
    deal = st.result()["deals"][0]
    assert deal["reason"] == "fish" and deal["ends"] == [0, 0]
    # individual fish: each records his own hand
    pts = [sum(int(t[0]) + int(t[2]) for t in FISH_REST[:9]), sum(int(t[0]) + int(t[2]) for t in FISH_REST[9:])]
    assert deal["points"] == pts and deal["recorded"] == pts


def test_no_fish_while_someone_can_still_play():
    # Both ends show 0 and the bazaar is empty, but 6-0 and 5-0 are still held: the round goes on.
    line = [*FISH_LINE[:4], ("2-0", "left"), ("2-1", "left"), ("1-0", "left")]
    st = KozelState.from_position([["6-6", "1-1"], ["6-0", "2-2"], ["5-5", "3-3", "5-0"]], line=line, to_move=0)
    assert (st.left, st.right) == (0, 0)
    assert ids(st) == ["pass"]
    st.play("pass")
    assert not st.finished and st.deals_done == 0 and st.to_move == 1
    assert ids(st) == ["play:6-0@left", "play:6-0@right"]


@pytest.mark.parametrize(("players", "options"), [(2, {}), (3, {}), (4, {}), (4, {"teams": True})])
def test_the_fish_always_shows_equal_ends_and_nobody_can_play(players, options):
    fish = 0
    for seed in range(40):
        rng = random.Random(seed)
        st = engine.new_game("kozel", players=players, seed=seed, options={**options, "target": 1})
        assert isinstance(st, KozelState)
        while not st.finished:
            st.apply(rng.choice(st.legal_moves()))
            if st.finished and st.result()["deals"][-1]["reason"] == "fish":
                fish += 1
                left, right = st.result()["deals"][-1]["ends"]
                assert left == right
                assert not any(h & (NUM_TILES[left] | NUM_TILES[right]) for h in st.deals[-1]["hands"])
    assert fish > 0


def test_round_continues_exactly_while_someone_can_play_or_draw():
    for seed in range(30):
        rng = random.Random(seed)
        st = engine.new_game("kozel", players=3, seed=seed)
        assert isinstance(st, KozelState)
        rounds = st.deals_done
        while st.deals_done == rounds:
            if st.line:
                can_play = any(h & (NUM_TILES[st.left] | NUM_TILES[st.right]) for h in st.hands)
                assert can_play or st.bazaar, "a fish position was not detected"
            st.apply(rng.choice(st.legal_moves()))


def test_lone_0_0_counts_25_but_with_other_tiles_only_its_pips():
    assert hand_value(hand("0-0"), False) == 25
    assert hand_value(hand("0-0", "2-1"), False) == 3
    assert hand_value(hand("0-0", "2-1"), True) == 28
    st = KozelState.from_position([["6-3"], ["0-0"], ["1-0", "5-5", "6-1"]],
                                  line=[("6-6", "first")], to_move=0)
    st.play("play:6-3@left")
    assert st.result()["deals"][0]["points"] == [0, 25, 18]
    assert st.scores() == [0, 25, 18]


def test_option_zero_zero_always_25_counts_it_with_other_tiles():
    for always, expected in ((False, 7), (True, 32)):
        st = KozelState.from_position([["6-3"], ["0-0", "4-3"]], line=[("6-6", "first")], to_move=0,
                                      options={"zero_zero_always_25": always, "opening_threshold": 0})
        st.play("play:6-3@left")
        assert st.result()["deals"][0]["points"][1] == expected


def _out_round(totals, opened, carry, loser_hand, options):
    st = KozelState.from_position([["6-3"], loser_hand], line=[("6-6", "first")], to_move=0,
                                  totals=totals, opened=opened, carry=carry, options=options)
    st.play("play:6-3@left")
    return st


def test_13_rule_an_unopened_record_ignores_small_amounts_and_they_are_lost():
    st = _out_round([0, 0], [False, False], [0, 0], ["4-1", "3-2"], {})  # 10 points
    assert st.scores() == [0, 0] and st.carry == [0, 0] and st.opened == [False, False]
    st = _out_round([0, 0], [False, False], [0, 0], ["4-1", "5-3"], {})  # 13 points open the record
    assert st.scores() == [0, 13] and st.opened == [False, True]


def test_13_rule_once_opened_every_amount_is_recorded():
    st = _out_round([0, 20], [False, True], [0, 0], ["2-1"], {})
    assert st.scores() == [0, 23]


def test_13_rule_with_carry_the_small_amount_hangs_until_the_sum_reaches_13():
    st = _out_round([0, 0], [False, False], [0, 0], ["4-1", "3-2"], {"carry_unopened": True})
    assert st.scores() == [0, 0] and st.carry == [0, 10]
    st = _out_round([0, 0], [False, False], [0, 10], ["2-1"], {"carry_unopened": True})
    assert st.scores() == [0, 13] and st.carry == [0, 0] and st.opened[1]


def test_opening_threshold_option_changes_the_13():
    st = _out_round([0, 0], [False, False], [0, 0], ["4-1", "3-2"], {"opening_threshold": 10})
    assert st.scores() == [0, 10]


def test_reaching_101_ends_the_match_and_that_player_is_the_goat():
    st = KozelState.from_position([["6-3"], ["5-5"], ["1-0"]], line=[("6-6", "first")], to_move=0,
                                  totals=[30, 95, 40])
    st.play("play:6-3@left")
    res = st.result()
    assert st.finished and res["reason"] == "goat"
    assert res["scores"] == [30, 105, 41] and res["goats"] == [1]
    assert res["ranking"] == [0, 2, 1]
    assert res["payoffs"] == pytest.approx([-(30 - 176 / 3), -(105 - 176 / 3), -(41 - 176 / 3)])
    assert st.legal_moves() == []


def test_several_players_crossing_101_in_one_round_the_highest_total_is_the_goat():
    st = KozelState.from_position([["6-3"], ["5-5", "4-4"], ["6-5"], ["1-0"]], line=[("6-6", "first")],
                                  to_move=0, totals=[10, 90, 95, 50])
    st.play("play:6-3@left")
    assert st.result()["scores"] == [10, 108, 106, 51]
    assert st.result()["goats"] == [1] and st.result()["ranking"] == [0, 3, 2, 1]


def test_equal_highest_totals_share_the_goat():
    st = KozelState.from_position([["6-3"], ["5-5"], ["6-4"]], line=[("6-6", "first")], to_move=0,
                                  totals=[10, 95, 95])
    st.play("play:6-3@left")
    assert st.result()["goats"] == [1, 2]


def test_target_option_ends_the_match_earlier():
    st = _out_round([0, 20], [False, True], [0, 0], ["5-5"], {"target": 30})
    assert st.finished and st.result()["goats"] == [1]


# --------------------------------------------------------------------------- later rounds

def test_next_round_is_opened_by_the_highest_double_by_default():
    st = KozelState.from_position([["6-3"], ["5-5"], ["4-4"]], line=[("6-6", "first")], to_move=0, seed=7)
    st.play("play:6-3@left")
    assert (st.to_move, st.lead) == find_opener(st.hands)
    assert ids(st) == [f"play:{st.view(None)['table']['lead']}"]


def test_next_round_starter_previous_winner_leads_any_tile():
    st = KozelState.from_position([["5-5", "2-2"], ["6-3"], ["4-4", "1-0"]], line=[("6-6", "first")],
                                  to_move=1, seed=7, options={"next_round_starter": "previous_winner"})
    st.play("play:6-3@left")
    assert st.to_move == 1 and st.view(None)["table"]["lead"] is None
    assert len(ids(st)) == 5 and all(m.startswith("play:") and "@" not in m for m in ids(st))


def test_previous_winner_of_an_individual_fish_is_the_smallest_hand():
    st = KozelState.from_position([["6-0", *FISH_REST[:9]], FISH_REST[9:]], line=FISH_LINE, to_move=0,
                                  options={"next_round_starter": "previous_winner"})
    st.play("play:6-0@right")
    deal = st.result()["deals"][0]
    smaller = 0 if deal["points"][0] < deal["points"][1] else 1
    assert deal["winner"] == smaller and st.to_move == smaller


# --------------------------------------------------------------------------- team play (§9)

def test_teams_need_four_players():
    with pytest.raises(engine.BadOptions) as e:
        engine.new_game("kozel", players=3, seed=1, options={"teams": True})
    assert e.value.option == "teams"


def test_teams_deal_seven_each_without_bazaar_and_1_1_leads_the_first_round():
    for seed in range(5):
        st = engine.new_game("kozel", players=4, seed=seed, options={"teams": True})
        v = st.view(None)
        assert [s["hand_size"] for s in v["seats"]] == [7] * 4
        assert v["table"]["bazaar_size"] == 0
        assert [s["team"] for s in v["seats"]] == [0, 1, 0, 1]
        assert ids(st) == ["play:1-1"]
        assert isinstance(st, KozelState) and st.hands[st.to_move] >> parse_domino("1-1") & 1


def test_team_going_out_the_other_side_records_the_sum_of_its_two_hands():
    st = KozelState.from_position([["6-3"], ["5-5", "4-4"], ["6-1", "2-0"], ["3-3"]],
                                  line=[("6-6", "first")], to_move=0, options={"teams": True})
    st.play("play:6-3@left")
    deal = st.result()["deals"][0]
    assert deal["side_points"] == [9, 24] and deal["recorded"] == [0, 24]
    assert st.scores() == [0, 24, 0, 24]
    # later rounds: the winner leads any tile
    assert st.to_move == 0 and st.view(None)["table"]["lead"] is None and len(ids(st)) == 7


def test_team_13_rule_applies_per_side():
    st = KozelState.from_position([["6-3"], ["4-1"], ["6-1", "2-0"], ["3-2"]],
                                  line=[("6-6", "first")], to_move=0, options={"teams": True})
    st.play("play:6-3@left")
    assert st.result()["deals"][0]["recorded"] == [0, 0] and st.scores() == [0, 0, 0, 0]


def _team_fish(side0: list[str], side1: list[str], **kw):
    hands = [["6-0", *side0[:3]], side1[:5], side0[3:], side1[5:]]
    st = KozelState.from_position(hands, line=FISH_LINE, to_move=0, options={"teams": True}, **kw)
    st.play("play:6-0@right")
    return st


def test_team_fish_the_smaller_side_wins_and_the_other_records_its_own_total():
    side0 = [*FISH_REST[:6], "1-1"]  # 58 + 2
    side1 = ["3-2", *FISH_REST[8:]]
    st = _team_fish(side0, side1)
    deal = st.result()["deals"][0]
    assert deal["reason"] == "fish" and deal["side_points"] == [60, 66]
    assert deal["recorded"] == [0, 66] and st.scores() == [0, 66, 0, 66]
    assert deal["winner"] in (0, 2)


def test_tied_team_fish_is_eggs_added_to_the_loser_of_the_next_round():
    st = _team_fish(FISH_REST[:7], FISH_REST[7:], seed=3)
    deal = st.result()["deals"][0]
    assert deal["side_points"] == [63, 63] and deal["recorded"] == [0, 0]
    assert st.eggs == 63 and deal["eggs"] == 63 and st.view(None)["table"]["eggs"] == 63
    # nobody won: the next round is opened like the first one, by 1-1
    assert ids(st) == ["play:1-1"]
    # next round: seat 0 goes out, side 1 records its hands plus the eggs
    nxt = KozelState.from_position([["6-3"], ["5-5"], ["1-0"], ["2-2"]], line=[("6-6", "first")], to_move=0,
                                   options={"teams": True}, eggs=63)
    nxt.play("play:6-3@left")
    d = nxt.result()["deals"][0]
    assert d["recorded"] == [0, 77] and d["eggs_added"] == 63 and nxt.eggs == 0


def test_first_side_to_reach_the_target_are_the_goats():
    st = KozelState.from_position([["6-3"], ["5-5"], ["1-0"], ["2-2"]], line=[("6-6", "first")], to_move=0,
                                  options={"teams": True}, totals=[80, 90])
    st.play("play:6-3@left")
    res = st.result()
    assert st.finished and res["scores"] == [80, 104, 80, 104] and res["goats"] == [1, 3]
    assert res["payoffs"] == pytest.approx([12, -12, 12, -12])


# --------------------------------------------------------------------------- moves and information

def test_move_ids_accept_halves_in_either_order():
    st = KozelState.from_position([["6-3", "4-1"], ["2-2", "5-0"]], line=[("6-5", "first")], to_move=0)
    assert st.canonical_move_id("play:3-6@LEFT") == "play:6-3@left"
    assert st.canonical_move_id("play:3-6") == "play:6-3"
    assert st.canonical_move_id("doubles:0-0+4-4") == "doubles:4-4+0-0"
    for bad in ("play:6-3@middle", "doubles:5-5+3-2", "doubles:5-5", "play:7-1", "fold"):
        with pytest.raises(engine.InvalidMove):
            st.canonical_move_id(bad)
    st.play({"action": "play", "tiles": ["3-6"], "end": "left"})
    assert (st.left, st.right) == (3, 5)


def test_views_hide_hands_and_bazaar_but_show_what_was_drawn():
    st = engine.new_game("kozel", players=2, seed=4)
    assert isinstance(st, KozelState)
    rng = random.Random(0)
    while sum(st.drawn) == 0:
        st.apply(rng.choice(st.legal_moves()))
    d = st.to_dict()
    public, mine = json.dumps(st.view(None)), json.dumps(st.view(0))
    assert st.view(None)["seats"][st.to_move]["drawn"] > 0
    for t in d["bazaar"] + d["hands"][1]:
        assert f'"{t}"' not in mine
    for t in d["bazaar"] + d["hands"][0] + d["hands"][1]:
        assert f'"{t}"' not in public
    assert st.view(0)["hand"] == d["hands"][0] and st.view(None)["hand"] is None


def test_running_payoffs_are_recorded_totals_negated_around_the_mean():
    st = KozelState.from_position([["6-3"], ["5-5"], ["1-0"]], line=[("6-6", "first")], to_move=0,
                                  totals=[10, 40, 25])
    assert st.running_payoffs() == pytest.approx([15, -15, 0])


# --------------------------------------------------------------------------- stored states (to_dict / from_dict)

def _stored_mid_round(options: dict | None = None, players: int = 3) -> dict:
    st = engine.new_game("kozel", players=players, seed=11, options=options)
    rng = random.Random(11)
    for _ in range(20):
        st.apply(rng.choice(st.legal_moves()))
    return json.loads(json.dumps(st.to_dict()))


def test_hand_names_list_the_highest_tile_first_by_high_then_low_half():
    rng = random.Random(5)
    for mask in [0, (1 << 28) - 1] + [rng.getrandbits(28) for _ in range(300)]:
        tiles = [t for t in range(28) if mask >> t & 1]
        expected = sorted(tiles, key=lambda t: (-D_HI[t], -D_LO[t]))
        assert names(mask) == [D_NAME[t] for t in expected]


def test_stored_state_reads_tiles_written_low_half_first():
    d = _stored_mid_round()
    flipped = json.loads(json.dumps(d))
    flipped["hands"] = [["-".join(reversed(t.split("-"))) for t in h] for h in d["hands"]]
    flipped["bazaar"] = [" " + t for t in d["bazaar"]]  # parse_domino's leniency still applies
    flipped["line"] = [["-".join(reversed(t.split("-"))), end] for t, end in d["line"]]
    assert engine.load_state(flipped).to_dict() == d


@pytest.mark.parametrize("field, value", [
    ("hands", [["7-1"]]), ("bazaar", ["six-three"]), ("bazaar", [63]), ("line", [["6-6", "middle"]]),
    ("line", [["6-6"]]), ("lead", "9-9"), ("slots", "x"), ("options", {"teams": 1}),
    ("options", {"target": [101]}), ("options", {"no_such_option": True}), ("options", "teams"),
    ("players", True), ("totals", [0]), ("slots", [[0]])])
def test_stored_state_with_unreadable_or_inconsistent_data_is_refused(field, value):
    d = _stored_mid_round()
    engine.load_state(d)  # the same options are validated again on every load, seen before or not
    bad = dict(d)
    bad[field] = value
    with pytest.raises(engine.BadState):
        engine.load_state(bad)


def test_stored_state_whose_options_need_other_player_counts_is_refused():
    d = _stored_mid_round({"teams": True}, players=4)
    assert engine.load_state(d).to_dict() == d
    with pytest.raises(engine.BadState):
        engine.load_state({**d, "players": 3, "hands": d["hands"][:3], "slots": d["slots"][:3]})


# --------------------------------------------------------------------------- determinization

class History:
    """An independent oracle for hidden hands: each seat's own actions this round, and a check that a hand
    is consistent with them.

    A seat's tiles this round (those it played and those it holds) must come from its deal or from its
    draws, one tile per draw, each tile acquired before it was played; and every void (a draw, a pass, or
    the forced lead's "nobody was dealt anything higher") forbids the matching tiles to every tile acquired
    before it and not yet played.  Consistency is a perfect matching of tiles to acquisitions.
    """

    def __init__(self, st: KozelState) -> None:
        self.round = -1
        self.new_round(st)

    def new_round(self, st: KozelState) -> None:
        self.round = st.deals_done
        self.dealt = [h.bit_count() for h in st.hands]
        self.actions: list[list[tuple[str, int]]] = [[] for _ in range(st.players)]
        if st.lead >= 0 and not st.teams and not st.line:
            for a in self.actions:
                a.append(("void", OUTRANKED_BY[st.lead]))

    def before(self, st: KozelState, move: engine.Move) -> None:
        s = st.to_move
        assert s is not None
        if move.action in ("draw", "pass"):
            self.actions[s].append(("void", NUM_TILES[st.left] | NUM_TILES[st.right]))
        if move.action == "draw":
            self.actions[s].append(("draw", 0))
        elif move.action in ("play", "doubles"):
            for t in move.tiles:
                self.actions[s].append(("play", parse_domino(t)))

    def consistent(self, seat: int, hand_mask: int) -> bool:
        acts = self.actions[seat]
        acquired = [-1] * self.dealt[seat] + [i for i, (kind, _) in enumerate(acts) if kind == "draw"]
        played = {x: i for i, (kind, x) in enumerate(acts) if kind == "play"}
        tiles = [(t, played.get(t, len(acts))) for t in list(played) + [t for t in range(28)
                                                                         if hand_mask >> t & 1]]
        if len(tiles) != len(acquired):
            return False
        voids = [(i, m) for i, (kind, m) in enumerate(acts) if kind == "void"]

        def allowed(tile: int, gone: int, got: int) -> bool:
            return got < gone and not any(got < i < gone and m >> tile & 1 for i, m in voids)

        owner: dict[int, int] = {}

        def augment(k: int, seen: set[int]) -> bool:
            tile, gone = tiles[k]
            for j, got in enumerate(acquired):
                if j in seen or not allowed(tile, gone, got):
                    continue
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = k
                    return True
            return False

        return all(augment(k, set()) for k in range(len(tiles)))


@pytest.mark.parametrize(("players", "options"), [(2, {}), (3, {}), (4, {}), (4, {"teams": True}),
                                                  (3, {"next_round_starter": "previous_winner"})])
def test_determinizations_respect_every_revealed_void(players, options):
    checked = 0
    for seed in range(5):
        rng = random.Random(seed)
        st = engine.new_game("kozel", players=players, seed=seed, options=options)
        assert isinstance(st, KozelState)
        history = History(st)
        while not st.finished:
            if st.deals_done != history.round:
                history.new_round(st)
            assert all(history.consistent(p, st.hands[p]) for p in range(players))  # the oracle is sound
            for seat in range(players):
                for k in range(2):
                    world = st.determinize(seat, random.Random(rng.random() + k))
                    assert world.hands[seat] == st.hands[seat]
                    assert [len(w) for w in world.slots] == [h.bit_count() for h in world.hands]
                    assert (sum(h.bit_count() for h in world.hands) + len(world.bazaar)
                            + world.table.bit_count()) == 28
                    for p in range(players):
                        assert history.consistent(p, world.hands[p]), f"seat {p} got a tile it showed it lacked"
                    checked += 1
            move = rng.choice(st.legal_moves())
            history.before(st, move)
            st.apply(move)
    assert checked > 500


def test_a_tile_only_a_draw_can_explain_uses_up_that_draw():
    # Seat 0 shows it was dealt no 6 (it draws 6-1 and plays it), then shows no 1 or 5 and draws 6-4 (kept)
    # and 5-0 (played).  When it later plays 6-4, that can only be the kept draw: its hand has no 6 left.
    st = KozelState.from_position([["4-3", "3-2", "2-2"], ["6-5", "6-0", "4-4"]], line=[("6-6", "first")],
                                  to_move=0, bazaar=["3-3", "5-0", "6-4", "6-1"])
    for move in ("draw", "play:6-1@left", "play:6-5@right", "draw", "draw", "play:5-0@right",
                 "play:6-0@right", "play:6-4@right"):
        st.play(move)
    assert (st.left, st.right) == (1, 4) and st.hands[0] == hand("4-3", "3-2", "2-2")
    for k in range(300):
        world = st.determinize(1, random.Random(k))
        assert not world.hands[0] & (NUM_TILES[6] | NUM_TILES[1] | NUM_TILES[5])


def test_a_player_who_passed_is_never_dealt_a_matching_tile():
    st = KozelState.from_position([["4-1", "3-0"], ["5-5", "4-4", "2-2"], ["6-1", "1-1"]],
                                  line=[("6-6", "first"), ("6-5", "left")], to_move=0)
    st.play("pass")
    for k in range(200):
        world = st.determinize(2, random.Random(k))
        assert not world.hands[0] & (NUM_TILES[5] | NUM_TILES[6])
        assert world.hands[0].bit_count() == 2 and world.hands[1].bit_count() == 3


def test_a_drawn_tile_may_match_the_ends_the_player_showed_void_in():
    st = KozelState.from_position([["4-1", "3-0"], ["5-5", "4-4"]], line=[("6-6", "first")], to_move=0,
                                  bazaar=["6-2", "1-1", "6-1", "2-0"])
    st.play("draw")  # 2-0 kept
    worlds = [st.determinize(1, random.Random(k)) for k in range(300)]
    # the two held tiles never show 6; the drawn one may
    assert all((w.hands[0] & NUM_TILES[6]).bit_count() <= 1 for w in worlds)
    assert any(w.hands[0] & NUM_TILES[6] for w in worlds)


def test_a_draw_after_a_void_is_as_likely_as_any_unseen_tile_to_match_it():
    """What each player knows (kozel.md): every deal the facts allow is equally likely, and a tile drawn
    after a void is any unseen tile.  Seat 0 shows no 6 and draws one tile; seen from seat 1, 25 tiles are
    unseen, 6 of them sixes (6-6 is on the table).  Every allowed assignment puts non-sixes in the two dealt
    slots (19 x 18 ways) and any of the 23 other tiles in the drawn slot, so the drawn tile is a six in 6 of
    23 of them.  (A determinizer that fills the drawn slot with the first tile left in a shuffled pool gives
    a six 58% of the time: a six is never taken by the dealt slots, so it comes first more often.)"""
    st = KozelState.from_position([["4-1", "3-0"], ["5-5", "4-4"]], line=[("6-6", "first")], to_move=0,
                                  bazaar=["6-2", "1-1", "6-1", "2-0"])
    st.play("draw")
    assert [m == NUM_TILES[6] for m in st.slot_masks(0)] == [True, True, False]
    n = 6000
    sixes = sum(bool(st.determinize(1, random.Random(k)).hands[0] & NUM_TILES[6]) for k in range(n))
    # the binomial's standard deviation at n = 6000 is 0.006
    assert abs(sixes / n - 6 / 23) < 0.025


def test_with_several_seats_voids_every_allowed_deal_is_still_equally_likely():
    """What each player knows (kozel.md): every deal the facts allow is equally likely, also at four
    players, where the voids of several seats are not nested (one seat lacks a number, the others only the
    doubles above the forced lead).  The determinizer's tile frequencies match those of rejection sampling,
    which draws every allowed deal equally often.  (Without the swaps of ``engine.kozel._mix`` one tile is
    off by about 0.2 here: the most constrained slots first, each taking a free tile, is uniform only for
    nested masks.)"""
    from engine.kozel import _nested

    st = engine.new_game("kozel", players=4, seed=4011)
    moves = random.Random(4011)
    for _ in range(moves.randrange(8, 40)):
        st.apply(moves.choice(st.legal_moves()))
    assert isinstance(st, KozelState)
    seat = st.to_move
    assert seat is not None and st.line and st.deals_done == 0
    others = [p for p in range(4) if p != seat]
    slots = [(p, m) for p in others for m in st.slot_masks(p)]
    assert not _nested([m for _p, m in slots])
    unseen = [t for t in range(28) if not (st.hands[seat] | st.table) >> t & 1]
    n = 6000
    rng = random.Random(7)
    exact = {p: [0] * 28 for p in others}
    for _ in range(n):
        while True:
            rng.shuffle(unseen)
            if all(not m >> t & 1 for (_p, m), t in zip(slots, unseen, strict=False)):
                break
        for (p, _m), t in zip(slots, unseen, strict=False):
            exact[p][t] += 1
    drawn = {p: [0] * 28 for p in others}
    for k in range(n):
        world = st.determinize(seat, random.Random(k))
        for p in others:
            for t in range(28):
                drawn[p][t] += world.hands[p] >> t & 1
    worst = max(abs(drawn[p][t] - exact[p][t]) / n for p in others for t in range(28))
    # each frequency's standard deviation is at most 0.0065 at n = 6000, a difference's 0.0091
    assert worst < 0.05


def test_the_forced_lead_shows_who_holds_it_and_that_nobody_holds_a_higher_tile():
    st = KozelState.from_position([["5-5", "1-0", "2-0"], ["4-4", "3-2", "6-1"]], bazaar=["6-6", "0-0"])
    assert st.to_move == 0 and ids(st) == ["play:5-5"]
    for k in range(100):
        world = st.determinize(1, random.Random(k))
        assert world.hands[0] >> parse_domino("5-5") & 1
        assert not world.hands[0] >> parse_domino("6-6") & 1
        assert ids(world) == ["play:5-5"]



@pytest.mark.parametrize(("players", "options"), [(2, {}), (3, {}), (4, {"teams": True}),
                                                  (2, {"next_round_starter": "previous_winner"})])
def test_the_round_replays_on_every_world_of_the_information_set(players, options):
    # round_replay rebuilds the round from the public history and a world's hands: on every world a seat
    # cannot tell from the truth, the round's plays come back in order, each legal where it was played (a
    # player must match an end when he can, kozel.md §4, and held no matching tile when he drew or passed);
    # on the true state a seat that kept none of its draws is rebuilt exactly, hand by hand
    from engine.kozel import round_replay

    checked = exact = 0
    for seed in range(6):
        rng = random.Random(seed)
        st = engine.new_game("kozel", players=players, seed=seed, options=options)
        assert isinstance(st, KozelState)
        round_no = st.deals_done
        plays: list[tuple[int, str, int]] = []  # (mover, move id, the mover's true hand before it)
        kept = [False] * players  # the seat has drawn a tile it did not play at once
        while not st.finished:
            if st.deals_done != round_no:
                round_no, plays, kept = st.deals_done, [], [False] * players
            for seat in range(players):
                world = st.determinize(seat, random.Random(rng.random()))
                seen = [(mover, move.id) for before, mover, move in round_replay(world)
                        if move in before.legal_moves() and before.to_move == mover]
                assert seen == [(mover, move_id) for mover, move_id, _h in plays]
                checked += 1
            for k, (before, mover, _move) in enumerate(round_replay(st)):
                if not kept[mover]:
                    assert before.hands[mover] == plays[k][2]
                    exact += 1
            move = rng.choice(st.legal_moves())
            s = st.to_move
            assert s is not None
            if move.action in ("play", "doubles"):
                plays.append((s, move.id, st.hands[s]))
            elif move.action == "draw" and st.bazaar and not (
                    1 << st.bazaar[-1] & (NUM_TILES[st.left] | NUM_TILES[st.right])):
                kept[s] = True  # the tile drawn does not fit: it stays in the hand
            st.apply(move)
    assert checked > 200 and exact > 100


def test_a_state_stored_before_the_round_history_was_kept_replays_nothing():
    from engine.kozel import round_replay

    st = engine.new_game("kozel", players=2, seed=4)
    for _ in range(6):
        st.apply(st.legal_moves()[0])
    d = st.to_dict()
    assert d["history"] and d["origin"]
    del d["history"], d["origin"]
    old = KozelState.from_dict(d)
    assert old.view(0) == st.view(0) and [m.id for m in old.legal_moves()] == [m.id for m in st.legal_moves()]
    assert list(round_replay(old)) == []
    assert len(list(round_replay(KozelState.from_dict(st.to_dict())))) == len(list(round_replay(st)))

def test_determinize_replaces_the_seed_of_future_deals():
    st = engine.new_game("kozel", players=3, seed=9)
    assert isinstance(st, KozelState)
    assert len({st.determinize(0, random.Random(k)).seed for k in range(5)}) == 5


# --------------------------------------------------------------------------- heuristics

def test_greedy_goes_out_when_it_can():
    from ai.heuristics.kozel import greedy

    st = KozelState.from_position([["6-3"], ["5-5", "4-4"]], line=[("6-6", "first")], to_move=0)
    assert greedy(st, 0, random.Random(1)).id in ("play:6-3@left", "play:6-3@right")
    st = KozelState.from_position([["1-0", "6-5", "2-0"], ["5-5", "4-4"]], line=[("1-6", "first")], to_move=0)
    assert greedy(st, 0, random.Random(1)).id.startswith("play:6-5@")


def test_greedy_sheds_a_0_0_that_could_be_left_alone():
    from ai.heuristics.kozel import greedy

    st = KozelState.from_position([["0-0", "2-0", "3-1"], ["5-5", "4-4"]], line=[("5-0", "first")],
                                  to_move=0)
    assert greedy(st, 0, random.Random(1)).id == "play:0-0@right"


def test_greedy_shuts_out_a_player_who_passed_for_lack_of_the_end_number():
    # docs/rules/kozel.md, "What each player knows": a pass shows everybody that the player held no tile
    # matching either end.  Seat 1 passes at 6|6, so he holds no six; every one is seat 0's or on the table.
    # 6-1 then leaves 6|1 and seat 0 holds every other one: seat 1 can match nothing (shut); 6-5 would shed
    # more pips but leave 6|5 with five fives seat 1 may hold.
    from ai.heuristics.kozel import SENSE, greedy, score_move, sensed_score, shedding_greedy

    st = KozelState.from_position([["6-5", "6-1", "1-1", "1-0", "2-1", "3-1", "4-1", "5-1"], ["3-0", "2-0"]],
                                  line=[("6-6", "first")], to_move=1)
    assert ids(st) == ["pass"]
    st.apply(st.legal_moves()[0])
    by_id = {m.id: m for m in st.legal_moves()}
    shut, open_ = by_id["play:6-1@right"], by_id["play:6-5@right"]
    assert sensed_score(st, shut) == score_move(st, shut) + SENSE.shut
    assert sensed_score(st, open_) == score_move(st, open_) - 5 * SENSE.scarce  # 5-5, 5-4, 5-3, 5-2, 5-0
    assert score_move(st, open_) > score_move(st, shut)
    assert shedding_greedy(st, 0, random.Random(1)).id.startswith("play:6-5@")
    assert greedy(st, 0, random.Random(1)).id.startswith("play:6-1@")


def test_greedy_counts_only_the_voids_a_player_showed():
    # the same table without the pass: nothing says seat 1 lacks sixes, so the four sixes seat 0 cannot see
    # (6-4, 6-3, 6-2, 6-0) may match the end 6-1 leaves and nobody is shut out
    from ai.heuristics.kozel import SENSE, score_move, sensed_score

    st = KozelState.from_position([["6-5", "6-1", "1-1", "1-0", "2-1", "3-1", "4-1", "5-1"], ["3-0", "2-0"]],
                                  line=[("6-6", "first")], to_move=0)
    shut = next(m for m in st.legal_moves() if m.id == "play:6-1@right")
    assert sensed_score(st, shut) == score_move(st, shut) - 4 * SENSE.scarce


def test_playout_policy_returns_legal_moves_and_prefers_heavy_tiles():
    from ai.heuristics.kozel import playout

    st = KozelState.from_position([["1-0", "6-5", "2-0"], ["5-5", "4-4"]], line=[("1-6", "first")], to_move=0)
    picks = [playout(st, random.Random(k)).id for k in range(200)]
    assert set(picks) <= set(ids(st))
    assert picks.count("play:6-5@left") + picks.count("play:6-5@right") > 150
