"""Operations at the HTTP edge of the tilehouse service: the request id of every request, the request log
line, Prometheus metrics and the health endpoints.  (The logs themselves, and the request id's rules, are
:mod:`service.logs`; the counters the workers keep are :mod:`service.metrics`.)

What it implements and the choices made where the issue is silent:

- ``X-Request-ID`` (:func:`service.logs.valid_request_id`): the id is in ``flask.g.request_id``, in the
  response header and in every log line written while the request runs (:func:`service.logs.enter_request`).
- Each request writes one line on the ``tilehouse.request`` logger with method, route template, path,
  status, duration and request id.
- Metrics at ``/metrics`` in the Prometheus text format:
  ``tilehouse_http_requests_total{method,route,status}`` and
  ``tilehouse_http_request_duration_seconds{method,route,status}`` (route = the URL rule, e.g.
  ``/v1/games/<game_id>``, so a label never holds a game id; ``<unmatched>`` for 404s of unknown paths).
  Every label comes from a closed set: ``method`` is one of :data:`KNOWN_METHODS` or ``OTHER``
  (a client may send any token as a method, and each new label value would be a new series for the life
  of the process), ``route`` is a URL rule of the app or ``<unmatched>``, ``status`` is a three-digit
  HTTP status;
  under gunicorn these use prometheus_client's multiprocess mode when ``PROMETHEUS_MULTIPROC_DIR`` is set
  (``tilehouse serve`` and the container set it; gunicorn.conf.py wipes it at start), otherwise a registry
  per app. AI jobs and games are counted by RQ worker processes, possibly on other machines, so their
  counters live in Redis hashes (:mod:`service.metrics`) and a custom collector reads them at
  scrape time: ``tilehouse_ai_jobs_total{engine,outcome}``, ``tilehouse_games_created_total``,
  ``tilehouse_games_finished_total``; the same collector reports ``tilehouse_queue_depth{queue}`` (jobs
  waiting in each RQ queue) and ``tilehouse_metrics_redis_up`` (0 when Redis could not be read, so a
  scrape never fails because Redis is down).
- ``/healthz``: liveness, 200 ``{"status": "ok"}`` without touching Redis (a Redis outage must not make
  an orchestrator restart healthy API processes). ``/readyz``: 200
  ``{"status": "ready", "checks": {"redis": "ok", "queue": "ok"}}`` when Redis answers PING and every RQ
  queue can be read; otherwise 503 ``application/problem+json`` with ``Retry-After`` and the failing
  check named in ``checks``.

The Redis client is read from ``app.extensions["redis"]`` and the queues from ``app.extensions["queues"]``
(``{"suggest": Queue, "play": Queue}``), both put there by ``create_app``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

import redis
from flask import Flask, Response, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from redis.backoff import NoBackoff
from redis.retry import Retry

from service import config, problems
from service.keys import AI_JOBS_METRIC_KEY, GAMES_METRIC_KEY
from service.logs import REQUEST_ID_HEADER, enter_request, leave_request, new_request_id, valid_request_id

#: Socket timeouts of the health and metrics probes, in seconds: a probe answers fast or says "down".
PROBE_TIMEOUT_SECONDS = 1.0
#: Latency buckets in seconds: API calls are milliseconds; the tail catches a slow Redis.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: the ``method`` label values; any other method is counted as ``OTHER``
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "OTHER"

log = logging.getLogger("tilehouse.request")
_metrics_log = logging.getLogger("tilehouse.metrics")


def probe_client(conn: Any) -> Any:
    """A client for the same server as ``conn`` that tries once with short timeouts.

    redis-py retries a refused connection with backoff (about 4 s in all), which would make /readyz and
    every scrape hang exactly when Redis is down. A cluster client (no single pool) is used as it is."""
    pool = getattr(conn, "connection_pool", None)
    if pool is None:
        return conn
    kwargs = dict(pool.connection_kwargs)
    kwargs.pop("maint_notifications_pool_handler", None)  # belongs to the original pool
    kwargs.update(retry=Retry(NoBackoff(), 0), socket_connect_timeout=PROBE_TIMEOUT_SECONDS,
                  socket_timeout=PROBE_TIMEOUT_SECONDS)
    return redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class,
                                                            max_connections=8, **kwargs))


class _Probes:
    """One probe client per client it stands for, made on first use."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[Any, Any]] = {}

    def __call__(self, conn: Any) -> Any:
        entry = self._made.get(id(conn))
        if entry is None or entry[0] is not conn:
            entry = self._made[id(conn)] = (conn, probe_client(conn))
        return entry[1]


def _decode(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisCollector(Collector):
    """Reads the counters the workers keep in Redis and the depth of each RQ queue at scrape time."""

    def __init__(self, app: Flask, probes: _Probes) -> None:
        self.app = app
        self.probes = probes

    def collect(self) -> Iterator[Any]:
        conn: redis.Redis | None = self.app.extensions.get("redis")
        queues: Mapping[str, Any] = self.app.extensions.get("queues") or {}
        ai = CounterMetricFamily("tilehouse_ai_jobs", "AI jobs run by the workers, by engine and outcome",
                                 labels=["engine", "outcome"])
        created = CounterMetricFamily("tilehouse_games_created", "Games created")
        finished = CounterMetricFamily("tilehouse_games_finished", "Games finished")
        depth = GaugeMetricFamily("tilehouse_queue_depth", "Jobs waiting in each RQ queue", labels=["queue"])
        up = GaugeMetricFamily("tilehouse_metrics_redis_up",
                               "1 when the counters kept in Redis could be read for this scrape")
        ok = 0
        if conn is not None:
            try:
                conn = self.probes(conn)
                for field, count in sorted(conn.hgetall(AI_JOBS_METRIC_KEY).items()):
                    engine, _, outcome = _decode(field).rpartition("|")
                    ai.add_metric([engine, outcome], int(count))
                games = {_decode(k): int(v) for k, v in conn.hgetall(GAMES_METRIC_KEY).items()}
                created.add_metric([], games.get("created", 0))
                finished.add_metric([], games.get("finished", 0))
                for name, queue in sorted(queues.items()):
                    depth.add_metric([name], self.probes(queue.connection).llen(queue.key))
                ok = 1
            except redis.RedisError as exc:
                _metrics_log.warning("metrics: Redis unreadable", extra={"error": str(exc)})
                ai = CounterMetricFamily(ai.name, ai.documentation, labels=["engine", "outcome"])
                created = CounterMetricFamily(created.name, created.documentation)
                finished = CounterMetricFamily(finished.name, finished.documentation)
                depth = GaugeMetricFamily(depth.name, depth.documentation, labels=["queue"])
        up.add_metric([], ok)
        yield from (ai, created, finished, depth, up)


# --------------------------------------------------------------------------------------------- the app

class Observability:
    """What ``init_app`` keeps in ``app.extensions["observability"]``."""

    def __init__(self, app: Flask) -> None:
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        # In multiprocess mode the values go to files in PROMETHEUS_MULTIPROC_DIR and are gathered at scrape
        # time, so the metric objects belong to no registry; otherwise each app gets its own registry
        # (several apps in one test process must not collide in the global one).
        self.registry: CollectorRegistry | None = None if self.multiprocess else CollectorRegistry()
        self.requests = Counter("tilehouse_http_requests", "HTTP requests by route template and status",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("tilehouse_http_request_duration_seconds",
                                 "HTTP request latency by route template and status",
                                 ["method", "route", "status"], buckets=LATENCY_BUCKETS,
                                 registry=self.registry)
        self.probes = _Probes()
        self.redis_collector = RedisCollector(app, self.probes)
        if self.registry is not None:
            self.registry.register(self.redis_collector)

    def exposition(self) -> bytes:
        if self.registry is not None:
            return generate_latest(self.registry)
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(self.redis_collector)
        return generate_latest(registry)


def _route() -> str:
    rule = request.url_rule
    return rule.rule if rule is not None else "<unmatched>"


def method_label(method: str) -> str:
    """``method`` when it is a known HTTP method, else ``OTHER``: labels come from a closed set."""
    return method if method in KNOWN_METHODS else OTHER_METHOD


def _request_id() -> str:
    incoming = request.headers.get(REQUEST_ID_HEADER)
    rid = incoming if incoming is not None and valid_request_id(incoming) else new_request_id()
    g.request_id = rid
    g._log_token = enter_request(rid)
    return rid


def _before() -> None:
    _request_id()
    g._obs_started = time.perf_counter()


def _teardown(exc: BaseException | None) -> None:
    token = g.pop("_log_token", None)
    if token is not None:
        leave_request(token)


def _after(response: Response) -> Response:
    rid = getattr(g, "request_id", None)
    if rid is None:  # a hook ahead of ours answered before _before ran
        rid = _request_id()
    response.headers[REQUEST_ID_HEADER] = rid
    started = getattr(g, "_obs_started", None)
    elapsed = time.perf_counter() - started if started is not None else 0.0
    route, status, method = _route(), str(response.status_code), method_label(request.method)
    obs: Observability = _obs()
    obs.requests.labels(method, route, status).inc()
    obs.latency.labels(method, route, status).observe(elapsed)
    log.info("%s %s %s", method, request.path, status,
             extra={"method": method, "route": route, "path": request.path,
                    "status": response.status_code, "duration_ms": round(elapsed * 1000, 3),
                    "request_id": rid})
    return response


def _obs() -> Observability:
    from flask import current_app

    return current_app.extensions["observability"]


def _check_redis(conn: redis.Redis | None) -> str:
    if conn is None:
        return "not configured"
    try:
        _obs().probes(conn).ping()
    except redis.RedisError as exc:
        return f"unreachable: {exc}"
    return "ok"


def _check_queues(queues: Mapping[str, Any] | None) -> str:
    if not queues:
        return "not configured"
    try:
        probes = _obs().probes
        for queue in queues.values():
            # LLEN on the queue's own connection: the key RQ enqueues to is readable.
            probes(queue.connection).llen(queue.key)
    except redis.RedisError as exc:
        return f"unreachable: {exc}"
    return "ok"


def healthz() -> Response:
    return Response(json.dumps({"status": "ok"}), mimetype="application/json")


def readyz() -> Response:
    from flask import current_app

    checks = {"redis": _check_redis(current_app.extensions.get("redis")),
              "queue": _check_queues(current_app.extensions.get("queues"))}
    if all(v == "ok" for v in checks.values()):
        return Response(json.dumps({"status": "ready", "checks": checks}), mimetype="application/json")
    failing = ", ".join(k for k, v in checks.items() if v != "ok")
    retry = current_app.config.get("RETRY_AFTER_SECONDS", config.DEFAULT_RETRY_AFTER_SECONDS)
    return problems.response(problems.Problem(503, f"not ready: {failing}", extra={"checks": checks},
                                              headers={"Retry-After": str(retry)}))


def metrics() -> Response:
    return Response(_obs().exposition(), mimetype=None, content_type=CONTENT_TYPE_LATEST)


def init_app(app: Flask) -> Observability:
    """Install request ids, the request log line, metrics and the /healthz, /readyz, /metrics routes."""
    obs = Observability(app)
    app.extensions["observability"] = obs
    # First in line, so the id exists for every other before_request hook and its log lines.
    app.before_request_funcs.setdefault(None, []).insert(0, _before)
    app.after_request(_after)
    app.teardown_request(_teardown)
    app.add_url_rule("/healthz", "healthz", healthz, methods=["GET"])
    app.add_url_rule("/readyz", "readyz", readyz, methods=["GET"])
    app.add_url_rule("/metrics", "metrics", metrics, methods=["GET"])
    return obs

