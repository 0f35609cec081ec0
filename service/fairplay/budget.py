"""The AI CPU budget: milliseconds of AI search one game and one client may have per minute.

A suggestion is charged, when it is asked for, the most it can cost: each of its ``workers`` parts may
search for ``time_ms`` (an engine without ``time_ms`` -- greedy, random -- is charged a nominal
:data:`NOMINAL_COST_MS`).  The charge goes to two budgets in Redis, both for the current clock minute:

* the game's, ``th:budget:{<game id>}:<minute>`` (``AI_CPU_MS_PER_MINUTE_PER_GAME``, default 120000), and
* the client's, ``th:budget:client:<client>:<minute>`` (``AI_CPU_MS_PER_MINUTE_PER_CLIENT``, default 60000;
  the client is the bearer token, see :mod:`service.fairplay.clients`), and
* the client's address's, the same key shape with ``ip:<address>`` and the same limit, so that many tokens
  of one address share one budget.

Each charge is one Lua script on one key (``INCRBY`` only if the total stays within the budget), so the
two keys may live on different Redis Cluster slots; when the client's budget refuses after the game's has
accepted, the game's charge is given back.  A refused suggestion is a 429 problem (``ai-budget``) with
``Retry-After`` = the seconds left in the minute, and nothing is queued.  When a part job ends, the worker
gives back what it did not use (charged ``time_ms`` minus the search's ``elapsed_ms``), so the budget counts
the CPU really spent; a give-back never makes a key that has expired meanwhile.

AI seats' searches count against their creator like suggestions: each play job is charged, when it is
queued, its seat's most (``time_ms``, or the nominal cost) to the budget of the address that created the
game (:func:`charge_play`), the budget that address's suggestions draw on, and gives back what its search
did not use when it ends.  A play job is never refused --
that would stall the game -- but when the budget cannot pay, the seat moves with the cheap fallback engine
(greedy) until the next minute.  So one address's 20 all-AI games at the largest budgets get the CPU of
one budget, not twenty.  A play job that finds nothing to search for (its game moved on or is gone) gives
its whole charge back, as does a charge for a job that RQ refused as a duplicate (two processes queued the
same move); each charge carries an id and is given back at most once, however often its job runs.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Mapping
from typing import Any

import redis

from service.errors import BudgetSpent
from service.keys import budget_client_key, budget_game_key, budget_refund_key

#: the charge of a suggestion by an engine with no ``time_ms`` parameter, in milliseconds
NOMINAL_COST_MS = 100
#: seconds a budget key outlives its minute
KEY_TTL_SECONDS = 120

#: KEYS: a budget key.  ARGV: cost, limit, ttl.  The new total, or -1 when it would exceed the limit.
CHARGE_LUA = """
local total = tonumber(redis.call('GET', KEYS[1]) or '0') + tonumber(ARGV[1])
if total > tonumber(ARGV[2]) then return -1 end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return total
"""
#: KEYS: a budget key.  ARGV: milliseconds to give back.  Only while the key exists.
REFUND_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('DECRBY', KEYS[1], ARGV[1])
"""


def part_cost_ms(params: Mapping[str, Any]) -> int:
    """The most one search with ``params`` may take, in milliseconds."""
    time_ms = params.get("time_ms")
    return int(time_ms) if isinstance(time_ms, int) else NOMINAL_COST_MS


def charge(conn: redis.Redis, cfg: Mapping[str, Any], game_id: str, client: str, params: Mapping[str, Any],
           workers: int, now: float | None = None, address: str | None = None) -> dict[str, Any]:
    """Charge a suggestion of ``workers`` parts to the game's and the client's budgets of this minute (and
    to the budget of the client's ``address`` when given and not the client itself: many tokens of one
    address share it), or raise :class:`~service.errors.BudgetSpent`.  Returns what each part may give back
    (for the job's meta)."""
    now = time.time() if now is None else now
    minute = int(now // 60)
    part = part_cost_ms(params)
    cost = part * workers
    retry = max(1, math.ceil(60 - now % 60))
    keys = [budget_game_key(game_id, minute), budget_client_key(client, minute)]
    limits = [int(cfg["AI_CPU_MS_PER_MINUTE_PER_GAME"]), int(cfg["AI_CPU_MS_PER_MINUTE_PER_CLIENT"])]
    whose = ["this game", "this client"]
    if address is not None and address != client:
        keys.append(budget_client_key(address, minute))
        limits.append(int(cfg["AI_CPU_MS_PER_MINUTE_PER_CLIENT"]))
        whose.append("this client address")
    charged: list[str] = []
    for key, limit, who in zip(keys, limits, whose, strict=True):
        if conn.eval(CHARGE_LUA, 1, key, cost, limit, KEY_TTL_SECONDS) == -1:
            for done in charged:
                conn.eval(REFUND_LUA, 1, done, cost)
            raise BudgetSpent(f"the AI budget of {who} for this minute ({limit} ms of search) cannot pay for "
                              f"{cost} ms more ({workers} x time_ms {part}); ask for less or wait", retry_after=retry)
        charged.append(key)
    return {"keys": keys, "part_ms": part, "id": uuid.uuid4().hex}


def charge_play(conn: redis.Redis, cfg: Mapping[str, Any], creator: str, params: Mapping[str, Any],
                now: float | None = None) -> dict[str, Any] | None:
    """Charge one AI seat's search (``params``) to its creator's budget of this minute, the budget its
    suggestions draw on too: what the play job may give back (for its meta, as a suggestion's part), or
    None when the budget cannot pay -- the seat then moves with the cheap fallback engine
    (``service.queues.schedule_play``), so the game goes on and costs its creator next to nothing."""
    now = time.time() if now is None else now
    key = budget_client_key(creator, int(now // 60))
    limit = int(cfg["AI_CPU_MS_PER_MINUTE_PER_CLIENT"])
    cost = part_cost_ms(params)
    if conn.eval(CHARGE_LUA, 1, key, cost, limit, KEY_TTL_SECONDS) == -1:
        return None
    return {"keys": [key], "part_ms": cost, "id": uuid.uuid4().hex}


def refund_unused(conn: redis.Redis, charged: Mapping[str, Any] | None, used_ms: float) -> None:
    """Give back what a part job charged and did not use (``used_ms``: its search's elapsed time; 0 gives
    the whole charge back).  Once per charge: a job that runs twice (queued again by a second web process,
    or retried) or a refund asked for twice gives nothing back the second time (the charge's ``id`` marks
    it, ``budget_refund_key``), so a budget never grows past what it was given."""
    if not charged:
        return
    unused = int(charged["part_ms"] - max(0.0, used_ms))
    if unused <= 0:
        return
    charge_id = charged.get("id")
    if charge_id and not conn.set(budget_refund_key(str(charge_id)), 1, nx=True, ex=KEY_TTL_SECONDS):
        return
    for key in charged["keys"]:
        conn.eval(REFUND_LUA, 1, key, unused)
