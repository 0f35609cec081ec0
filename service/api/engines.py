"""``/v1/engines``: the AI engines, straight from the AI registry (``ai.ENGINES``), and the one place the
service asks the AI layer whether an engine id and its params are valid.

Server caps: the parameters named in ``config.PARAM_CAPS`` (``time_ms``, ``iterations``) are
capped by settings (``TILEHOUSE_AI_MAX_TIME_MS``, ``TILEHOUSE_AI_MAX_ITERATIONS``) for every engine that has
them.  A value above the cap is refused (422 naming the parameter), never clamped, so a client learns what
it gets; an engine default above a cap runs at the cap (the client asked for nothing).  The listing shows
each capped parameter's effective ``maximum`` and ``default`` and the ``cap`` itself, and the range of a
suggestion's ``workers`` (capped by ``TILEHOUSE_AI_MAX_WORKERS``; 1 for engines that cannot split a search).

Strength presets: each engine's ``ai.Preset`` list, for a frontend's "engine + strength" choice;
a preset that asks for more than a cap is left out of the listing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue

import ai
from service.config import PARAM_CAPS
from service.problems import Problem

bp = Blueprint("engines", __name__, url_prefix="/v1/engines")


def caps(cfg: Mapping[str, Any]) -> dict[str, int]:
    """Parameter name -> the server's cap on it."""
    return {name: int(cfg[setting]) for name, setting in PARAM_CAPS.items()}


#: the engines whose suggestions may be split over several workers (root parallelism, ``ai.merge``)
SPLITTABLE = frozenset({"ismcts"})


def describe(engine_id: str, cfg: Mapping[str, Any] | None = None) -> dict[str, Any]:
    cfg = cfg if cfg is not None else current_app.config
    out = {**ai.ENGINES[engine_id].to_dict(), "id": engine_id}
    # ``workers`` of a suggestion: 1 for an engine that cannot split a search, else up to the server's cap
    out["workers"] = {"default": 1, "minimum": 1,
                      "maximum": int(cfg["AI_MAX_WORKERS"]) if engine_id in SPLITTABLE else 1,
                      "cap": int(cfg["AI_MAX_WORKERS"])}
    limits = caps(cfg)
    params = []
    for p in out["params"]:
        cap = limits.get(p["name"])
        if cap is not None:
            p = {**p, "cap": cap, "maximum": min(p.get("maximum", cap), cap), "default": min(p["default"], cap)}
        params.append(p)
    out["params"] = params
    # a preset asking for more than a cap allows would be refused at creation: it is not offered
    out["presets"] = [p for p in out.get("presets", [])
                      if all(v <= limits[k] for k, v in p["params"].items() if k in limits)]
    return out


def check(engine_id: str, params: Mapping[str, Any], cfg: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The engine's validated params within the server's caps; ``ai.UnknownEngine`` / ``ai.BadParams``
    (naming the parameter) otherwise."""
    checked = ai.get_engine(engine_id).validate(dict(params))
    for name, cap in caps(cfg if cfg is not None else current_app.config).items():
        if name not in checked:
            continue
        if name in params and checked[name] > cap:
            raise ai.BadParams(f"parameter {name!r} must be at most {cap} on this server (its cap), "
                               f"not {checked[name]!r}", name)
        checked[name] = min(checked[name], cap)
    return checked


@bp.get("")
def list_engines() -> ResponseReturnValue:
    return jsonify([describe(eid) for eid in sorted(ai.ENGINES)])


@bp.get("/<engine_id>")
def get_engine(engine_id: str) -> ResponseReturnValue:
    if engine_id not in ai.ENGINES:
        raise Problem(404, f"no AI engine {engine_id!r}; GET /v1/engines lists them")
    return jsonify(describe(engine_id))
