"""Tien Gow (docs/rules/tiengow.md §3–§12 and its options): each test names the rule it checks.

Positions are built with ``TienGowState.from_position`` (chosen hands, banker, leader and the columns won
so far) and then played through the checked ``play`` path, so every assertion goes through the real
move generation and settlement.
"""

from __future__ import annotations

import itertools
import json
import random

import pytest

import engine
from ai.heuristics import tiengow as heuristics
from engine.tiengow import GROUP_TYPE_NAMES, GROUPS, TienGowState
from engine.tiles import CF_NAME, chinese_set

T = TienGowState


def ids(state: engine.State) -> list[str]:
    return [m.id for m in state.legal_moves()]


def plays(state: engine.State) -> list[str]:
    return [i for i in ids(state) if i.startswith("play:")]


def run(state: engine.State, *moves: str) -> engine.State:
    for m in moves:
        state.play(m)
    return state


def ledger(state: TienGowState, deal: int = -1) -> list[tuple[int, int, int, str]]:
    d = state.result()["deals"][deal]
    return [(p["from"], p["to"], p["amount"], p["reason"]) for p in d["immediate"] + d["settlement"]]


def follow(lead_hand: list[str], follower: list[str], lead: str) -> list[str]:
    """Seat 0 leads ``lead`` from ``lead_hand``; the legal moves of the follower (seat 1).  Seat 0's hand and
    seats 2 and 3 are filled up to the follower's hand size with low civil tiles nobody uses."""
    k = len(follower)
    pool = ["5-1", "5-1", "6-1", "6-1", "6-4", "6-4", "6-5", "6-5", "2-2", "2-2", "3-3", "3-3", "5-5", "5-5"]
    for t in lead_hand + follower:
        if t in pool:
            pool.remove(t)
    pad = k - len(lead_hand)
    hands = [lead_hand + pool[:pad], follower, pool[pad:pad + k], pool[pad + k:pad + 2 * k]]
    s = T.from_position(hands, banker=0)
    s.play(lead)
    return ids(s)


# --------------------------------------------------------------------------- §3/§4 leads

def test_every_group_type_of_section_3_is_a_legal_lead():
    s = T.from_position([["6-6", "6-6", "6-3", "5-4", "4-2", "2-1", "4-1", "3-2"],
                         ["1-1", "1-1", "6-2", "5-3", "5-5", "3-3", "2-2", "6-5"],
                         ["4-4", "4-4", "5-2", "4-3", "5-5", "3-3", "2-2", "6-5"],
                         ["3-1", "3-1", "6-4", "6-4", "6-1", "6-1", "5-1", "5-1"]], banker=0)
    moves = set(plays(s))
    for expected in ("play:6-6", "play:6-3", "play:2-1", "play:6-6+6-6", "play:6-3+5-4", "play:4-1+3-2",
                     "play:4-2+2-1", "play:6-6+6-3", "play:6-6+5-4", "play:6-6+6-6+6-3",
                     "play:6-6+6-3+5-4", "play:6-6+6-6+6-3+5-4"):
        assert expected in moves
    kinds = {GROUP_TYPE_NAMES[GROUPS[tuple(sorted(engine.tiles.parse_chinese(t) for t in m.tiles))][0]]
             for m in s.legal_moves()}
    assert kinds == set(GROUP_TYPE_NAMES)


def test_a_leader_has_no_discard_and_no_illegal_group():
    s = T.from_position([["6-6", "5-5", "6-3", "6-2", "4-2", "4-1", "5-1", "1-1"],
                         ["1-1", "4-4", "4-4", "5-3", "5-5", "3-3", "2-2", "6-5"],
                         ["3-1", "3-1", "5-2", "4-3", "6-4", "3-3", "2-2", "6-5"],
                         ["6-4", "6-1", "6-1", "5-1", "2-1", "5-4", "3-2", "6-6"]], banker=0)
    moves = ids(s)
    assert all(m.startswith("play:") for m in moves)
    # unrelated civil tiles, a civil tile outside the four families with a nine, unequal military tiles,
    # 4-2 with another military tile: none of them is a group
    for illegal in ("play:6-6+5-5", "play:5-5+6-3", "play:6-3+6-2", "play:4-2+4-1", "play:6-6+6-2",
                    "play:1-1+6-3"):
        assert s.canonical_move_id(illegal) not in moves
    assert s.canonical_move_id("play:1-1+6-2") == "play:6-2+1-1"
    assert "play:6-2+1-1" in moves  # Earth + an eight is a mixed pair


def test_move_ids_accept_tiles_in_either_order_and_any_sequence():
    s = T.from_position([["6-6", "6-3"], ["1-1", "6-2"], ["4-4", "5-2"], ["3-1", "4-1"]], banker=0)
    s.play("play:3-6+6-6")
    assert s.view(None)["table"]["trick"]["plays"][0]["tiles"] == ["6-6", "6-3"]


# --------------------------------------------------------------------------- §5 following

def test_a_follower_plays_exactly_as_many_tiles_as_were_led():
    s = T.from_position([["6-6", "6-6", "6-3"], ["5-1", "6-1", "2-1"], ["1-1", "1-1", "6-2"],
                         ["4-4", "4-1", "3-2"]], banker=0)
    s.play("play:6-6+6-6+6-3")
    assert all(len(m.tiles) == 3 for m in s.legal_moves())
    assert ids(s) == ["discard:6-1+5-1+2-1"]


def test_higher_single_of_the_same_suit_beats():
    moves = follow(["6-1"], ["6-6", "5-1"], "play:6-1")
    assert "play:6-6" in moves and "play:5-1" not in moves
    moves = follow(["4-1"], ["4-2", "2-1"], "play:4-1")
    assert "play:4-2" in moves and "play:2-1" not in moves  # Big Six and Little Three are ordinary singles


def test_civil_single_never_beats_military_single_and_military_never_beats_civil():
    assert plays_of(follow(["2-1"], ["6-6", "1-1"], "play:2-1")) == []
    assert plays_of(follow(["5-1"], ["6-3", "5-4"], "play:5-1")) == []


def plays_of(moves: list[str]) -> list[str]:
    return [m for m in moves if m.startswith("play:")]


def test_equal_rank_loses_5_4_after_6_3_is_only_a_discard():
    moves = follow(["6-3"], ["5-4", "1-1"], "play:6-3")
    assert "play:5-4" not in moves and "discard:5-4" in moves


def test_second_copy_of_a_civil_single_ties_and_loses():
    s = T.from_position([["5-5"], ["5-5"], ["6-1"], ["5-1"]], banker=0, columns=(1, 1, 1, 1))
    s.play("play:5-5")
    assert ids(s) == ["discard:5-5"]
    run(s, "discard:5-5", "discard:6-1", "discard:5-1")
    assert s.result()["deals"][0]["last_trick_winner"] == 0


def test_mixed_pair_tie_loses():
    moves = follow(["6-6", "6-3"], ["6-6", "5-4"], "play:6-6+6-3")
    assert plays_of(moves) == [] and "discard:6-6+5-4" in moves


def test_civil_pair_never_beats_military_pair():
    moves = follow(["4-1", "3-2"], ["6-6", "6-6"], "play:4-1+3-2")
    assert plays_of(moves) == []


def test_higher_military_pair_beats_lower_and_higher_civil_pair_beats_lower():
    assert "play:6-3+5-4" in follow(["6-2", "5-3"], ["6-3", "5-4"], "play:6-2+5-3")
    assert "play:6-6+6-6" in follow(["1-1", "1-1"], ["6-6", "6-6"], "play:1-1+1-1")
    assert plays_of(follow(["6-6", "6-6"], ["1-1", "1-1"], "play:6-6+6-6")) == []


def test_mixed_pair_never_beats_a_pair_of_another_type():
    assert plays_of(follow(["5-5", "5-5"], ["6-6", "6-3"], "play:5-5+5-5")) == []
    assert plays_of(follow(["4-1", "3-2"], ["6-6", "6-3"], "play:4-1+3-2")) == []


def test_earth_earth_eight_is_beaten_by_heaven_heaven_nine_but_not_by_heaven_nine_nine():
    moves = follow(["1-1", "1-1", "6-2"], ["6-6", "6-6", "6-3"], "play:1-1+1-1+6-2")
    assert "play:6-6+6-6+6-3" in moves
    moves = follow(["1-1", "1-1", "6-2"], ["6-6", "6-3", "5-4"], "play:1-1+1-1+6-2")
    assert plays_of(moves) == [] and "discard:6-6+6-3+5-4" in moves


def test_higher_quartet_beats_lower_quartet():
    moves = follow(["3-1", "3-1", "4-1", "3-2"], ["6-6", "6-6", "6-3", "5-4"], "play:3-1+3-1+4-1+3-2")
    assert plays_of(moves) == ["play:6-6+6-6+6-3+5-4"]


def test_a_follower_may_discard_a_group_that_would_beat():
    moves = follow(["6-1"], ["6-6", "5-1"], "play:6-1")
    assert "play:6-6" in moves and "discard:6-6" in moves


def test_discards_enumerate_each_distinct_multiset_of_n_tiles_once():
    moves = follow(["6-3", "5-4"], ["6-6", "6-6", "5-1"], "play:6-3+5-4")
    assert sorted(m for m in moves if m.startswith("discard:")) == ["discard:6-6+5-1", "discard:6-6+6-6"]


def test_a_beat_becomes_the_high_group_that_later_followers_must_beat():
    s = T.from_position([["5-1"], ["6-1"], ["6-4"], ["6-5"]], banker=0, columns=(1, 1, 1, 1))
    run(s, "play:5-1", "play:6-1")
    assert ids(s) == ["play:6-4", "discard:6-4"]
    run(s, "play:6-4", "discard:6-5")
    assert s.result()["deals"][0]["last_trick_winner"] == 2


def test_trick_winner_takes_n_columns_and_leads_the_next_trick():
    s = T.from_position([["6-6", "6-6", "5-1"], ["1-1", "1-1", "6-1"], ["4-4", "4-4", "6-4"],
                         ["3-1", "3-1", "6-5"]], banker=2)
    run(s, "play:4-4+4-4", "discard:3-1+3-1", "discard:6-6+6-6", "play:1-1+1-1")
    assert s.columns == [0, 2, 0, 0] and s.to_move == 1
    assert s.view(None)["table"]["leader"] == 1


# --------------------------------------------------------------------------- §6 the Supreme

def test_supreme_pair_only_wins_when_led():
    s = T.from_position([["4-2", "2-1", "5-1"], ["6-6", "6-6", "6-1"], ["6-3", "5-4", "6-4"],
                         ["1-1", "1-1", "6-5"]], banker=3, leader=0)
    s.play("play:4-2+2-1")
    for _ in range(3):
        assert plays_of(ids(s)) == [], "nothing beats a led Supreme"
        s.play(ids(s)[0])
    assert s.columns == [2, 0, 0, 0] and s.to_move == 0


def test_supreme_played_by_a_follower_is_a_discard():
    moves = follow(["4-1", "3-2"], ["4-2", "2-1"], "play:4-1+3-2")
    assert moves == ["discard:4-2+2-1"]


# --------------------------------------------------------------------------- §7 early death

def early_death_position(**options: object) -> T:
    # last singleton trick; seat 1 has no column but holds the best tile
    return T.from_position([["5-1"], ["6-6"], ["6-1"], ["6-4"]], banker=0, columns=(4, 0, 2, 1),
                           options=options)


def test_early_death_forces_a_player_without_columns_to_discard_on_the_last_singleton_trick():
    s = early_death_position()
    s.play("play:5-1")
    assert ids(s) == ["discard:6-6"]
    run(s, "discard:6-6", "play:6-1", "play:6-4")
    assert s.result()["deals"][0]["last_trick_winner"] == 3


def test_without_early_death_a_player_without_columns_may_win_the_last_trick():
    s = early_death_position(early_death=False)
    run(s, "play:5-1", "play:6-6", "discard:6-1", "discard:6-4")
    d = s.result()["deals"][0]
    assert d["last_trick_winner"] == 1 and d["columns"] == [4, 1, 2, 1]


def test_early_death_does_not_apply_to_a_multi_tile_last_trick():
    s = T.from_position([["5-1", "5-1"], ["6-6", "6-6"], ["6-1", "6-5"], ["6-4", "2-2"]], banker=0,
                        columns=(6, 0, 0, 0))
    s.play("play:5-1+5-1")
    assert "play:6-6+6-6" in ids(s)


# --------------------------------------------------------------------------- §9.6 worked examples

def test_worked_example_a_ordinary_last_single():
    s = T.from_position([["2-2"], ["6-5"], ["6-6"], ["5-1"]], banker=0, leader=3, columns=(1, 0, 2, 4))
    run(s, "play:5-1", "play:2-2", "discard:6-5", "play:6-6")
    assert s.finished
    assert s.result()["deals"][0]["columns"] == [1, 0, 3, 4]
    assert ledger(s) == [(0, 2, 6, "settlement"), (1, 2, 5, "settlement")]
    assert s.result()["payoffs"] == [-6, -5, 11, 0]


def test_worked_example_b_little_three_winning_the_last_trick_doubles():
    s = T.from_position([["6-6"], ["6-5"], ["2-1"], ["5-1"]], banker=0, leader=2, columns=(1, 0, 2, 4))
    run(s, "play:2-1", "discard:5-1", "discard:6-6", "discard:6-5")
    d = s.result()["deals"][0]
    assert d["columns"] == [1, 0, 3, 4] and d["multiplier"] == 2
    assert ledger(s) == [(0, 2, 12, "settlement"), (1, 2, 10, "settlement")]
    assert s.result()["payoffs"] == [-12, -10, 22, 0]


def test_worked_example_c_banker_supreme_last_trick():
    s = T.from_position([["6-6", "5-1"], ["4-2", "2-1"], ["1-1", "6-1"], ["4-4", "6-5"]], banker=1,
                        columns=(0, 1, 5, 0))
    run(s, "play:4-2+2-1", "discard:6-1+1-1", "discard:6-5+4-4", "discard:6-6+5-1")
    d = s.result()["deals"][0]
    assert d["columns"] == [0, 3, 5, 0] and d["multiplier"] == 2
    assert ledger(s) == [(0, 1, 4, "supreme"), (2, 1, 4, "supreme"), (3, 1, 4, "supreme"),
                         (0, 1, 20, "settlement"), (1, 2, 4, "settlement"), (3, 1, 20, "settlement")]
    assert s.result()["payoffs"] == [-24, 48, 0, -24]


def capture_position(**options: object) -> T:
    # worked example D before its last trick: P3 leads 2-1, P0 (no column) is dead, P1 wins with 4-2
    return T.from_position([["6-1"], ["4-2"], ["6-6"], ["2-1"]], banker=0, leader=3, columns=(0, 2, 3, 2),
                           options=options)


def test_worked_example_d_little_three_capture():
    s = run(capture_position(), "play:2-1", "discard:6-1", "play:4-2", "discard:6-6")
    d = s.result()["deals"][0]
    assert d["capture"] and d["columns"] == [0, 3, 3, 2]
    assert ledger(s) == [(3, 1, 10, "capture"), (3, 1, 1, "capture"), (3, 1, 2, "settlement")]
    assert [p["for"] for p in d["settlement"]] == [0, 2, 3]
    assert s.result()["payoffs"] == [0, 13, 0, -13]


# --------------------------------------------------------------------------- §9 payments and options

def test_capture_multiplier_multiplies_only_what_the_leader_pays_for_the_others():
    for mult, total in ((2, 2 + 20 + 2), (4, 2 + 40 + 4)):
        s = run(capture_position(capture_multiplier=mult), "play:2-1", "discard:6-1", "play:4-2", "discard:6-6")
        assert s.result()["payoffs"] == [0, total, 0, -total]


def test_no_capture_when_the_big_six_is_beaten_after_it():
    s = T.from_position([["6-1"], ["4-2"], ["6-3"], ["2-1"]], banker=0, leader=3, columns=(0, 2, 3, 2))
    run(s, "play:2-1", "discard:6-1", "play:4-2", "play:6-3")
    d = s.result()["deals"][0]
    assert not d["capture"] and d["last_trick_winner"] == 2
    assert ledger(s) == [(0, 2, 10, "settlement"), (1, 2, 2, "settlement"), (3, 2, 2, "settlement")]


def test_a_led_little_three_that_is_beaten_earns_no_multiplier():
    s = T.from_position([["6-6"], ["6-5"], ["2-1"], ["3-2"]], banker=0, leader=2, columns=(1, 0, 2, 4))
    run(s, "play:2-1", "play:3-2", "discard:6-6", "discard:6-5")
    d = s.result()["deals"][0]
    assert d["last_trick_winner"] == 3 and d["multiplier"] == 1


def test_supreme_money_is_paid_with_banker_doubling_during_play():
    s = T.from_position([["4-2", "2-1", "5-1"], ["6-6", "6-6", "6-1"], ["6-3", "5-4", "6-4"],
                         ["1-1", "1-1", "6-5"]], banker=3, leader=0)
    run(s, "play:4-2+2-1", "discard:6-6+6-6", "discard:6-3+5-4", "discard:1-1+1-1")
    assert s.running_payoffs() == [8, -2, -2, -4]
    assert [p["amount"] for p in s.view(None)["table"]["payments"]] == [2, 2, 4]


def test_quartet_money_goes_to_the_follower_who_beats_with_a_higher_quartet():
    s = T.from_position([["3-1", "3-1", "4-1", "3-2", "5-1"], ["6-6", "6-6", "6-3", "5-4", "6-1"],
                         ["1-1", "1-1", "4-4", "4-4", "5-5"], ["2-2", "2-2", "3-3", "3-3", "6-5"]],
                        banker=0)
    run(s, "play:3-1+3-1+4-1+3-2", "play:6-6+6-6+6-3+5-4", "discard:4-4+4-4+1-1+1-1",
        "discard:3-3+3-3+2-2+2-2")
    # the banker (seat 0) pays double
    assert s.running_payoffs() == [-8, 16, -4, -4]
    assert s.columns == [0, 4, 0, 0]


def test_a_final_quartet_doubles_the_settlement_but_not_its_quartet_money():
    s = T.from_position([["3-1", "3-1", "4-1", "3-2"], ["6-6", "6-6", "6-3", "5-4"], ["1-1", "1-1", "4-4", "4-4"],
                         ["2-2", "2-2", "3-3", "3-3"]], banker=2, leader=0, columns=(1, 1, 2, 0))
    run(s, "play:3-1+3-1+4-1+3-2", "play:6-6+6-6+6-3+5-4", "discard:4-4+4-4+1-1+1-1",
        "discard:3-3+3-3+2-2+2-2")
    # columns after: 1, 5, 2, 0; amounts: P0 3, P2 2×2 (banker), P3 5; ×2 for the final quartet
    assert ledger(s) == [(0, 1, 4, "quartet"), (2, 1, 8, "quartet"), (3, 1, 4, "quartet"),
                         (0, 1, 6, "settlement"), (2, 1, 8, "settlement"), (3, 1, 10, "settlement")]


def test_supreme_money_on_last_trick_false_skips_only_the_last_trick_supreme_money():
    s = T.from_position([["6-6", "5-1"], ["4-2", "2-1"], ["1-1", "6-1"], ["4-4", "6-5"]], banker=1,
                        columns=(0, 1, 5, 0), options={"supreme_money_on_last_trick": False})
    run(s, "play:4-2+2-1", "discard:6-1+1-1", "discard:6-5+4-4", "discard:6-6+5-1")
    assert ledger(s) == [(0, 1, 20, "settlement"), (1, 2, 4, "settlement"), (3, 1, 20, "settlement")]
    s = T.from_position([["4-2", "2-1", "5-1"], ["6-6", "6-6", "6-1"], ["6-3", "5-4", "6-4"],
                         ["1-1", "1-1", "6-5"]], banker=3, leader=0, options={"supreme_money_on_last_trick": False})
    run(s, "play:4-2+2-1", "discard:6-6+6-6", "discard:6-3+5-4", "discard:1-1+1-1")
    assert s.running_payoffs() == [8, -2, -2, -4]


def losing_banker_with_excess(**options: object) -> T:
    # banker P0 ends with 5 columns, P1 wins the last trick
    return T.from_position([["5-1"], ["6-6"], ["6-1"], ["6-4"]], banker=0, columns=(5, 1, 1, 0),
                           options=options)


def test_a_losing_banker_with_excess_is_paid_double_by_default():
    s = run(losing_banker_with_excess(), "play:5-1", "play:6-6", "discard:6-1", "discard:6-4")
    assert ledger(s) == [(1, 0, 2, "settlement"), (2, 1, 3, "settlement"), (3, 1, 5, "settlement")]


def test_banker_excess_doubled_false_pays_a_losing_banker_his_excess_at_x1():
    s = run(losing_banker_with_excess(banker_excess_doubled=False), "play:5-1", "play:6-6", "discard:6-1",
            "discard:6-4")
    assert ledger(s) == [(1, 0, 1, "settlement"), (2, 1, 3, "settlement"), (3, 1, 5, "settlement")]


def test_banker_excess_doubled_false_still_doubles_a_winning_banker_paying_excess():
    s = T.from_position([["6-6", "5-1"], ["4-2", "2-1"], ["1-1", "6-1"], ["4-4", "6-5"]], banker=1,
                        columns=(0, 1, 5, 0), options={"banker_excess_doubled": False})
    run(s, "play:4-2+2-1", "discard:6-1+1-1", "discard:6-5+4-4", "discard:6-6+5-1")
    assert (1, 2, 4, "settlement") in ledger(s)


def test_a_sweep_of_eight_columns_doubles_the_final_payments():
    s = T.from_position([["6-6"], ["6-1"], ["5-1"], ["6-4"]], banker=0, columns=(7, 0, 0, 0))
    run(s, "play:6-6", "discard:6-1", "discard:5-1", "discard:6-4")
    d = s.result()["deals"][0]
    assert d["multiplier"] == 2
    assert ledger(s) == [(1, 0, 20, "settlement"), (2, 0, 20, "settlement"), (3, 0, 20, "settlement")]


def test_a_loser_with_seven_columns_is_paid_three_when_early_death_is_off():
    s = T.from_position([["5-1"], ["6-6"], ["6-1"], ["6-4"]], banker=3, leader=0, columns=(7, 0, 0, 0),
                        options={"early_death": False})
    run(s, "play:5-1", "play:6-6", "discard:6-1", "discard:6-4")
    assert (1, 0, 3, "settlement") in ledger(s)


# --------------------------------------------------------------------------- §12 classic profile

def test_classic_profile_has_no_immediate_payments_and_no_final_group_multiplier():
    s = T.from_position([["6-6", "5-1"], ["4-2", "2-1"], ["1-1", "6-1"], ["4-4", "6-5"]], banker=1,
                        columns=(0, 1, 5, 0), options={"profile": "classic"})
    run(s, "play:4-2+2-1", "discard:6-1+1-1", "discard:6-5+4-4", "discard:6-6+5-1")
    d = s.result()["deals"][0]
    assert d["immediate"] == [] and d["multiplier"] == 1
    assert ledger(s) == [(0, 1, 10, "settlement"), (1, 2, 2, "settlement"), (3, 1, 10, "settlement")]


def test_classic_profile_has_no_little_three_capture():
    s = run(capture_position(profile="classic"), "play:2-1", "discard:6-1", "play:4-2", "discard:6-6")
    assert not s.result()["deals"][0]["capture"]
    assert ledger(s) == [(0, 1, 10, "settlement"), (2, 1, 1, "settlement"), (3, 1, 2, "settlement")]


def test_classic_banker_factor_escalates_while_the_banker_keeps_the_bank():
    for streak, factor in ((0, 2), (1, 3), (2, 4)):
        s = T.from_position([["2-2"], ["6-5"], ["6-6"], ["5-1"]], banker=2, leader=3, columns=(1, 0, 2, 4),
                            options={"profile": "classic"}, streak=streak)
        run(s, "play:5-1", "play:2-2", "discard:6-5", "play:6-6")
        d = s.result()["deals"][0]
        assert d["banker_factor"] == factor
        assert ledger(s) == [(0, 2, 3 * factor, "settlement"), (1, 2, 5 * factor, "settlement")]
    # the seed profile never escalates
    s = T.from_position([["2-2"], ["6-5"], ["6-6"], ["5-1"]], banker=2, leader=3, columns=(1, 0, 2, 4), streak=2)
    run(s, "play:5-1", "play:2-2", "discard:6-5", "play:6-6")
    assert s.result()["deals"][0]["banker_factor"] == 2


def test_classic_refuses_options_it_cannot_use():
    for name, value in (("capture_multiplier", 2), ("supreme_money_on_last_trick", False)):
        with pytest.raises(engine.BadOptions) as e:
            engine.new_game("tiengow", players=4, seed=1, options={"profile": "classic", name: value})
        assert e.value.option == name


def play_random_match(options: dict, seed: int = 11) -> T:
    state = engine.new_game("tiengow", players=4, seed=seed, options=options)
    rng = random.Random(seed)
    while not state.finished:
        state.play(rng.choice(state.legal_moves()))
    assert isinstance(state, T)
    return state


def test_classic_streak_grows_when_the_banker_wins_and_resets_when_he_loses():
    s = play_random_match({"profile": "classic", "deals": 12}, seed=5)
    deals = s.result()["deals"]
    factor = 2
    for d in deals:
        assert d["banker_factor"] == factor
        factor = factor + 1 if d["last_trick_winner"] == d["banker"] else 2
    assert any(d["banker_factor"] > 2 for d in deals), "pick a seed where a banker keeps the bank"


# --------------------------------------------------------------------------- deals, bank, points

def test_later_deals_pass_the_bank_to_the_last_trick_winner_and_points_accumulate():
    s = play_random_match({"deals": 4})
    deals = s.result()["deals"]
    assert len(deals) == 4 and s.deals_done == 4
    for prev, nxt in itertools.pairwise(deals):
        assert nxt["banker"] == prev["last_trick_winner"]
    assert [sum(d["net"][i] for d in deals) for i in range(4)] == s.result()["scores"]
    assert sum(s.result()["scores"]) == 0
    for d in deals:
        assert sum(d["columns"]) == 8


def test_each_deal_is_shuffled_from_the_seed_and_the_deal_number():
    s = engine.new_game("tiengow", players=4, seed=77, options={"deals": 2})
    rng = random.Random("77/0")
    tiles = chinese_set()
    rng.shuffle(tiles)
    assert sorted(s.view(0)["hand"]) == sorted(CF_NAME[f] for f in tiles[:8])
    assert s.view(None)["table"]["banker"] == rng.randrange(4)
    r = random.Random(1)
    while s.deals_done == 0:
        s.play(r.choice(s.legal_moves()))
    rng = random.Random("77/1")
    tiles = chinese_set()
    rng.shuffle(tiles)
    assert sorted(s.view(2)["hand"]) == sorted(CF_NAME[f] for f in tiles[16:24])


def test_the_first_banker_is_seeded_random_and_leads():
    bankers = {engine.new_game("tiengow", players=4, seed=k).view(None)["table"]["banker"] for k in range(30)}
    assert bankers == {0, 1, 2, 3}
    s = engine.new_game("tiengow", players=4, seed=4)
    assert s.to_move == s.view(None)["table"]["banker"]


# --------------------------------------------------------------------------- hidden information

def discard_position() -> T:
    s = T.from_position([["6-6", "5-1"], ["1-1", "6-1"], ["4-4", "6-4"], ["3-1", "6-5"]], banker=0)
    return run(s, "play:6-6", "discard:6-1")


def test_view_shows_own_discards_and_only_counts_of_other_discards():
    s = discard_position()
    mine = s.view(1)
    assert mine["discards"] == [["6-1"]]
    assert mine["table"]["trick"]["plays"][1] == {"seat": 1, "face_up": False, "count": 1, "tiles": ["6-1"]}
    for seat in (None, 0, 2, 3):
        v = s.view(seat)
        assert v["table"]["trick"]["plays"][1] == {"seat": 1, "face_up": False, "count": 1}
        assert "6-1" not in json.dumps(v), "a face-down tile leaked"
        assert v["seats"][1]["discarded"] == 1


def test_discard_events_keep_the_tiles_secret():
    s = T.from_position([["6-6", "5-1"], ["1-1", "6-1"], ["4-4", "6-4"], ["3-1", "6-5"]], banker=0)
    s.play("play:6-6")
    (ev,) = s.play("discard:6-1")
    assert "6-1" not in json.dumps(ev["data"]) and ev["secret"] == {1: {"tiles": ["6-1"]}}


def test_determinize_resamples_other_discards_but_keeps_own_and_face_up_tiles():
    s = engine.new_game("tiengow", players=4, seed=9)
    rng = random.Random(3)
    while len(s.view(None)["table"]["tricks"]) < 3:
        s.play(rng.choice(s.legal_moves()))
    seat = 0
    seen_other = set()
    for k in range(20):
        w = s.determinize(seat, random.Random(k))
        assert w.view(seat) == s.view(seat) and w.view(None) == s.view(None)
        assert w.seed != s.seed
        d = w.to_dict()
        seen_other.add(json.dumps([d["hands"][1:], [t[2] for t in d["tricks"]]]))
        everything = [t for h in d["hands"] for t in h] + [t for tr in d["tricks"] for p in tr[2] for t in p[2]]
        everything += [t for p in d["trick"] for t in p[2]]
        assert sorted(everything) == sorted(CF_NAME[f] for f in chinese_set())
    assert len(seen_other) > 1


# --------------------------------------------------------------------------- heuristics

def test_greedy_wins_with_the_cheapest_winning_group():
    s = T.from_position([["6-1", "3-3"], ["6-6", "2-2"], ["5-1", "6-5"], ["6-4", "5-5"]], banker=0)
    s.play("play:6-1")
    assert heuristics.greedy(s, 1, random.Random(1)).id == "play:2-2"


def test_greedy_discards_the_weakest_tiles_when_it_cannot_win():
    s = T.from_position([["6-6", "3-3"], ["6-1", "5-1"], ["5-5", "6-5"], ["6-4", "2-2"]], banker=0)
    s.play("play:6-6")
    assert heuristics.greedy(s, 1, random.Random(1)).id == "discard:5-1"


def test_heuristic_policies_always_return_a_legal_move():
    s = engine.new_game("tiengow", players=4, seed=21, options={"deals": 2})
    rng = random.Random(2)
    while not s.finished:
        legal = s.legal_moves()
        assert heuristics.playout(s, rng) in legal
        move = heuristics.greedy(s, s.to_move, rng)
        assert move in legal
        s.play(move)


# --------------------------------------------------------------------------- an independent reading of §3

CIVIL_ORDER = ["6-6", "1-1", "4-4", "3-1", "5-5", "3-3", "2-2", "6-5", "6-4", "6-1", "5-1"]
FAMILY_TOTAL = {"6-6": 9, "1-1": 8, "4-4": 7, "3-1": 5}


def total(t: str) -> int:
    return int(t[0]) + int(t[2])


def classify(tiles: tuple[str, ...]) -> tuple[str, int] | None:
    """(kind, rank; larger = better) of a group straight from the table of §3, or None."""
    civil = sorted((t for t in tiles if t in CIVIL_ORDER), key=CIVIL_ORDER.index)
    military = sorted(t for t in tiles if t not in CIVIL_ORDER)
    if len(tiles) == 1:
        return ("civil", -CIVIL_ORDER.index(civil[0])) if civil else ("military", total(military[0]))
    fam = civil[0] if civil and all(c == civil[0] for c in civil) and civil[0] in FAMILY_TOTAL else None
    family_ok = fam is not None and all(total(m) == FAMILY_TOTAL[fam] for m in military) and (
        len(set(military)) == len(military))
    rank = -CIVIL_ORDER.index(fam) if fam else 0
    c, m = len(civil), len(military)
    if len(tiles) == 2:
        if c == 2:
            return ("civil pair", -CIVIL_ORDER.index(civil[0])) if civil[0] == civil[1] else None
        if m == 2:
            if set(military) == {"4-2", "2-1"}:
                return ("supreme", 0)
            if total(military[0]) == total(military[1]) and military[0] != military[1]:
                return ("military pair", total(military[0]))
            return None
        return ("mixed pair", rank) if family_ok else None
    if (c, m) in ((2, 1), (1, 2), (2, 2)) and family_ok:
        return ({(2, 1): "2C+1M", (1, 2): "1C+2M", (2, 2): "quartet"}[(c, m)], rank)
    return None


def sub_multisets(hand: list[str]) -> set[tuple[str, ...]]:
    return {tuple(sorted(combo)) for k in range(1, 5) for combo in itertools.combinations(hand, k)}


def canonical(state: T, tiles: tuple[str, ...], action: str) -> str:
    return state.canonical_move_id(f"{action}:{'+'.join(tiles)}")


def test_leads_and_beats_match_an_independent_reading_of_section_3():
    rng = random.Random(2024)
    names = [CF_NAME[f] for f in chinese_set()]
    for _ in range(150):
        rng.shuffle(names)
        hands = [names[i * 8:(i + 1) * 8] for i in range(4)]
        s = T.from_position(hands, banker=0)
        groups = {t: classify(t) for t in sub_multisets(hands[0])}
        expected = {canonical(s, t, "play") for t, g in groups.items() if g}
        assert set(ids(s)) == expected
        lead_tiles = rng.choice([t for t, g in groups.items() if g])
        lead_kind = groups[lead_tiles]
        assert lead_kind is not None
        s.play(canonical(s, lead_tiles, "play"))
        follower = sorted(hands[1])
        beats = {canonical(s, t, "play") for t in sub_multisets(follower)
                 if len(t) == len(lead_tiles) and (g := classify(t)) and g[0] == lead_kind[0]
                 and lead_kind[0] != "supreme" and g[1] > lead_kind[1]}
        discards = {canonical(s, t, "discard") for t in sub_multisets(follower) if len(t) == len(lead_tiles)}
        assert sorted(ids(s)) == sorted(beats | discards)
        assert len(ids(s)) == len(beats) + len(discards)


def test_situations_name_the_moves_each_player_had_at_every_play_of_the_deal():
    # the search kit's public reading of the history (engine.tiengow.situations): for every play so far, the
    # situation it was made in -- a lead, a follow of the high group, or the §7 early-death discard of a last
    # tile -- so that moves_for(hand then, situation) lists exactly the legal moves the player had
    from engine.tiengow import DEAD, moves_for, situations

    rng = random.Random("tiengow/situations")
    dead = 0
    for seed in range(30):
        state = engine.new_game("tiengow", players=4, seed=seed)
        had = []  # (hand, legal moves) before every play of the deal
        while state.to_move is not None and not state.deals_done:
            moves = state.legal_moves()
            had.append((state.hands[state.to_move], [m.id for m in moves]))
            state.apply(rng.choice(moves))
            if state.to_move is not None and not state.deals_done:
                sits = situations(state)
                assert len(sits) == len(had)
                for (hand, ids), sit in zip(had, sits, strict=True):
                    assert [m.id for m in moves_for(hand, sit)] == ids
                dead += sits.count(DEAD)
    assert dead > 0
