"""The Flask application factory (shared/ARCHITECTURE.md "The service"; Flask's ``flaskr`` pattern).

``create_app(config)`` reads the configuration (defaults, ``TILEHOUSE_*`` environment, then ``config``),
creates the shared clients once -- the Redis client in ``app.extensions["redis"]``, the RQ queues in
``app.extensions["queues"]`` (``{"suggest": Queue, "play": Queue}``), the game store in
``app.extensions["store"]`` -- registers one blueprint per resource, the one problem-document error handler,
``/openapi.yaml``, and finally the operations layer (request ids, JSON logs, metrics, health checks).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import redis
from flask import Flask, Response

from service import api, problems
from service import config as config_module
from service.jobs import make_queues
from service.store import Store

OPENAPI_PATH = Path(__file__).with_name("openapi.yaml")


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask("service", static_folder=None)
    cfg = config_module.load(config)
    app.config.update(cfg)
    # werkzeug answers 413 itself for a larger body, before any view reads it
    app.config["MAX_CONTENT_LENGTH"] = cfg["MAX_BODY_BYTES"]
    app.json.sort_keys = False  # type: ignore[attr-defined]

    timeout = cfg["REDIS_SOCKET_TIMEOUT_SECONDS"]
    conn = redis.Redis.from_url(cfg["REDIS_URL"], socket_timeout=timeout, socket_connect_timeout=timeout,
                                health_check_interval=30)
    app.extensions["redis"] = conn
    app.extensions["queues"] = make_queues(conn)
    app.extensions["store"] = Store(conn, cfg["GAME_TTL_SECONDS"])

    api.register(app)
    problems.init_app(app)

    @app.get("/openapi.yaml")
    def openapi() -> Response:
        return Response(OPENAPI_PATH.read_bytes(), mimetype="application/yaml")

    from service import observability

    observability.init_app(app)
    return app
