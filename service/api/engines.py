"""``/v1/engines``: the AI engines, straight from the AI registry (``ai.ENGINES``), and the one place the
service asks the AI layer whether an engine id and its params are valid."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

import ai
from service.problems import Problem

bp = Blueprint("engines", __name__, url_prefix="/v1/engines")


def describe(engine_id: str) -> dict[str, Any]:
    return {**ai.ENGINES[engine_id].to_dict(), "id": engine_id}


def check(engine_id: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's validated params; ``ai.UnknownEngine`` / ``ai.BadParams`` otherwise."""
    return ai.get_engine(engine_id).validate(dict(params))


@bp.get("")
def list_engines() -> ResponseReturnValue:
    return jsonify([describe(eid) for eid in sorted(ai.ENGINES)])


@bp.get("/<engine_id>")
def get_engine(engine_id: str) -> ResponseReturnValue:
    if engine_id not in ai.ENGINES:
        raise Problem(404, f"no AI engine {engine_id!r}; GET /v1/engines lists them")
    return jsonify(describe(engine_id))
