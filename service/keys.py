"""Every Redis key, pub/sub channel and RQ job id the service makes, built here and nowhere else (RQ's
``key_for()`` habit), under one prefix, :data:`PREFIX`.

The keys of one game all carry the hash tag ``{<game id>}``, so that a game lives on one Redis Cluster slot
and one Lua script may touch them all (service/store.py says what each holds).  They expire with the game:
every commit refreshes their idle expiry (``GAME_TTL_SECONDS``); a stream ticket expires sooner, with the
ticket.  Keys shared by many games (the lobby, the counters, the rate limits, the seed secret) are outside
any hash tag and have expiries of their own.  :data:`FAMILIES` declares every family with how it expires;
tests/test_keys.py plays whole games and checks every key Redis then holds against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the prefix of every key the service writes itself (RQ's keys are RQ's: ``rq:``)
PREFIX = "th:"
#: the prefix of Flask-Limiter's moving windows (its storage appends ``:LIMITER/``, the client and the limit)
LIMITER_PREFIX = f"{PREFIX}limits"
#: the server's seed secret, when it is not configured (service/fairplay/seeds.py)
SEED_SECRET_KEY = f"{PREFIX}seed-secret"
#: hash of AI job outcomes, field ``"<engine>|<outcome>"`` -> count (one key: HINCRBY stays atomic)
AI_JOBS_METRIC_KEY = f"{PREFIX}metrics:ai_jobs"
#: hash of game counts, field ``created`` / ``finished`` -> count
GAMES_METRIC_KEY = f"{PREFIX}metrics:games"

#: sorted set of the games whose AI seat is to move, scored by when that turn was last seen to have a job
#: (milliseconds): the workers' maintenance looks again at the stale ones (service.queues.sweep_ai_games)
AI_WATCH_KEY = f"{PREFIX}ai:watch"
#: held by the one worker that sweeps the AI watch in a maintenance round
AI_WATCH_LOCK_KEY = f"{PREFIX}ai:watch:lock"

_GAME = f"{PREFIX}game:"


# --------------------------------------------------------------------------- one game's keys

def game_key(game_id: str) -> str:
    """The game's hash: version, document, token hashes, AI job, newest event, presence, flags."""
    return f"{_GAME}{{{game_id}}}"


def events_key(game_id: str) -> str:
    """The game's event log, a list, oldest first."""
    return f"{_GAME}{{{game_id}}}:events"


def jobs_key(game_id: str) -> str:
    """The set of the RQ job ids queued for the game (a delete removes them)."""
    return f"{_GAME}{{{game_id}}}:jobs"


def ticket_key(game_id: str, digest: str) -> str:
    """One stream ticket of the game, by the SHA-256 of the ticket."""
    return f"{_GAME}{{{game_id}}}:ticket:{digest}"


def live_channel(game_id: str) -> str:
    """The pub/sub channel on which every commit that appends events announces the new event count (a
    channel, not a key: it holds nothing; under the game's hash tag for Redis 7's sharded pub/sub)."""
    return f"{_GAME}{{{game_id}}}:live"


def budget_game_key(game_id: str, minute: int) -> str:
    """The AI CPU milliseconds charged to the game in one clock minute."""
    return f"{PREFIX}budget:{{{game_id}}}:{minute}"


# --------------------------------------------------------------------------- keys shared by games

def lobby_key(rules_id: str | None = None) -> str:
    """The lobby index of every rule set (``None``) or of one: a sorted set of joinable game ids."""
    return f"{PREFIX}lobby" if rules_id is None else f"{PREFIX}lobby:{rules_id}"


def budget_client_key(client: str, minute: int) -> str:
    """The AI CPU milliseconds charged to one client in one clock minute."""
    return f"{PREFIX}budget:client:{client}:{minute}"


def budget_refund_key(charge_id: str) -> str:
    """Set when a charge's unused part has been given back, so that it is given back once."""
    return f"{PREFIX}budget:refund:{charge_id}"


def client_games_key(client: str) -> str:
    """The live games of one client address: game id -> admission time in ms."""
    return f"{PREFIX}client:{client}:games"


def ai_share_key(client: str) -> str:
    """The id of the last AI job queued for one client address (the tail of its chain of AI jobs)."""
    return f"{PREFIX}ai:client:{client}:last"


def stream_leases_key(client: str) -> str:
    """The open push streams of one client address: stream id -> when its lease runs out, in ms."""
    return f"{PREFIX}streams:client:{client}"


# --------------------------------------------------------------------------- RQ job ids

def play_job_id(game_id: str, version: int, suffix: str = "") -> str:
    """The play job that moves the AI seat of ``game_id`` at ``version`` (``suffix``: the fallback step,
    ``-retry``, ``-greedy``, ``-random``).  Deterministic, so queuing it twice is impossible."""
    return f"play-{game_id}-{version}{suffix}"


def pace_job_id(game_id: str, version: int) -> str:
    """The scheduled job that queues the play job of ``game_id`` at ``version`` once the table's pace has
    passed (service.queues: tables with no person at them)."""
    return f"pace-{game_id}-{version}"


def timeout_job_id(game_id: str, version: int) -> str:
    """The scheduled job that carries out the timeout of the clock running at ``version``."""
    return f"clock-{game_id}-{version}"


def suggestion_job_id(game_id: str, nonce: str, part: int | None = None) -> str:
    """A suggestion job (``part``: one part of a split search; the merge job has the plain id)."""
    base = f"suggest-{game_id}-{nonce}"
    return base if part is None else f"{base}-p{part}"


# --------------------------------------------------------------------------- the declared families

@dataclass(frozen=True)
class Family:
    """A family of keys: its name, the shape of its keys, and how its keys expire -- ``game`` (with the
    game: the idle expiry every commit refreshes), ``own`` (an expiry of its own, at most the game's), or
    ``never`` (kept for the life of the deployment, for the reason in ``why``)."""

    name: str
    pattern: re.Pattern[str]
    expires: str
    why: str


_ID = r"\{[0-9a-zA-Z_-]+\}"
FAMILIES: tuple[Family, ...] = (
    Family("game", re.compile(rf"{_GAME}{_ID}"), "game", "the game's hash"),
    Family("events", re.compile(rf"{_GAME}{_ID}:events"), "game", "the game's event log"),
    Family("jobs", re.compile(rf"{_GAME}{_ID}:jobs"), "game", "the game's queued job ids"),
    Family("ticket", re.compile(rf"{_GAME}{_ID}:ticket:[0-9a-f]{{64}}"), "own", "a stream ticket's lifetime"),
    Family("game budget", re.compile(rf"{PREFIX}budget:{_ID}:[0-9]+"), "own", "its minute, plus slack"),
    Family("client budget", re.compile(rf"{PREFIX}budget:client:.+:[0-9]+"), "own", "its minute, plus slack"),
    Family("budget refund", re.compile(rf"{PREFIX}budget:refund:[0-9a-f]{{32}}"), "own", "its charge's minute, plus slack"),
    Family("lobby", re.compile(rf"{PREFIX}lobby(:[a-z0-9_]+)?"), "own",
           "refreshed by every listing; its entries expire with their games"),
    Family("client games", re.compile(rf"{PREFIX}client:.+:games"), "own", "the idle time of a game"),
    Family("client AI share", re.compile(rf"{PREFIX}ai:client:.+:last"), "own", "the longest an AI job may wait and run"),
    Family("client streams", re.compile(rf"{PREFIX}streams:client:.+"), "own", "three keep-alives past its last lease"),
    Family("rate limits", re.compile(rf"{LIMITER_PREFIX}:LIMITER/.+"), "own", "the limit's window"),
    Family("AI watch", re.compile(re.escape(AI_WATCH_KEY)), "own",
           "refreshed by every AI turn; its entries leave with their games' AI turns"),
    Family("AI watch lock", re.compile(re.escape(AI_WATCH_LOCK_KEY)), "own", "one maintenance round"),
    Family("seed secret", re.compile(re.escape(SEED_SECRET_KEY)), "never",
           "the server secret the seeds of every live game derive from"),
    Family("metrics", re.compile(rf"{PREFIX}metrics:(ai_jobs|games)"), "never",
           "Prometheus counters: they only ever go up"),
)
#: RQ's own keys (queues, registries, workers, jobs and their results): RQ expires its jobs by
#: ``result_ttl``/``failure_ttl`` and keeps its queues and registries
RQ_PREFIX = "rq:"


def family_of(key: str) -> Family | None:
    """The declared family ``key`` belongs to, or None (RQ's keys are not the service's: None too)."""
    return next((f for f in FAMILIES if f.pattern.fullmatch(key)), None)


#: the shape of every job id above (RQ keeps a job under ``rq:job:<id>``)
JOB_ID = re.compile(r"(play|pace|clock|suggest)-[0-9a-f]+-[0-9a-z-]+")
