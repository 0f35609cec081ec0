"""tilehouse's rules engine: pure Python, no I/O, deterministic given a seed.

Public names: ``new_game``, ``load_state``, ``RULES``, ``State``, ``Move``, ``perft`` and the errors.
Importing this package registers every rule set listed below (one line per rule set).
"""

from __future__ import annotations

# The registry: importing a rule-set module registers it (one line per rule set).
from engine import kozel, tiengow, tiengow_wall, tiuu  # noqa: F401
from engine.exceptions import BadOptions, BadState, EngineError, IllegalMove, InvalidMove, UnknownRules
from engine.game import RULES, Move, Option, RuleSet, State, event, get_rules, load_state, new_game, perft

__all__ = [
    "RULES", "BadOptions", "BadState", "EngineError", "IllegalMove", "InvalidMove", "Move", "Option",
    "RuleSet", "State", "UnknownRules", "event", "get_rules", "load_state", "new_game", "perft",
]
