"""The PettingZoo environments of ``tilehouse.agents`` (issue 13, point 1): PettingZoo's own API test and a
seed-determinism test for every rule set and player count, the fixed action space covers every legal move,
observations depend only on the seat's information set (checked with ``determinize``), rewards add up to
the engine's payoffs, and the base install neither lists nor imports the agents extra."""

from __future__ import annotations

import random
import subprocess
import sys
import tomllib

import numpy as np
import pytest
from api_support import ROOT
from pettingzoo.test import api_test

import engine
from tilehouse.agents import action_index, env, move_ids, observe_seat, raw_env

#: every rule set with every player count, with short matches
CONFIGS = [(r, p) for r in sorted(engine.RULES) for p in engine.RULES[r].players]
SHORT = {"kozel": {"target": 15}}
AGENTS_EXTRA = {"pettingzoo", "gymnasium", "numpy", "openskill"}
# PettingZoo's api_test suggests a Box observation; a dict with an action mask is its own classic envs' shape
pytestmark = [pytest.mark.filterwarnings("ignore:Observation space for each agent probably:UserWarning"),
              pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")]


def _ids(config: tuple[str, int]) -> str:
    return f"{config[0]}-{config[1]}"


def _name(requirement: str) -> str:
    return requirement.split(">")[0].split("=")[0].split("[")[0].split("<")[0].strip().lower()


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_pettingzoo_api_test_passes_for_every_rule_set_and_player_count(config):
    rules, players = config
    api_test(env(rules, players=players, options=SHORT.get(rules)), num_cycles=150)


def _play(rules: str, players: int, seed: int, moves_seed: int, limit: int = 400) -> list:
    """Every observation, reward and info of a match played with actions drawn from the masks."""
    e = env(rules, players=players, options=SHORT.get(rules))
    e.reset(seed=seed)
    rng = random.Random(moves_seed)
    trace = []
    for agent in e.agent_iter(max_iter=limit):
        obs, reward, terminated, truncated, info = e.last()
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, info["view"]))
        e.step(None if terminated or truncated else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return trace


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_the_same_seed_and_actions_give_the_same_match_and_another_seed_another_deal(config):
    rules, players = config
    first = _play(rules, players, seed=12, moves_seed=3)
    assert len(first) > 5
    assert _play(rules, players, seed=12, moves_seed=3) == first
    other = _play(rules, players, seed=13, moves_seed=3)
    assert [t[1] for t in other[:1]] != [t[1] for t in first[:1]]
    # reset(seed) deals what the engine deals from that seed
    e = raw_env(rules, players=players, options=SHORT.get(rules))
    e.reset(seed=12)
    fresh = engine.new_game(rules, players=players, seed=12, options=SHORT.get(rules))
    assert e.infos[e.agent_selection]["view"] == fresh.view(fresh.to_move)


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_every_legal_move_of_every_option_variant_is_in_the_fixed_action_space(config):
    rules, players = config
    rs = engine.RULES[rules]
    index = action_index(rules, players)
    assert len(index) == len(move_ids(rules, players))
    variants = [{}] + [opts for p, opts in rs.variants if p == players]
    for k, options in enumerate(variants):
        for seed in range(4):
            state = engine.new_game(rules, players=players, seed=seed, options={**SHORT.get(rules, {}), **options})
            rng = random.Random(seed)
            while not state.finished:
                legal = state.legal_moves()
                missing = [m.id for m in legal if m.id not in index]
                assert not missing, (options, missing[:3])
                state.apply(rng.choice(legal))
        assert k < len(variants)


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_an_observation_is_the_same_in_every_world_of_the_seats_information_set(config):
    rules, players = config
    rng = random.Random(7)
    checked = 0
    state = engine.new_game(rules, players=players, seed=21, options=SHORT.get(rules))
    while not state.finished and checked < 12:
        for _ in range(rng.randrange(1, 6)):
            if state.finished:
                break
            state.apply(rng.choice(state.legal_moves()))
        if state.finished:
            break
        for seat in range(players):
            vector, mask, view = observe_seat(state, seat)
            for w in range(2):
                world = state.determinize(seat, random.Random(w))
                other_hands = [world.view(s)["hand"] for s in range(players) if s != seat]
                w_vector, w_mask, w_view = observe_seat(world, seat)
                assert np.array_equal(vector, w_vector) and np.array_equal(mask, w_mask) and view == w_view
                if other_hands != [state.view(s)["hand"] for s in range(players) if s != seat]:
                    checked += 1  # a world that really differs in what the seat cannot see
    if (rules, players) == ("tiengow_wall", 2):
        assert checked == 0  # all 32 tiles are dealt to two seats: the other hand is known, one world
    else:
        assert checked > 0


def test_the_encoding_sees_the_observers_own_hand_but_not_the_others():
    state = engine.new_game("tiengow", players=4, seed=5)
    vectors = [observe_seat(state, s)[0] for s in range(4)]
    assert all(not np.array_equal(vectors[0], v) for v in vectors[1:])


@pytest.mark.parametrize("rules", sorted(engine.RULES))
def test_the_cumulative_rewards_are_the_engines_payoffs(rules):
    e = raw_env(rules, options=SHORT.get(rules))
    e.reset(seed=4)
    total = dict.fromkeys(e.possible_agents, 0.0)
    rng = random.Random(2)
    for agent in e.agent_iter(max_iter=20_000):
        obs, _reward, terminated, truncated, _info = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        for a in e.possible_agents:
            total[a] += e.rewards.get(a, 0.0)
        del agent
    payoffs = e.state_.result()["payoffs"]
    assert e.state_.finished and not e.agents
    assert [round(total[a], 9) for a in e.possible_agents] == [round(p, 9) for p in payoffs]


def test_an_action_outside_the_mask_is_a_value_error_and_changes_nothing():
    e = raw_env("tiuu")
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = e.state_.to_dict()
    with pytest.raises(ValueError):
        e.step(illegal)
    with pytest.raises(ValueError):
        e.step(len(mask))
    assert e.state_.to_dict() == before
    legal = int(np.flatnonzero(mask)[0])
    assert e.action_of(e.move_id(legal)) == legal


def test_the_base_install_neither_lists_nor_imports_the_agents_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {_name(r) for r in project["dependencies"]}
    assert not base & AGENTS_EXTRA
    assert {_name(r) for r in project["optional-dependencies"]["agents"]} == AGENTS_EXTRA
    assert {_name(r) for r in project["optional-dependencies"]["test"]} >= AGENTS_EXTRA
    code = ("import sys, engine, ai, ai.arena, ai.arena_cli, service, service.cli, bench, tilehouse, worker\n"
            "from service import create_app\n"
            f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(AGENTS_EXTRA)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""
