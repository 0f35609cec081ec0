"""Per-rule-set heuristics (the greedy engine's one-ply choice and cheap playout policies).

Each module ``ai/heuristics/<rules_id>.py`` defines ``greedy(state, seat, rng) -> Move`` and
``playout(state, rng) -> Move``.
"""
