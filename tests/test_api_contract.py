"""openapi.yaml is a valid OpenAPI 3.1 document, is served at /openapi.yaml, and describes exactly the
routes the app has (every response the API tests receive is validated against it by ``api_support``)."""

from __future__ import annotations

import re

import yaml
from api_support import ROOT, SPEC
from openapi_spec_validator import validate

pytest_plugins = ["api_fixtures"]


def test_openapi_yaml_is_a_valid_openapi_3_1_document():
    assert SPEC["openapi"].startswith("3.1")
    validate(SPEC)


def test_the_installed_package_serves_the_same_document(client):
    assert (ROOT / "service" / "openapi.yaml").resolve() == (ROOT / "openapi.yaml").resolve()
    r = client.get("/openapi.yaml")
    assert r.status_code == 200 and r.mimetype == "application/yaml"
    assert yaml.safe_load(r.get_data()) == SPEC


def test_every_route_of_the_app_is_in_the_contract_and_nothing_else(app):
    routes = set()
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            routes.add((method.lower(), path))
    documented = {(m, p) for p, ops in SPEC["paths"].items() for m in ops if m != "parameters"}
    assert routes == documented


def test_the_operations_endpoints_answer_as_documented(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {"status": "ready", "checks": {"redis": "ok", "queue": "ok"}}
    # /metrics answers on the metrics listener (127.0.0.1:9100 by default), never on the API's address
    assert client.get("/metrics").status_code == 404
    metrics = client.get("/metrics", environ_overrides={"SERVER_PORT": "9100"})
    assert metrics.status_code == 200 and metrics.mimetype == "text/plain"


def test_listings_describe_every_rule_set_and_engine(client):
    import ai
    import engine

    assert [r["id"] for r in client.get("/v1/rules").get_json()] == sorted(engine.RULES)
    assert [e["id"] for e in client.get("/v1/engines").get_json()] == sorted(ai.ENGINES)
    for rid in engine.RULES:
        assert client.get(f"/v1/rules/{rid}").get_json()["id"] == rid
    for eid in ai.ENGINES:
        assert client.get(f"/v1/engines/{eid}").get_json()["params"] is not None
