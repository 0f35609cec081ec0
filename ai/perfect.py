"""The ``perfect`` reference engine: the same search as ``ismcts`` on the one true world.

It measures the size of the prize: how much a seat would gain if it could see every hand.  The search is
``ai.ismcts``'s, with the same parameters, the same playouts and the same budget, but every iteration plays
in a copy of the true state instead of a fresh determinization (perfect-information Monte Carlo on the single
true world: UCT with availability counts where nothing varies between iterations but the playouts).  The true
state also holds what the rules leave to chance inside it (Kozel's and Tiu U's stock order, the next deal's
seed), so the reference knows the draws too: an upper bound on what any fair engine can reach, not a player.

It is a reference engine (``ai.REFERENCE_ENGINES``): no server lists or runs it, ``ai.decide`` refuses it
(``ai.ArenaOnly``), and only the arena seats it, through ``ai.decide_on_true_state`` (``docs/ai.md``).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from ai.ismcts import IsmctsEngine, Worlds
from ai.protocol import Preset
from engine.game import Seat, State


class PerfectEngine(IsmctsEngine):
    id = "perfect"
    description = ("Reference for the arena only: the ismcts search on the true state (it sees every hand and "
                   "the stock), to measure what hidden information costs. Never served.")
    #: ismcts's parameters but inference's: the true state leaves nothing to infer
    params = tuple(p for p in IsmctsEngine.params if not p.name.startswith("inference"))
    presets: ClassVar[tuple[Preset, ...]] = ()

    def worlds(self, state: State, seat: Seat, params: dict[str, Any],
               rng: random.Random) -> tuple[Worlds, None]:
        # ``state`` is the true state (``ai.decide_on_true_state``): every iteration plays in a copy of it
        return (lambda r: state.clone()), None
