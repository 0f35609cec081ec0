"""CORS: a page on another origin can call every route.  Real preflight requests
(``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``/``-Headers``) on every rule of the url
map, the headers on ordinary answers and on problem documents, and the origin list from
``TILEHOUSE_CORS_ORIGINS``."""

from __future__ import annotations

import re

import pytest
from api_support import bearer, create, humans, tokens_by_seat

from service import config
from service.app import CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, cors_origins

pytest_plugins = ["api_fixtures"]

ORIGIN = "https://table.example"


def _header_set(value: str | None) -> set[str]:
    return {h.strip().lower() for h in (value or "").split(",") if h.strip()}


def _preflight(client, path: str, method: str, origin: str = ORIGIN):
    return client.options(path, headers={"Origin": origin, "Access-Control-Request-Method": method,
                                         "Access-Control-Request-Headers": ", ".join(CORS_ALLOW_HEADERS)})


def _routes(app) -> list[tuple[str, str]]:
    out = []
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", lambda m: {"game_id": "0123456789abcdef"}.get(m[1], "x"), rule.rule)
        out += [(path, m) for m in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return out


def test_every_route_answers_a_preflight_for_each_of_its_methods_with_the_api_headers_allowed(app, client):
    routes = _routes(app)
    assert ("/healthz", "GET") in routes and ("/v1/games", "POST") in routes and len(routes) >= 12
    for path, method in routes:
        r = _preflight(client, path, method)
        assert r.status_code == 200, (path, method, r.status_code)
        assert r.headers["Access-Control-Allow-Origin"] == "*", (path, method)
        assert method.lower() in _header_set(r.headers["Access-Control-Allow-Methods"]), (path, method)
        assert _header_set(r.headers["Access-Control-Allow-Headers"]) == {h.lower() for h in CORS_ALLOW_HEADERS}
        assert int(r.headers["Access-Control-Max-Age"]) > 0
        assert "Access-Control-Allow-Credentials" not in r.headers


def test_a_preflight_for_a_method_the_api_never_answers_allows_nothing(client):
    r = _preflight(client, "/v1/games", "PUT")
    assert "Access-Control-Allow-Methods" not in r.headers and "Access-Control-Allow-Headers" not in r.headers


def test_answers_and_problem_documents_carry_the_cors_headers_and_expose_the_api_headers(client):
    origin = {"Origin": ORIGIN}
    created = client.post("/v1/games", json={"rules": "kozel", "seed": 3, "seats": humans(2)}, headers=origin)
    game_id = created.get_json()["game"]["id"]
    token = tokens_by_seat(created.get_json())[0]
    answers = [
        created,                                                                     # 201 with Location
        client.get(f"/v1/games/{game_id}", headers={**origin, **bearer(token)}),     # 200 with ETag
        client.get("/v1/games/ffffffffffffffff", headers=origin),                   # 404 problem
        client.put(f"/v1/games/{game_id}", headers=origin),                         # 405 problem
        client.post("/v1/games", json={"rules": "chess", "seats": humans(2)}, headers=origin),  # 422 problem
        client.get(f"/v1/games/{game_id}", headers={**origin, "Authorization": "Bearer nope"}),  # 401 problem
        client.get("/healthz", headers=origin),
    ]
    assert [r.status_code for r in answers] == [201, 200, 404, 405, 422, 401, 200]
    for r in answers:
        assert r.headers["Access-Control-Allow-Origin"] == "*", r.status_code
        assert _header_set(r.headers["Access-Control-Expose-Headers"]) == {h.lower() for h in CORS_EXPOSE_HEADERS}


def test_only_the_configured_origins_may_call_and_the_answer_varies_by_origin(make_app):
    client = make_app(CORS_ORIGINS="https://a.example, http://localhost:5173/").test_client()
    for allowed in ("https://a.example", "http://localhost:5173"):
        r = _preflight(client, "/v1/games", "POST", origin=allowed)
        assert r.headers["Access-Control-Allow-Origin"] == allowed
        assert "Origin" in r.headers.get_all("Vary")
        assert "post" in _header_set(r.headers["Access-Control-Allow-Methods"])
        created = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)},
                              headers={"Origin": allowed})
        assert created.headers["Access-Control-Allow-Origin"] == allowed
    r = _preflight(client, "/v1/games", "POST", origin="https://evil.example")
    assert not [k for k, _ in r.headers.items() if k.startswith("Access-Control-")]
    r = client.get("/v1/games/ffffffffffffffff", headers={"Origin": "https://evil.example"})
    assert r.status_code == 404 and "Access-Control-Allow-Origin" not in r.headers


def test_the_origin_list_comes_from_tilehouse_cors_origins(redis_conn):
    assert config.load(environ={})["CORS_ORIGINS"] == "*"
    cfg = config.load(environ={"TILEHOUSE_CORS_ORIGINS": "https://a.example,https://b.example"})
    assert cors_origins(cfg["CORS_ORIGINS"]) == ["https://a.example", "https://b.example"]
    assert cors_origins("https://a.example, *") == "*"
    with pytest.raises(config.ConfigError):
        cors_origins(" , ")


def test_a_seat_can_play_from_another_origin_after_its_preflight(client):
    created = create(client, "kozel", humans(2), seed=5)
    game_id, seat = created["game"]["id"], created["game"]["to_move"]
    token = tokens_by_seat(created)[seat]
    pre = _preflight(client, f"/v1/games/{game_id}/moves", "POST")
    assert {"authorization", "content-type"} <= _header_set(pre.headers["Access-Control-Allow-Headers"])
    move = client.get(f"/v1/games/{game_id}/moves", headers=bearer(token)).get_json()[0]["id"]
    r = client.post(f"/v1/games/{game_id}/moves", json={"move": move, "version": 0},
                    headers={"Origin": ORIGIN, **bearer(token)})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == "*"
    assert r.headers["ETag"] == '"1"'
