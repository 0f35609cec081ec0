"""The ``perfect`` reference engine: the same search as ``ismcts`` on the one true world.

It measures the size of the prize: how much a seat would gain if it could see every hand.  The search is
``ai.ismcts``'s, with the same parameters, the same playouts and the same budget, but every iteration plays
in a copy of the true state instead of a fresh determinization (perfect-information Monte Carlo on the single
true world: UCT with availability counts where nothing varies between iterations but the playouts).  The true
state also holds what the rules leave to chance inside it (Kozel's and Tiu U's stock order, the next deal's
seed), so the reference knows the draws too: an upper bound on what any fair engine can reach, not a player.

``sees="hands"`` splits that prize in two: every iteration then plays in ``state.restocked(rng)``, the true
state with the stock's order (and the seed of later deals) redrawn, so the reference knows every hand but not
the draws.  Where the stock is a large part of the prize (Kozel's bazaar, Tiu U's stock), the gap between
``perfect:sees=hands`` and ``ismcts`` is what inference about the hands could win at most; at Tien Gow,
which has no stock, both are the same engine.

It is a reference engine (``ai.REFERENCE_ENGINES``): no server lists or runs it, ``ai.decide`` refuses it
(``ai.ArenaOnly``), and only the arena seats it, through ``ai.decide_on_true_state`` (``docs/ai.md``).
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any, ClassVar

from ai.ismcts import IsmctsEngine, Worlds
from ai.protocol import Param, Preset
from engine.game import Seat, State


class PerfectEngine(IsmctsEngine):
    id = "perfect"
    description = ("Reference for the arena only: the ismcts search on the true state (it sees every hand and "
                   "the stock), to measure what hidden information costs. Never served.")
    #: ismcts's parameters but inference's (the true state leaves nothing to infer), with the other seats
    #: played by the tree's statistics by default at every rule set, as every figure of the reference was
    #: measured (``ismcts``'s Tien Gow default plays them by the greedy model since 2026-12-07)
    params = (*(dataclasses.replace(p, default="tree") if p.name == "opponents" else p
                for p in IsmctsEngine.params if not p.name.startswith("inference")),
              Param("sees", str, "all", "what the reference knows: 'all' (every hand and what the rules leave to "
                    "chance in the state, such as the stock's order) or 'hands' (every hand; the stock's order "
                    "and later deals redrawn every iteration)", choices=("all", "hands")))
    presets: ClassVar[tuple[Preset, ...]] = ()

    def worlds(self, state: State, seat: Seat, params: dict[str, Any],
               rng: random.Random) -> tuple[Worlds, None]:
        # ``state`` is the true state (``ai.decide_on_true_state``): every iteration plays in a copy of it,
        # with the stock's order redrawn when the reference sees only the hands
        if params["sees"] == "hands":
            return state.restocked, None
        return (lambda r: state.clone()), None
