"""The web client: static files served at ``/`` and ``/static/<file>``, nothing else.

The client is plain ES modules, SVG and CSS in ``static/`` (no build step). It talks to the public ``/v1``
API only, exactly as a third-party frontend would: bearer tokens in ``sessionStorage``, the view polled with
``If-None-Match`` (or the push stream where the server has one). The server renders no game state: ``/``
is the same file for everyone.

Choice where the issue is silent: the assets are flat (no sub-folders) so that each one is one
``/static/{filename}`` path of openapi.yaml; they are served with ``Cache-Control: no-cache`` (revalidated
by ETag/Last-Modified on every load) so a server upgrade never leaves a browser on a stale module.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory
from werkzeug.exceptions import NotFound

STATIC = Path(__file__).with_name("static")

bp = Blueprint("web", __name__)


#: the only kinds of file the client is made of, with the type each is served as whatever the system's
#: mime.types says (a module script must come as JavaScript)
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def _send(filename: str) -> Response:
    mimetype = TYPES.get(Path(filename).suffix)
    if mimetype is None:
        raise NotFound()
    resp = send_from_directory(STATIC, filename, mimetype=mimetype, max_age=0)
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


@bp.get("/")
def index() -> Response:
    return _send("index.html")


@bp.get("/static/<filename>")
def asset(filename: str) -> Response:
    return _send(filename)
