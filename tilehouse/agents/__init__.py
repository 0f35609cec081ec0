"""PettingZoo AEC environments for every tilehouse rule set and player count.

Install the extra, then::

    from tilehouse.agents import env
    e = env("tiengow_wall", players=3, options={"games": 2})
    e.reset(seed=42)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

* Agents are ``"player_0"`` .. ``"player_{n-1}"``, the engine's seats; the engine says who acts next (Tien Gow
  and Kozel are not round-robin: the trick winner leads, a Kozel player may draw again).
* Observation: ``{"observation": float32 vector, "action_mask": int8 vector}``.  The vector encodes the
  seat's own view only (:mod:`tilehouse.agents.encoding`); the view dict itself is ``info["view"]``
  (``env.infos[agent]``), with ``info["legal_moves"]``, the move ids of the mask's ones.  The mask has ones
  only for the agent to act.
* Actions: ``Discrete(len(move_ids(rules, players)))``, an index into the fixed list of every move id of
  the rule set (:mod:`tilehouse.agents.actions`, ``docs/agents.md``); ``env.unwrapped.move_id(a)`` and
  ``env.unwrapped.action_of(move_id)`` convert.  An action outside the mask raises ``ValueError`` (the
  engine's illegal move), as OpenSpiel does.
* ``reset(seed=s)`` deals the match of engine seed ``s`` (the same deal as ``POST /v1/games`` with that seed
  played by the engine directly); without a seed a random one.  The same seed and actions give the same
  observations, rewards and infos.
* Rewards: after every step, each agent's change of the engine's zero-sum ``running_payoffs()``, so an
  agent's cumulative reward at the end is its ``result()["payoffs"]`` entry.  No truncation: matches end.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

import engine
from engine.game import State
from tilehouse.agents.actions import action_index, move_ids
from tilehouse.agents.encoding import Layout

__all__ = ["TilehouseEnv", "action_index", "env", "move_ids", "observe_seat", "raw_env"]


def observe_seat(state: State, seat: int, layout: Layout | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """``(vector, action mask, view)`` of ``seat`` in ``state``: what the environment shows that seat.  A
    function of ``state.view(seat)`` and, for the seat to move, of its legal moves -- both fixed by the
    seat's information set."""
    layout = layout or Layout.of(state)
    view = state.view(seat)
    index = action_index(state.rules.id, state.players)
    mask = np.zeros(len(index), dtype=np.int8)
    if state.to_move == seat:
        mask[[index[m.id] for m in state.legal_moves()]] = 1
    return layout.encode(view, seat), mask, view


class TilehouseEnv(AECEnv):
    """One rule set, player count and options; a new match at every ``reset``."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "ansi"], "name": "tilehouse_v0", "is_parallelizable": False}

    def __init__(self, rules: str, players: int | None = None, options: Mapping[str, Any] | None = None,
                 render_mode: str | None = None) -> None:
        super().__init__()
        rs = engine.get_rules(rules)
        self.rules = rs.id
        self.players = players or rs.default_players
        self.options = rs.validate_options(options, self.players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        self.render_mode = render_mode
        self._ids = move_ids(self.rules, self.players)
        self._index = action_index(self.rules, self.players)
        self._layout = Layout.of(rs.new(self.players, 0, self.options))
        self.possible_agents = [f"player_{i}" for i in range(self.players)]
        n = len(self._ids)
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(-np.inf, np.inf, (self._layout.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (n,), np.int8)}) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.state_: State | None = None
        self.seed_used: int | None = None

    # ---- the action space
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def move_id(self, action: int) -> str:
        return self._ids[action]

    def action_of(self, move_id: str) -> int:
        return self._index[move_id]

    # ---- the protocol
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.seed_used = int(seed) if seed is not None else secrets.randbits(63)
        if seed is not None:
            for a in self.possible_agents:
                self.action_spaces[a].seed(seed)
        self.state_ = engine.new_game(self.rules, players=self.players, seed=self.seed_used, options=self.options)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._payoffs = list(self.state_.running_payoffs())
        self._refresh_infos()
        self.agent_selection = self._agent_to_act()

    def _agent_to_act(self) -> str:
        assert self.state_ is not None
        seat = self.state_.to_move
        return self.possible_agents[seat if seat is not None else 0]

    def _refresh_infos(self) -> None:
        assert self.state_ is not None
        state = self.state_
        self.infos = {}
        for a in self.agents:
            seat = self.possible_agents.index(a)
            legal = [m.id for m in state.legal_moves()] if state.to_move == seat else []
            self.infos[a] = {"view": state.view(seat), "legal_moves": legal}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.state_ is not None, "call reset() first"
        vector, mask, _view = observe_seat(self.state_, self.possible_agents.index(agent), self._layout)
        return {"observation": vector, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.state_ is not None
        if action is None or not 0 <= int(action) < len(self._ids):
            raise ValueError(f"action must be an integer in 0..{len(self._ids) - 1}, not {action!r}")
        self._cumulative_rewards[agent] = 0.0
        self.state_.play(self._ids[int(action)])  # IllegalMove (a ValueError) for an action outside the mask
        payoffs = list(self.state_.running_payoffs())
        self.rewards = {a: float(payoffs[i] - self._payoffs[i]) for i, a in enumerate(self.possible_agents)
                        if a in self.agents}
        self._payoffs = payoffs
        if self.state_.finished:
            for a in self.agents:
                self.terminations[a] = True
        self._refresh_infos()
        self.agent_selection = self._agent_to_act()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None or self.state_ is None:
            return None
        v = self.state_.view(None)
        text = json.dumps({"to_move": v["to_move"], "seats": v["seats"], "table": v["table"],
                           "result": v["result"]}, separators=(",", ":"))
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        self.state_ = None


def raw_env(rules: str, players: int | None = None, options: Mapping[str, Any] | None = None,
            render_mode: str | None = None) -> TilehouseEnv:
    """The environment without PettingZoo's checking wrappers."""
    return TilehouseEnv(rules, players=players, options=options, render_mode=render_mode)


def env(rules: str, players: int | None = None, options: Mapping[str, Any] | None = None,
        render_mode: str | None = None) -> AECEnv:
    """The environment of ``rules`` with ``players`` players (default: the rule set's default) and rule
    ``options``, wrapped in PettingZoo's order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(raw_env(rules, players=players, options=options, render_mode=render_mode))
