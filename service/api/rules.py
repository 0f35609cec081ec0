"""``/v1/rules``: the rule sets this server plays, straight from the engine registry (``engine.RULES``)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

import engine
from service.problems import Problem

bp = Blueprint("rules", __name__, url_prefix="/v1/rules")


def describe(rs: engine.RuleSet) -> dict[str, Any]:
    return {**rs.to_dict(), "default_players": rs.default_players}


@bp.get("")
def list_rules() -> ResponseReturnValue:
    return jsonify([describe(engine.RULES[rid]) for rid in sorted(engine.RULES)])


@bp.get("/<rules_id>")
def get_rules(rules_id: str) -> ResponseReturnValue:
    rs = engine.RULES.get(rules_id)
    if rs is None:
        raise Problem(404, f"no rule set {rules_id!r}; GET /v1/rules lists them")
    return jsonify(describe(rs))
