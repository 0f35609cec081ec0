"""Operations for the tilehouse service: request ids, structured JSON logs, Prometheus metrics and the
health endpoints.

What it implements and the choices made where the issue is silent:

- ``X-Request-ID``: a caller's id is kept when it is short and safe (1-64 characters from
  ``A-Z a-z 0-9 . _ : -``, starting with a letter or digit); anything else is replaced by a fresh
  ``uuid4().hex`` rather than rejected, because a bad tracing header must never fail a request. The id is
  in ``flask.g.request_id``, in the response header, in every log line written while the request runs,
  and (put there by the service) in ``job.meta["request_id"]`` of the jobs it queues, where the logging
  filter of a worker finds it again: a worker built with :class:`JobLogContext` and :class:`TracingQueue`
  (``worker.py``) puts the job's id and request id on every line it writes from the dequeue of a job until
  RQ is done with it, RQ's own lines included.
- Logs: one JSON object per line (``configure_logging()``, used by the app and by ``worker.py``); each
  request writes one line on the ``tilehouse.request`` logger with method, route template, path, status,
  duration and request id.
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
  counters live in Redis hashes (``record_ai_job``, ``record_game``) and a custom collector reads them at
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
import re
import sys
import time
import traceback
import uuid
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, TextIO

import redis
from flask import Flask, Response, g, has_request_context, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Queue

from service import config
from service.keys import AI_JOBS_METRIC_KEY, GAMES_METRIC_KEY

REQUEST_ID_HEADER = "X-Request-ID"
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
#: Socket timeouts of the health and metrics probes, in seconds: a probe answers fast or says "down".
PROBE_TIMEOUT_SECONDS = 1.0
#: Latency buckets in seconds: API calls are milliseconds; the tail catches a slow Redis.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: the ``method`` label values; any other method is counted as ``OTHER``
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "OTHER"

log = logging.getLogger("tilehouse.request")
_metrics_log = logging.getLogger("tilehouse.metrics")


# --------------------------------------------------------------------------------------------- request ids

def valid_request_id(value: str | None) -> bool:
    return value is not None and _REQUEST_ID_RE.fullmatch(value) is not None


def new_request_id() -> str:
    return uuid.uuid4().hex


#: ``(job id, request id)`` of the job an RQ worker of ours is handling, from the moment it is dequeued until
#: RQ has finished with it -- so RQ's own lines about the job ("play: ... (id)", "Job OK", "result is kept")
#: carry the ids too, not only the lines the job function writes while RQ's current job is set
_WORKER_JOB: ContextVar[tuple[str, str | None] | None] = ContextVar("tilehouse_worker_job", default=None)


def _enter_job(job: Any) -> None:
    meta = job.meta if isinstance(getattr(job, "meta", None), dict) else {}
    rid = meta.get("request_id")
    _WORKER_JOB.set((job.id, rid if isinstance(rid, str) else None))


class TracingQueue(Queue):
    """An RQ queue that marks the job it hands to a worker as the worker's current job for the logs."""

    @classmethod
    def dequeue_any(cls, *args: Any, **kwargs: Any) -> Any:
        result = super().dequeue_any(*args, **kwargs)
        if result is not None:
            _enter_job(result[0])
        return result


class JobLogContext:
    """Mixin for an RQ worker class (before it in the bases): every log line written while the worker
    handles a job -- RQ's own included -- carries that job's ``job_id`` and ``request_id``.
    The worker's queues must be :class:`TracingQueue` (RQ logs the dequeue before ``execute_job`` runs)."""

    queue_class = TracingQueue

    def execute_job(self, job: Any, queue: Any) -> Any:
        _enter_job(job)
        try:
            return super().execute_job(job, queue)  # type: ignore[misc]
        finally:
            _WORKER_JOB.set(None)


def current_request_id() -> str | None:
    """The id of the request being served, or of the request that queued the job being handled, or None."""
    if has_request_context():
        return getattr(g, "request_id", None)
    handled = _WORKER_JOB.get()
    if handled is not None:
        return handled[1]
    job = _current_job()
    if job is not None:
        rid = job.meta.get("request_id") if isinstance(job.meta, dict) else None
        return rid if isinstance(rid, str) else None
    return None


def _current_job() -> Any:
    try:
        from rq import get_current_job
    except ImportError:  # rq is a dependency; the guard only keeps logging usable without it
        return None
    return get_current_job()


# --------------------------------------------------------------------------------------------- logging

#: LogRecord attributes that are not user data; everything else given through ``extra=`` is logged.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime",
                                                                                  "taskName"}


class ContextFilter(logging.Filter):
    """Adds ``request_id`` and ``job_id`` to every record (None outside a request or job)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id()
        if not hasattr(record, "job_id"):
            handled = None if has_request_context() else _WORKER_JOB.get()
            if handled is not None:
                record.job_id = handled[0]
            else:
                job = None if has_request_context() else _current_job()
                record.job_id = getattr(job, "id", None)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts`` (UTC, ISO 8601, ms), ``level``, ``logger``, ``msg``, the
    request/job ids, any ``extra=`` fields, and ``exc`` with the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return json.dumps(out, default=str, separators=(",", ":"))


def configure_logging(level: str | int | None = None, stream: TextIO | None = None) -> logging.Handler:
    """Send every log record of this process to ``stream`` (stderr) as one JSON line.

    Replaces the root logger's handlers (so calling it twice does not double lines). ``level`` defaults to
    ``TILEHOUSE_LOG_LEVEL`` or INFO. Returns the handler.
    """
    chosen = level if level is not None else os.environ.get("TILEHOUSE_LOG_LEVEL", "INFO")
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(chosen.upper() if isinstance(chosen, str) else chosen)
    return handler


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


def _before() -> None:
    incoming = request.headers.get(REQUEST_ID_HEADER)
    g.request_id = incoming if valid_request_id(incoming) else new_request_id()
    g._obs_started = time.perf_counter()


def _after(response: Response) -> Response:
    rid = getattr(g, "request_id", None)
    if rid is None:  # a hook ahead of ours answered before _before ran
        incoming = request.headers.get(REQUEST_ID_HEADER)
        rid = g.request_id = incoming if valid_request_id(incoming) else new_request_id()
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


def _problem(status: int, slug: str, title: str, detail: str, **extra: Any) -> Response:
    # The same shape and type namespace as service.problems, without importing the API layer.
    body = {"type": f"urn:tilehouse:problem:{slug}", "title": title, "status": status, "detail": detail,
            **extra}
    return Response(json.dumps(body), status=status, mimetype="application/problem+json")


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
    response = _problem(503, "unavailable", "Service unavailable", f"not ready: {failing}", checks=checks)
    response.headers["Retry-After"] = str(current_app.config.get("RETRY_AFTER_SECONDS", config.DEFAULT_RETRY_AFTER_SECONDS))
    return response


def metrics() -> Response:
    return Response(_obs().exposition(), mimetype=None, content_type=CONTENT_TYPE_LATEST)


def init_app(app: Flask) -> Observability:
    """Install request ids, the request log line, metrics and the /healthz, /readyz, /metrics routes."""
    obs = Observability(app)
    app.extensions["observability"] = obs
    # First in line, so the id exists for every other before_request hook and its log lines.
    app.before_request_funcs.setdefault(None, []).insert(0, _before)
    app.after_request(_after)
    app.add_url_rule("/healthz", "healthz", healthz, methods=["GET"])
    app.add_url_rule("/readyz", "readyz", readyz, methods=["GET"])
    app.add_url_rule("/metrics", "metrics", metrics, methods=["GET"])
    return obs

