"""Limits: request bodies over ``MAX_BODY_BYTES`` are a 413 problem document whether they come
with a ``Content-Length`` or chunked, and the limit holds before the body is read (service.hardening.bodies);
every integer a request may carry is bounded, in openapi.yaml and in the marshmallow schemas."""

from __future__ import annotations

import http.client
import io
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from api_support import SPEC, bearer, check_response, create, humans, tokens_by_seat
from processes import api_and_workers

import ai
import engine
from service import schemas
from service.hardening.bodies import READ_SIZE

pytest_plugins = ["api_fixtures"]

LIMIT = 4096
GAME = {"rules": "tiengow", "seed": 3, "seats": [{"kind": "human"}] * 4}


@pytest.fixture
def small_app(redis_conn, redis_url):
    from api_support import ContractClient

    from service import create_app

    application = create_app({"REDIS_URL": redis_url, "MAX_BODY_BYTES": LIMIT})
    application.test_client_class = ContractClient
    yield application
    application.extensions["redis"].close()


class CountingStream(io.RawIOBase):
    """An endless body that counts what is read of it (or refuses to be read at all)."""

    def __init__(self, refuse: bool = False) -> None:
        self.read_bytes = 0
        self.refuse = refuse

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        assert not self.refuse, "the body was read"
        n = len(buffer)
        buffer[:n] = b" " * n
        self.read_bytes += n
        return n


def post_chunked(app, path: str, stream: Any, **headers: str):
    """POST ``stream`` as a chunked body, as gunicorn hands one to the app: no length, a terminated input."""
    return app.test_client().post(path, headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json",
                                                 **headers},
                                  environ_overrides={"wsgi.input": stream, "wsgi.input_terminated": True})


def _problem(resp, status: int) -> dict[str, Any]:
    assert resp.status_code == status
    assert resp.headers["Content-Type"] == "application/problem+json"
    doc = resp.get_json()
    assert doc["status"] == status
    return doc


def test_a_chunked_body_over_the_limit_is_a_413_problem_and_is_read_no_further(small_app, redis_conn):
    stream = CountingStream()
    resp = post_chunked(small_app, "/v1/games", stream)
    doc = _problem(resp, 413)
    assert doc["type"].endswith(":body-too-large") and str(LIMIT) in doc["detail"]
    assert resp.headers["Connection"] == "close" and resp.headers["X-Request-ID"]
    assert LIMIT < stream.read_bytes <= LIMIT + READ_SIZE
    assert not redis_conn.keys("th:game:*")


def test_a_declared_length_over_the_limit_is_a_413_before_one_byte_is_read(small_app, redis_conn):
    resp = small_app.test_client().post("/v1/games", content_type="application/json", environ_overrides={
        "wsgi.input": CountingStream(refuse=True), "CONTENT_LENGTH": str(LIMIT + 1)})
    _problem(resp, 413)
    assert not redis_conn.keys("th:game:*")


def test_a_chunked_body_within_the_limit_is_read_whole_and_creates_the_game(small_app):
    body = json.dumps(GAME).encode()
    resp = post_chunked(small_app, "/v1/games", io.BytesIO(body))
    assert resp.status_code == 201, resp.get_json()
    assert len(resp.get_json()["seats"]) == 4


def test_a_body_of_exactly_the_limit_is_accepted_and_one_byte_more_is_not(small_app):
    body = json.dumps(GAME).encode()
    padded = body[:-1] + b" " * (LIMIT - len(body)) + b"}"
    client = small_app.test_client()
    over = padded + b" "
    assert client.post("/v1/games", data=padded, content_type="application/json").status_code == 201
    _problem(client.post("/v1/games", data=over, content_type="application/json"), 413)
    assert post_chunked(small_app, "/v1/games", io.BytesIO(padded)).status_code == 201
    _problem(post_chunked(small_app, "/v1/games", io.BytesIO(over)), 413)


def _raw(base: str, method: str, path: str, body: Any, headers: dict[str, str]) -> tuple[int, str, bytes]:
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers, encode_chunked=not isinstance(body, bytes))
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read()
    finally:
        conn.close()


def test_over_gunicorn_a_200_kb_body_is_a_413_problem_chunked_or_not(redis_conn, redis_url, tmp_path):
    with api_and_workers(redis_url, tmp_path, workers=0) as base:
        big = b"[" + b"1," * 100_000 + b"1]"
        for body in (big, (big[i:i + 8192] for i in range(0, len(big), 8192))):
            status, ctype, data = _raw(base, "POST", "/v1/games", body, {"Content-Type": "application/json"})
            check_response("POST", "/v1/games", status, ctype, data)
            assert status == 413 and json.loads(data)["type"].endswith(":body-too-large")
        # and a small chunked body is read whole
        small = json.dumps(GAME).encode()
        status, ctype, data = _raw(base, "POST", "/v1/games", iter([small[:10], small[10:]]),
                                   {"Content-Type": "application/json"})
        check_response("POST", "/v1/games", status, ctype, data)
        assert status == 201


# ------------------------------------------------------------------------------------------ integers

def test_an_event_number_beyond_the_bound_is_a_422_not_a_500(client):
    created = create(client, "tiengow", humans(4))
    game_id = created["game"]["id"]
    doc = _problem(client.get(f"/v1/games/{game_id}/events?after=100000000000000000000"), 422)
    assert "after" in doc["errors"]
    assert client.get(f"/v1/games/{game_id}/events?after={schemas.MAX_COUNTER}").get_json() == []
    _problem(client.get(f"/v1/games/{game_id}/events?after={schemas.MAX_COUNTER + 1}"), 422)


def test_a_version_beyond_the_bound_is_a_422_and_changes_nothing(client):
    created = create(client, "tiengow", humans(4))
    game_id, token = created["game"]["id"], tokens_by_seat(created)[created["game"]["to_move"]]
    move = client.get(f"/v1/games/{game_id}/moves", headers=bearer(token)).get_json()[0]["id"]
    for path, body in ((f"/v1/games/{game_id}/moves", {"move": move, "version": 2**63}),
                       (f"/v1/games/{game_id}/suggestions", {"version": schemas.MAX_COUNTER + 1})):
        doc = _problem(client.post(path, json=body, headers=bearer(token)), 422)
        assert "version" in doc["errors"]
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 0


@pytest.mark.parametrize("body, field", [
    ({**GAME, "options": {"deals": 10**7}}, "options"),
    ({**GAME, "options": {"profile": "x" * 65}}, "options"),
    ({**GAME, "options": {f"o{i}": 1 for i in range(33)}}, "options"),
    ({**GAME, "seats": [{"kind": "ai", "engine": "ismcts", "params": {"iterations": -10**9}}] * 4}, "seats"),
])
def test_an_option_or_parameter_value_out_of_the_general_bounds_is_a_422(client, redis_conn, body, field):
    doc = _problem(client.post("/v1/games", json=body), 422)
    assert field in doc["errors"]
    assert not redis_conn.keys("th:game:*")


@pytest.mark.parametrize("move", [
    {"action": "play", "tiles": ["6-5"], "column": 10**12},
    {"action": "play", "tiles": ["6-5"] * 17},
    {"action": "play", "tiles": [["6-5"]]},
    {f"f{i}": 1 for i in range(17)},
])
def test_a_move_object_out_of_bounds_is_a_422_on_move(client, move):
    created = create(client, "tiengow", humans(4))
    game_id, token = created["game"]["id"], tokens_by_seat(created)[created["game"]["to_move"]]
    doc = _problem(client.post(f"/v1/games/{game_id}/moves", json={"move": move}, headers=bearer(token)), 422)
    assert "move" in doc["errors"]


def test_every_registered_option_and_parameter_range_lies_within_the_general_bounds():
    value = SPEC["components"]["schemas"]["SettingValue"]
    assert value["minimum"] == -schemas.MAX_SETTING_MAGNITUDE and value["maximum"] == schemas.MAX_SETTING_MAGNITUDE
    assert value["maxLength"] == schemas.MAX_SETTING_STRING
    fields = [o for rs in engine.RULES.values() for o in rs.options]
    fields += [p for e in ai.ENGINES.values() for p in e.params]
    for f in fields:
        if f.type in (int, float) and f.choices is None:
            assert f.minimum is not None and f.maximum is not None, f
            assert -schemas.MAX_SETTING_MAGNITUDE <= f.minimum <= f.maximum <= schemas.MAX_SETTING_MAGNITUDE, f
        for choice in f.choices or ():
            assert not isinstance(choice, str) or len(choice) <= schemas.MAX_SETTING_STRING, f


def _resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        target: Any = SPEC
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _unbounded_numbers(schema: Any, where: str, seen: set[str]) -> list[str]:
    """Places in ``schema`` where an integer or number has no minimum or no maximum."""
    if isinstance(schema, dict) and "$ref" in schema:
        if schema["$ref"] in seen:
            return []
        seen = seen | {schema["$ref"]}
        return _unbounded_numbers(_resolve(schema), where, seen)
    if not isinstance(schema, dict):
        return []
    out = []
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else types
    if {"integer", "number"} & set(types) and ("minimum" not in schema or "maximum" not in schema):
        out.append(where)
    for key in ("properties", "patternProperties"):
        for name, sub in schema.get(key, {}).items():
            out += _unbounded_numbers(sub, f"{where}.{name}", seen)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict):
            out += _unbounded_numbers(schema[key], f"{where}[]", seen)
    for key in ("oneOf", "anyOf", "allOf"):
        for i, sub in enumerate(schema.get(key, [])):
            out += _unbounded_numbers(sub, f"{where}<{i}>", seen)
    return out


def test_every_integer_in_a_path_query_or_body_is_bounded_in_openapi():
    unbounded = []
    for path, item in SPEC["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            params = [_resolve(p) for p in item.get("parameters", []) + op.get("parameters", [])]
            for p in params:
                unbounded += _unbounded_numbers(p["schema"], f"{method} {path} {p['in']} {p['name']}", set())
            for ctype, media in _resolve(op.get("requestBody", {})).get("content", {}).items():
                unbounded += _unbounded_numbers(media["schema"], f"{method} {path} body({ctype})", set())
    assert not unbounded, unbounded
