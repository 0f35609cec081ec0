"""tilehouse's rules engine: pure Python, no I/O, deterministic given a seed.

Public names: ``new_game``, ``load_state``, ``RULES``, ``State``, ``Move``, ``perft`` and the errors.
Importing this package registers every rule set listed below (one line per rule set).
"""

from __future__ import annotations

from engine.exceptions import BadOptions, BadState, EngineError, IllegalMove, InvalidMove, UnknownRules
from engine.game import RULES, Move, Option, RuleSet, State, event, get_rules, load_state, new_game, perft

# The registry: importing a rule-set module registers it.
for _module in ("tiengow", "tiengow_wall", "tiuu", "kozel"):
    try:
        __import__(f"engine.{_module}")
    except ModuleNotFoundError as _e:  # a rule set still being written must not break the others
        if _e.name != f"engine.{_module}":
            raise

__all__ = [
    "RULES", "BadOptions", "BadState", "EngineError", "IllegalMove", "InvalidMove", "Move", "Option",
    "RuleSet", "State", "UnknownRules", "event", "get_rules", "load_state", "new_game", "perft",
]
