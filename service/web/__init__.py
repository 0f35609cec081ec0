"""The web client: static files served at ``/`` and ``/static/<file>``, nothing else.

The client is plain ES modules, SVG and CSS in ``static/`` (no build step). It talks to the public ``/v1``
API only, exactly as a third-party frontend would: bearer tokens in ``sessionStorage``, the view polled with
``If-None-Match`` (or the push stream where the server has one). The server renders no game state: ``/``
is the same file for everyone.

Choice where the requirements are silent: the assets are flat (no sub-folders) so that each one is one
``/static/{filename}`` path of openapi.yaml; they are served with ``Cache-Control: no-cache`` (revalidated
by ETag/Last-Modified on every load) so a server upgrade never leaves a browser on a stale module.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, request, send_from_directory
from werkzeug.exceptions import NotFound

import engine
from service.web.rulestext import LANG, rules_file

STATIC = Path(__file__).with_name("static")

bp = Blueprint("web", __name__)


#: the only kinds of file the client is made of, with the type each is served as whatever the system's
#: mime.types says (a module script must come as JavaScript)
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def _send(filename: str, folder: Path = STATIC, types: dict[str, str] = TYPES) -> Response:
    mimetype = types.get(Path(filename).suffix)
    if mimetype is None:
        raise NotFound()
    resp = send_from_directory(folder, filename, mimetype=mimetype, max_age=0)
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


@bp.get("/")
def index() -> Response:
    return _send("index.html")


@bp.get("/rules")
def rules_index() -> Response:
    """The client's page of the rule sets: the same file as ``/`` (the client routes on the path)."""
    return _send("index.html")


@bp.get("/rules/<rules_id>")
def rules_page(rules_id: str) -> Response:
    if rules_id not in engine.RULES:
        raise NotFound()
    return _send("index.html")


@bp.get("/rules/<rules_id>/text")
def rules_text(rules_id: str) -> Response:
    """A rule set's full rules, as Markdown: the one source, docs/rules, in the language asked for when
    it has a translation, else in English (``Content-Language`` says which)."""
    wanted = request.args.get("lang", "en")
    if rules_id not in engine.RULES or not LANG.fullmatch(wanted):
        raise NotFound()
    path, lang = rules_file(rules_id, wanted)
    resp = send_from_directory(path.parent, path.name, mimetype="text/markdown", max_age=0)
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["Content-Language"] = lang
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


@bp.get("/static/<filename>")
def asset(filename: str) -> Response:
    return _send(filename)


@bp.get("/static/i18n/<filename>")
def catalog(filename: str) -> Response:
    """One language's message catalog (``static/i18n/<lang>.json``): every string the client shows."""
    return _send(filename, STATIC / "i18n", {".json": "application/json"})
