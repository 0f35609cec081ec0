"""Configuration of the HTTP service and its workers.

Three layers, later ones win (Flask's ``flaskr`` pattern): the defaults below, then environment variables
``TILEHOUSE_<NAME>`` (for example ``TILEHOUSE_REDIS_URL``, ``TILEHOUSE_GAME_TTL_SECONDS``), then the mapping
passed to ``create_app``.  Every default is a named constant with its unit; the workers read the same layers
(without a mapping), so an API process and its workers agree as long as they share the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

#: Redis holding games, events and the RQ queues
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
#: sentinels to ask for the current master (``host:port,host:port``); empty: ``REDIS_URL`` is the server
#: (service.connections)
DEFAULT_REDIS_SENTINELS = ""
#: the name under which the sentinels monitor the master
DEFAULT_REDIS_SENTINEL_MASTER = "tilehouse"
#: replicas that must have a game's commit (Redis ``WAIT``) before it is acknowledged; 0: do not wait
DEFAULT_REDIS_WAIT_REPLICAS = 0
#: how long a commit waits for those replicas, in milliseconds; fewer acknowledgements fail the request (503)
DEFAULT_REDIS_WAIT_TIMEOUT_MS = 1000
#: idle time after which a game and everything stored for it expire, in seconds (7 days); refreshed on every move
DEFAULT_GAME_TTL_SECONDS = 7 * 24 * 3600
#: largest request body accepted, in bytes (a move or a game creation is well under 1 KiB)
DEFAULT_MAX_BODY_BYTES = 64 * 1024
#: hard limit for one AI job (play or suggestion), in seconds; a timed-out play job is retried, then replaced
DEFAULT_AI_JOB_TIMEOUT_SECONDS = 120
#: how long finished job results stay readable, in seconds
DEFAULT_JOB_RESULT_TTL_SECONDS = 3600
#: how long failed jobs stay readable, in seconds
DEFAULT_JOB_FAILURE_TTL_SECONDS = 24 * 3600
#: the Retry-After we send with a 503, in seconds
DEFAULT_RETRY_AFTER_SECONDS = 5
#: suggestions one seat may ask for per minute (each is AI work on a shared queue); more is a 429
DEFAULT_SUGGESTIONS_PER_MINUTE = 30
#: socket timeout of the Redis client used by the API, in seconds
DEFAULT_REDIS_SOCKET_TIMEOUT_SECONDS = 5.0
#: origins a browser page may call the API from (CORS): ``*`` or a comma-separated list of origins
#: (``https://play.example.com,http://localhost:5173``).  ``*`` is safe here because the API is
#: authorised by bearer tokens that a page must hold, never by cookies a browser would add by itself.
DEFAULT_CORS_ORIGINS = "*"
#: server caps on engine parameters: a seat or suggestion asking for more is a 422; an engine whose
#: own default is above a cap runs at the cap.  10 s is ismcts's own default time budget.
DEFAULT_AI_MAX_TIME_MS = 10_000
#: search iterations; about 10 s of ismcts on the slower rule sets
DEFAULT_AI_MAX_ITERATIONS = 50_000
#: jobs one ismcts suggestion may be split into (``workers``)
DEFAULT_AI_MAX_WORKERS = 4
#: longest quiet spell of a push stream before it sends a keep-alive comment, in seconds (the requirement is
#: one at least every 15 s; 10 leaves room for a slow write)
DEFAULT_STREAM_KEEPALIVE_SECONDS = 10.0
#: how long a stream ticket opens streams, in seconds (long enough for a page to connect and for
#: EventSource's automatic reconnects after a short drop)
DEFAULT_STREAM_TICKET_TTL_SECONDS = 60
#: seconds between two heartbeats of a running AI job (service.hardening.recovery)
DEFAULT_JOB_HEARTBEAT_SECONDS = 2
#: seconds after its last heartbeat at which a running AI job counts as abandoned (its worker died)
DEFAULT_ABANDONED_JOB_SECONDS = 8
#: seconds between two maintenance rounds of the workers (abandoned jobs failed over, registries cleaned)
DEFAULT_WORKER_MAINTENANCE_SECONDS = 5
#: bearer token that /metrics requires; empty: none (service.hardening.metrics_access)
DEFAULT_METRICS_TOKEN = ""
#: a second ``host:port`` that gunicorn listens on and the only one that serves /metrics; empty or ``off``:
#: no such listener, and /metrics answers on the API's address only with the metrics token
DEFAULT_METRICS_BIND = "127.0.0.1:9100"
#: the values of METRICS_BIND that mean "no metrics listener"
METRICS_BIND_OFF = frozenset({"", "off"})

#: a seat's presence (``last_seen_ms``) is written at most this often, in seconds
DEFAULT_PRESENCE_INTERVAL_SECONDS = 5.0
#: new games one client address may create per minute (a moving window; more is a 429)
DEFAULT_GAMES_PER_MINUTE = 10
#: games of one client address that may be live (not finished, expired or deleted) at once
DEFAULT_LIVE_GAMES_PER_CLIENT = 20
#: seconds after which a listed game nobody is at (no AI to move, no seat seen) stops counting as live
DEFAULT_LIVE_IDLE_SECONDS = 60.0
#: push streams one client address may have open at once, over every API process (service.fairplay.streams)
DEFAULT_STREAMS_PER_CLIENT = 16
#: push streams one API process holds at once; below gunicorn's worker_connections (1000), so a process
#: full of streams still has room for the API's ordinary requests
DEFAULT_STREAMS_PER_PROCESS = 500
#: milliseconds of AI search (suggestions) one game may be charged per clock minute
DEFAULT_AI_CPU_MS_PER_MINUTE_PER_GAME = 120_000
#: milliseconds of AI search (suggestions) one client (bearer token, else address) may be charged per minute
DEFAULT_AI_CPU_MS_PER_MINUTE_PER_CLIENT = 60_000
#: milliseconds an AI seat of a table with no person at it (every seat an AI) waits after the table's
#: previous move before it starts its own (service.queues: a spectator's pace, and what such a table costs
#: in worker time and Redis bytes per hour); 0: no pause.  The first move of a game is never paced.
DEFAULT_AI_PACE_MS = 4000
#: the server secret mixed into the seeds of tables with human seats (service.fairplay.seeds); empty: a
#: random secret generated once and kept in Redis
DEFAULT_SEED_SECRET = ""

# The settings of the processes rather than of the app, read from the environment by the process itself
# (``TILEHOUSE_<NAME>``; not in DEFAULTS): their defaults are named here too, once.
#: ``TILEHOUSE_BIND``: the address the API listens on (gunicorn.conf.py, ``tilehouse serve``)
DEFAULT_BIND = "127.0.0.1:8000"
#: ``TILEHOUSE_LOG_LEVEL``: the level of the JSON log lines of the API, its workers and gunicorn
DEFAULT_LOG_LEVEL = "INFO"
#: ``TILEHOUSE_WORKER_CLASS``: gunicorn's worker class (gunicorn.conf.py says why gevent)
DEFAULT_WORKER_CLASS = "gevent"

DEFAULTS: dict[str, Any] = {
    "REDIS_URL": DEFAULT_REDIS_URL,
    "REDIS_SENTINELS": DEFAULT_REDIS_SENTINELS,
    "REDIS_SENTINEL_MASTER": DEFAULT_REDIS_SENTINEL_MASTER,
    "REDIS_WAIT_REPLICAS": DEFAULT_REDIS_WAIT_REPLICAS,
    "REDIS_WAIT_TIMEOUT_MS": DEFAULT_REDIS_WAIT_TIMEOUT_MS,
    "GAME_TTL_SECONDS": DEFAULT_GAME_TTL_SECONDS,
    "MAX_BODY_BYTES": DEFAULT_MAX_BODY_BYTES,
    "AI_JOB_TIMEOUT_SECONDS": DEFAULT_AI_JOB_TIMEOUT_SECONDS,
    "JOB_RESULT_TTL_SECONDS": DEFAULT_JOB_RESULT_TTL_SECONDS,
    "JOB_FAILURE_TTL_SECONDS": DEFAULT_JOB_FAILURE_TTL_SECONDS,
    "RETRY_AFTER_SECONDS": DEFAULT_RETRY_AFTER_SECONDS,
    "REDIS_SOCKET_TIMEOUT_SECONDS": DEFAULT_REDIS_SOCKET_TIMEOUT_SECONDS,
    "SUGGESTIONS_PER_MINUTE": DEFAULT_SUGGESTIONS_PER_MINUTE,
    "CORS_ORIGINS": DEFAULT_CORS_ORIGINS,
    "AI_MAX_TIME_MS": DEFAULT_AI_MAX_TIME_MS,
    "AI_MAX_ITERATIONS": DEFAULT_AI_MAX_ITERATIONS,
    "AI_MAX_WORKERS": DEFAULT_AI_MAX_WORKERS,
    "STREAM_KEEPALIVE_SECONDS": DEFAULT_STREAM_KEEPALIVE_SECONDS,
    "STREAM_TICKET_TTL_SECONDS": DEFAULT_STREAM_TICKET_TTL_SECONDS,
    "PRESENCE_INTERVAL_SECONDS": DEFAULT_PRESENCE_INTERVAL_SECONDS,
    "SEED_SECRET": DEFAULT_SEED_SECRET,
    "GAMES_PER_MINUTE": DEFAULT_GAMES_PER_MINUTE,
    "LIVE_GAMES_PER_CLIENT": DEFAULT_LIVE_GAMES_PER_CLIENT,
    "LIVE_IDLE_SECONDS": DEFAULT_LIVE_IDLE_SECONDS,
    "STREAMS_PER_CLIENT": DEFAULT_STREAMS_PER_CLIENT,
    "STREAMS_PER_PROCESS": DEFAULT_STREAMS_PER_PROCESS,
    "AI_CPU_MS_PER_MINUTE_PER_GAME": DEFAULT_AI_CPU_MS_PER_MINUTE_PER_GAME,
    "AI_CPU_MS_PER_MINUTE_PER_CLIENT": DEFAULT_AI_CPU_MS_PER_MINUTE_PER_CLIENT,
    "AI_PACE_MS": DEFAULT_AI_PACE_MS,
    "JOB_HEARTBEAT_SECONDS": DEFAULT_JOB_HEARTBEAT_SECONDS,
    "ABANDONED_JOB_SECONDS": DEFAULT_ABANDONED_JOB_SECONDS,
    "WORKER_MAINTENANCE_SECONDS": DEFAULT_WORKER_MAINTENANCE_SECONDS,
    "METRICS_TOKEN": DEFAULT_METRICS_TOKEN,
    "METRICS_BIND": DEFAULT_METRICS_BIND,
}

#: engine parameter -> the setting that caps it, for every engine that has the parameter
PARAM_CAPS = {"time_ms": "AI_MAX_TIME_MS", "iterations": "AI_MAX_ITERATIONS"}

ENV_PREFIX = "TILEHOUSE_"

#: numeric settings for which 0 is a meaningful value (every other one must be positive)
MAY_BE_ZERO = frozenset({"REDIS_WAIT_REPLICAS", "AI_PACE_MS"})


class ConfigError(ValueError):
    """An environment variable or config value of the wrong type."""


def _coerce(name: str, default: Any, raw: Any) -> Any:
    if isinstance(raw, str) and not isinstance(default, str):
        try:
            value: Any = type(default)(raw)
        except ValueError:
            raise ConfigError(f"{ENV_PREFIX}{name} must be a {type(default).__name__}, not {raw!r}") from None
    else:
        value = raw
    numeric = isinstance(default, int | float) and not isinstance(default, bool)
    if numeric and (value < 0 or (value == 0 and name not in MAY_BE_ZERO)):
        raise ConfigError(f"{name} must be {'at least 0' if name in MAY_BE_ZERO else 'positive'}, "
                          f"not {value!r}")
    return value


def load(mapping: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Defaults, then ``TILEHOUSE_*`` environment variables, then ``mapping``."""
    env = os.environ if environ is None else environ
    out = dict(DEFAULTS)
    for name, default in DEFAULTS.items():
        if ENV_PREFIX + name in env:
            out[name] = _coerce(name, default, env[ENV_PREFIX + name])
    for name, value in (mapping or {}).items():
        out[name] = _coerce(name, DEFAULTS[name], value) if name in DEFAULTS else value
    return out
