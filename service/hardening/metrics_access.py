"""``/metrics`` kept off the public API, by default in every way of running.

* ``TILEHOUSE_METRICS_BIND`` (default ``127.0.0.1:9100``; the image and compose: ``0.0.0.0:9100``): gunicorn
  listens there too (gunicorn.conf.py adds it to ``bind``), and ``/metrics`` answers only on that listener
  -- on the API's own address it is a 404, as if it did not exist.  The metrics listener serves
  ``/metrics``, ``/healthz`` and ``/readyz`` and nothing else (404), so publishing the API never publishes
  the metrics and the reverse.  The listener is told by the port the connection came in on
  (``SERVER_PORT``, which gunicorn takes from the listening socket, not from the client's ``Host`` header).
* ``TILEHOUSE_METRICS_TOKEN``: ``/metrics`` needs ``Authorization: Bearer <token>`` (compared in constant
  time); without it or with another token a 401 problem document.
* ``TILEHOUSE_METRICS_BIND=off`` (or empty): no metrics listener; ``/metrics`` is then served on the API's
  address to the holder of the metrics token only, and is a 404 when no token is set.

So ``/metrics`` is never public unless an operator publishes the metrics listener.
"""

from __future__ import annotations

import hmac

from flask import Flask, current_app, request

from service import auth, config
from service.problems import Problem

#: endpoints the metrics listener serves
METRICS_LISTENER_ENDPOINTS = frozenset({"metrics", "healthz", "readyz"})


def bind_port(bind: str) -> str | None:
    """The port of a ``host:port`` bind, or None when no separate bind is configured."""
    if bind.strip().lower() in config.METRICS_BIND_OFF:
        return None
    host, sep, port = bind.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"TILEHOUSE_METRICS_BIND must be host:port, not {bind!r}")
    return port


def guard() -> None:
    port = current_app.extensions["metrics_port"]
    token: str = current_app.config["METRICS_TOKEN"]
    on_metrics_listener = port is not None and request.environ.get("SERVER_PORT") == port
    endpoint = request.endpoint
    if endpoint == "metrics" and request.method != "OPTIONS":  # a CORS preflight carries and shows nothing
        if (port is not None and not on_metrics_listener) or (port is None and not token):
            raise Problem(404, f"no resource at {request.path}")
        if token:
            given = auth.bearer(request)
            if given is None or not hmac.compare_digest(given.encode(), token.encode()):
                raise auth.unauthorized("/metrics needs the metrics token: Authorization: Bearer <token>")
    elif on_metrics_listener and endpoint not in METRICS_LISTENER_ENDPOINTS:
        raise Problem(404, f"no resource at {request.path} (this address serves /metrics only)")


def init_app(app: Flask) -> None:
    app.extensions["metrics_port"] = bind_port(app.config["METRICS_BIND"])
    app.before_request(guard)
