"""Test support for the HTTP service: an app on the test Redis whose test client checks every response
it receives against ``openapi.yaml`` (path, method, status, content type and body schema), a burst RQ
worker to drain the queues, and small helpers to play games through HTTP.

The fixtures (``app``, ``client``, ``drain``) are in ``api_fixtures.py``, loaded by the API test modules with
``pytest_plugins = ["api_fixtures"]``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[1]
SPEC: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text())
_TEMPLATES = [(re.compile("^" + re.sub(r"\{[^/]+\}", "[^/]+", p) + "$"), p) for p in SPEC["paths"]]
_VALIDATORS: dict[str, Draft202012Validator] = {}
#: every (method, path template, status) the suite saw, to check coverage of the contract
SEEN: set[tuple[str, str, int]] = set()
#: the seed secret of the apps the fixtures make (``make_app(SEED_SECRET="")`` for a generated one)
TEST_SEED_SECRET = "tilehouse test suite"


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        # local "#/components/..." references resolve against this root
        _VALIDATORS[key] = Draft202012Validator({**schema, "components": SPEC["components"]})
    return _VALIDATORS[key]


def _resolve(obj: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in obj:
        node: Any = SPEC
        for part in obj["$ref"].lstrip("#/").split("/"):
            node = node[part]
        obj = node
    return obj


def check_response(method: str, path: str, status: int, content_type: str | None, body: bytes) -> None:
    """Assert that the response is one ``openapi.yaml`` describes."""
    ctype = (content_type or "").split(";")[0].strip()
    template = next((t for rx, t in _TEMPLATES if rx.match(path)), None)
    if template is None or method.lower() not in SPEC["paths"][template]:
        # an unknown path is a 404 problem, a known path with another method a 405 problem
        assert status == (404 if template is None else 405), (method, path, status)
        assert ctype == "application/problem+json"
        errors = list(_validator({"$ref": "#/components/schemas/Problem"}).iter_errors(json.loads(body)))
        assert not errors, errors
        return
    op = SPEC["paths"][template][method.lower()]
    responses = op["responses"]
    assert str(status) in responses, f"{method} {template} answered {status}, which openapi.yaml does not list"
    SEEN.add((method.upper(), template, status))
    resp = _resolve(responses[str(status)])
    content = resp.get("content")
    if not content:
        assert not body, f"{method} {template} {status} should have no body"
        assert not ctype, f"{method} {template} {status} has no body but says Content-Type: {ctype}"
        return
    assert ctype in content, f"{method} {template} {status}: {ctype} not in {list(content)}"
    schema = content[ctype]["schema"]
    if ctype in ("application/json", "application/problem+json"):
        doc = json.loads(body)
        errors = sorted(_validator(schema).iter_errors(doc), key=str)
        assert not errors, f"{method} {path} {status}: {errors[0].message} at {list(errors[0].absolute_path)}"


def check_schema(ref: str, doc: Any) -> None:
    """Assert that ``doc`` matches the schema ``#/components/schemas/<ref>`` of openapi.yaml."""
    errors = sorted(_validator({"$ref": f"#/components/schemas/{ref}"}).iter_errors(doc), key=str)
    assert not errors, f"{ref}: {errors[0].message} at {list(errors[0].absolute_path)}"


class ContractClient(FlaskClient):
    """A Flask test client that validates every response against openapi.yaml.  A Server-Sent Event stream
    is checked for its status and content type only (reading it here would wait for the game to end): the
    stream tests read it with :func:`sse_frames` and check each event's data with :func:`check_schema`."""

    def open(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        resp = super().open(*args, **kwargs)
        req = resp.request
        if req.method not in ("HEAD", "OPTIONS"):
            streamed = resp.mimetype == "text/event-stream"
            check_response(req.method, req.path, resp.status_code, resp.headers.get("Content-Type"),
                           b"" if streamed else resp.get_data())
        return resp


def sse_frames(chunks: Iterable[bytes | str]) -> Iterator[dict[str, Any]]:
    """The frames of a Server-Sent Event stream as they complete: ``{"id", "event", "data"}`` (``data``
    parsed as JSON) for an event, ``{"comment": text}`` for a comment line, ``{"retry": ms}``."""
    buf = ""
    for chunk in chunks:
        buf += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buf:
            block, buf = buf.split("\n\n", 1)
            fields: dict[str, Any] = {}
            for line in block.split("\n"):
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "":
                    fields["comment"] = value
                elif name == "data":
                    fields["data"] = json.loads(value)
                elif name == "retry":
                    fields["retry"] = int(value)
                else:
                    fields[name] = value
            yield fields


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def create(client, rules: str, seats: list[dict[str, Any]], *, seed: int = 7,
           options: dict[str, Any] | None = None, public_seed: bool = False) -> dict[str, Any]:
    """Create a game; ``public_seed``: deal from ``seed`` exactly (a test that looks for a deal with some
    property, seed after seed, needs the same deal every run: other seeds get per-game randomness)."""
    body: dict[str, Any] = {"rules": rules, "seed": seed, "seats": seats}
    if public_seed:
        body["public_seed"] = True
    if options is not None:
        body["options"] = options
    r = client.post("/v1/games", json=body)
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def humans(n: int) -> list[dict[str, Any]]:
    return [{"kind": "human", "name": f"P{i}"} for i in range(n)]


def cheap_ai(engine_id: str = "ismcts") -> dict[str, Any]:
    """An AI seat that costs little: ismcts with a handful of iterations."""
    if engine_id == "ismcts":
        return {"kind": "ai", "engine": "ismcts", "params": {"iterations": 8}}
    return {"kind": "ai", "engine": engine_id}


def tokens_by_seat(created: dict[str, Any]) -> dict[int, str]:
    return {s["seat"]: s["token"] for s in created["seats"]}


def play_out(client, drain, game_id: str, token: str, rng: random.Random,
             answers: list[Any] | None = None) -> dict[str, Any]:
    """Play the game to its end: the seat of ``token`` makes random legal moves, the AI seats move when
    ``drain`` runs the queued jobs.  Every view and move answer is appended to ``answers`` when given."""
    h = bearer(token)
    for _ in range(3000):
        view = client.get(f"/v1/games/{game_id}", headers=h).get_json()
        if answers is not None:
            answers.append(view)
        if view["status"] == "finished":
            return view
        if view["ai"]["pending"]:
            drain()
            continue
        move = rng.choice(view["legal_moves"])["id"]
        r = client.post(f"/v1/games/{game_id}/moves", json={"move": move, "version": view["version"]}, headers=h)
        assert r.status_code == 200, r.get_json()
        if answers is not None:
            answers.append(r.get_json())
    raise AssertionError("the game did not end")


#: the largest integer a JSON number keeps exactly in every client (JavaScript's Number.MAX_SAFE_INTEGER)
SAFE_INTEGER = 2**53 - 1


def integers(doc: Any, path: str = "") -> Iterator[tuple[str, int]]:
    """Every integer in a JSON document, with where it is."""
    if isinstance(doc, bool):
        return
    if isinstance(doc, int):
        yield path, doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from integers(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from integers(v, f"{path}[{i}]")


def unsafe_integers(*docs: Any) -> list[tuple[str, int]]:
    """The integers of ``docs`` outside +-(2^53 - 1)."""
    return [(where, n) for doc in docs for where, n in integers(doc) if not -SAFE_INTEGER <= n <= SAFE_INTEGER]
