"""The one place where tilehouse makes its Redis clients: the API's (requests, push streams, rate limits),
the RQ workers' and their scheduler's, and ``tilehouse serve``'s check of a given Redis.

Two ways to find the Redis, from the configuration (service/config.py):

* ``REDIS_URL`` alone: that server.
* ``REDIS_SENTINELS`` (``host:port,host:port,...``) and ``REDIS_SENTINEL_MASTER`` (the name the sentinels
  monitor): the sentinels are asked for the current master before each new connection, so after a failover
  new connections go to the promoted replica (redis-py's ``Sentinel.master_for``; a connection that was open
  to the old master fails once and is made again).  ``REDIS_URL`` then gives only the database number,
  user name and password of the master (its host and port are ignored).  RQ rebuilds a worker's connection
  in its scheduler process from the pool's connection arguments, which carry the sentinel pool's proxy, so
  the scheduler follows the master too.

``REDIS_WAIT_REPLICAS`` (0: off) makes every commit of a game wait, with ``WAIT``, until that many replicas
have the write or ``REDIS_WAIT_TIMEOUT_MS`` has passed (service.store.Store.commit); with fewer
acknowledgements the request fails (503) instead of acknowledging a move that a failover could lose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import redis
from redis.sentinel import Sentinel

from service import config

#: seconds a sentinel gets to answer "who is the master?" (it answers from memory: a slow one is down)
SENTINEL_SOCKET_TIMEOUT_SECONDS = 1.0


class RedisSettingsError(ValueError):
    """A sentinel list that is not ``host:port,host:port``."""


def sentinel_addresses(spec: str) -> list[tuple[str, int]]:
    """``"a:26379, b:26379"`` -> ``[("a", 26379), ("b", 26379)]``; an empty setting -> ``[]``."""
    out = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise RedisSettingsError(f"TILEHOUSE_REDIS_SENTINELS takes host:port,host:port; {item!r} is not "
                                     "host:port")
        out.append((host.strip("[]"), int(port)))
    return out


def _url_credentials(url: str) -> dict[str, Any]:
    """The database, user name and password of a ``redis://`` URL (what a sentinel-found master needs)."""
    parts = urlsplit(url)
    out: dict[str, Any] = {}
    path = parts.path.lstrip("/")
    if path.isdigit():
        out["db"] = int(path)
    if parts.username:
        out["username"] = unquote(parts.username)
    if parts.password:
        out["password"] = unquote(parts.password)
    return out


def uses_sentinel(cfg: Mapping[str, Any]) -> bool:
    return bool(sentinel_addresses(cfg.get("REDIS_SENTINELS", config.DEFAULT_REDIS_SENTINELS)))


def client(cfg: Mapping[str, Any], *, blocking: bool = False, max_connections: int | None = None,
           **options: Any) -> redis.Redis:
    """A Redis client for the configured server (``REDIS_URL``) or the sentinels' current master.

    ``options`` are redis-py connection options (``socket_timeout``, ``retry``, ...).  ``blocking``: a request
    that finds all ``max_connections`` in use waits for one (``BlockingConnectionPool``) instead of failing;
    redis-py's sentinel pool has no blocking variant, so behind sentinels the pool fails at its limit.
    """
    sentinels = sentinel_addresses(cfg.get("REDIS_SENTINELS", config.DEFAULT_REDIS_SENTINELS))
    if sentinels:
        manager = Sentinel(sentinels, socket_timeout=SENTINEL_SOCKET_TIMEOUT_SECONDS,
                           socket_connect_timeout=SENTINEL_SOCKET_TIMEOUT_SECONDS)
        pool_options = {**_url_credentials(cfg["REDIS_URL"]), **options}
        if max_connections is not None:
            pool_options["max_connections"] = max_connections
        pool_options.pop("timeout", None)  # BlockingConnectionPool's wait, which this pool does not have
        return manager.master_for(cfg["REDIS_SENTINEL_MASTER"], **pool_options)
    pool_class = redis.BlockingConnectionPool if blocking else redis.ConnectionPool
    if max_connections is not None:
        options["max_connections"] = max_connections
    if not blocking:
        options.pop("timeout", None)
    return redis.Redis.from_pool(pool_class.from_url(cfg["REDIS_URL"], **options))


def limiter_storage_uri(cfg: Mapping[str, Any]) -> str:
    """The storage URI of Flask-Limiter (the ``limits`` library) for the same Redis."""
    sentinels = sentinel_addresses(cfg.get("REDIS_SENTINELS", config.DEFAULT_REDIS_SENTINELS))
    if not sentinels:
        return str(cfg["REDIS_URL"])
    creds = urlsplit(cfg["REDIS_URL"])
    auth = creds.netloc.rpartition("@")[0]
    hosts = ",".join(f"{h}:{p}" for h, p in sentinels)
    return f"redis+sentinel://{auth + '@' if auth else ''}{hosts}/{cfg['REDIS_SENTINEL_MASTER']}"

