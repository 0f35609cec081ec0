"""The Flask application factory (Flask's ``flaskr`` pattern).

``create_app(config)`` reads the configuration (defaults, ``TILEHOUSE_*`` environment, then ``config``),
creates the shared clients once -- the Redis client in ``app.extensions["redis"]`` (and the one whose
connections the push streams' subscriptions hold, ``app.extensions["redis_streams"]``), the RQ queues in
``app.extensions["queues"]`` (``{"suggest": Queue, "play": Queue}``), the game store in
``app.extensions["store"]`` -- registers one blueprint per resource and the web client's (``service.web``),
the one problem-document error handler, ``/openapi.yaml``, the operations layer (request ids, JSON logs,
metrics, health checks), and CORS.

CORS is flask-cors on every route, /healthz, /readyz, /metrics and /openapi.yaml included (a
status page or an API explorer on another origin reads them too; none carries game data without a
token): the allowed origins come from ``CORS_ORIGINS`` (``TILEHOUSE_CORS_ORIGINS``, default ``*``; no
credentials, since the API is authorised by bearer tokens, not cookies), preflights are answered by
Flask's automatic OPTIONS for every route with the methods the API uses and the request headers listed in
:data:`CORS_ALLOW_HEADERS`, and the headers a frontend reads are exposed (:data:`CORS_EXPOSE_HEADERS`).
flask-cors also wraps the error handlers, so problem documents carry the same headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask, Response
from flask_cors import CORS
from redis.backoff import NoBackoff
from redis.retry import Retry

from service import api, connections, problems, web
from service import config as config_module
from service.api import engines, games, jobs, lifecycle, lobby, replays, rules, seats, streams
from service.hardening import bodies, metrics_access, storage
from service.queues import make_queues
from service.store import Store

OPENAPI_PATH = Path(__file__).with_name("openapi.yaml")

#: Redis connections one API process uses for its requests (a request holds one only while it talks to Redis)
REDIS_POOL_SIZE = 100
#: upper bound of the subscription connections of one process's open push streams (gunicorn's
#: worker_connections is the real bound: no process holds more streams than connections)
STREAM_POOL_SIZE = 65536
#: request headers a page on another origin may send (Last-Event-ID: an EventSource resuming a stream)
CORS_ALLOW_HEADERS = ("Authorization", "Content-Type", "If-None-Match", "Last-Event-ID", "X-Request-ID")
#: response headers a page on another origin may read
CORS_EXPOSE_HEADERS = ("ETag", "Location", "Retry-After", "X-Request-ID")
#: methods the API answers (a preflight for any other method gets no Access-Control-Allow-* headers)
CORS_METHODS = ("GET", "HEAD", "POST", "DELETE", "OPTIONS")
#: seconds a browser may cache a preflight answer
CORS_MAX_AGE_SECONDS = 600


def cors_origins(setting: str) -> str | list[str]:
    """``"*"`` or the list of origins in a comma-separated ``CORS_ORIGINS`` setting."""
    origins = [o.strip().rstrip("/") for o in setting.split(",") if o.strip()]
    if not origins:
        raise config_module.ConfigError("TILEHOUSE_CORS_ORIGINS names no origin; use * to allow every origin")
    return "*" if "*" in origins else origins


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask("service", static_folder=None)
    cfg = config_module.load(config)
    app.config.update(cfg)
    # service.hardening.bodies answers 413 for a larger body, chunked or not, before any view reads it;
    # werkzeug's own limit stays as a second line
    app.config["MAX_CONTENT_LENGTH"] = cfg["MAX_BODY_BYTES"]
    app.json.sort_keys = False  # type: ignore[attr-defined]

    timeout = cfg["REDIS_SOCKET_TIMEOUT_SECONDS"]
    client = {"socket_timeout": timeout, "socket_connect_timeout": timeout, "health_check_interval": 30}
    # Under gevent one process serves hundreds of connections at once: a burst of requests waits up to the
    # socket timeout for one of REDIS_POOL_SIZE connections rather than failing (redis-py's plain pool
    # raises at its limit, 100 by default since redis-py 6).
    conn = connections.client(cfg, blocking=True, max_connections=REDIS_POOL_SIZE, timeout=timeout, **client)
    app.extensions["redis"] = conn
    # Push streams hold a connection each for their subscription, for as long as they are open: a pool of
    # their own, bounded only by the connections a gunicorn worker accepts (worker_connections). No retries:
    # redis-py would reconnect and resubscribe a dropped subscription silently, and a notification sent
    # in the gap would be lost; without them the stream ends and its client resumes from Last-Event-ID.
    app.extensions["redis_streams"] = connections.client(cfg, max_connections=STREAM_POOL_SIZE,
                                                         retry=Retry(NoBackoff(), 0), **client)
    app.extensions["queues"] = make_queues(conn)
    app.extensions["store"] = Store(conn, cfg["GAME_TTL_SECONDS"], wait_replicas=cfg["REDIS_WAIT_REPLICAS"],
                                    wait_timeout_ms=cfg["REDIS_WAIT_TIMEOUT_MS"])

    for blueprint in (rules.bp, engines.bp, games.bp, lobby.bp, seats.bp, lifecycle.bp, jobs.bp, replays.bp,
                      streams.bp):
        app.register_blueprint(blueprint)
    api.init_app(app)
    app.register_blueprint(web.bp)
    from service.fairplay import limits

    limits.init_app(app)
    problems.init_app(app)
    bodies.init_app(app)
    metrics_access.init_app(app)
    storage.init_app(app)

    @app.get("/openapi.yaml")
    def openapi() -> Response:
        return Response(OPENAPI_PATH.read_bytes(), mimetype="application/yaml")

    from service import observability

    observability.init_app(app)
    origins = cors_origins(cfg["CORS_ORIGINS"])
    # send_wildcard: with every origin allowed the answer is a plain `*` (cacheable for all), not an echo
    CORS(app, resources=r"/*", origins=origins, send_wildcard=origins == "*", methods=list(CORS_METHODS),
         allow_headers=list(CORS_ALLOW_HEADERS), expose_headers=list(CORS_EXPOSE_HEADERS),
         supports_credentials=False, max_age=CORS_MAX_AGE_SECONDS)
    return app
