"""Issue 15, contract fuzzing: schemathesis generates requests for every operation of openapi.yaml
(valid and invalid data), sends them to the app on the test Redis and checks every answer: no 5xx, the
status code, content type, headers and body are the ones openapi.yaml documents for the operation, and
invalid data is refused.

The generated path ids would only ever name games and jobs that do not exist, so most cases are pointed at
real ones: a game with a human seat to move, AI seats, a finished suggestion job and a play job (made and
drained by a real RQ worker before the run), and the Authorization header is swapped for one of that
game's real tokens (the seat to move, another seat, the admin) or left as generated (unknown tokens).
Examples per operation are bounded (``MAX_EXAMPLES``) so the run stays short.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import schemathesis
from api_support import SPEC, ContractClient, bearer, create, tokens_by_seat
from hypothesis import HealthCheck, given, settings
from rq import SimpleWorker
from schemathesis import Case, GenerationMode
from schemathesis.checks import ignored_auth, positive_data_acceptance

from service import create_app

#: examples per operation and data mode; the suite's time budget, not the search's appetite, sets it
MAX_EXAMPLES = 25


@pytest.fixture
def fuzz_world(redis_conn, redis_url):
    app = create_app({"REDIS_URL": redis_url})
    app.test_client_class = ContractClient
    client = app.test_client()
    created = create(client, "tiengow", [{"kind": "human", "name": "Ann"},
                                         {"kind": "ai", "engine": "random"},
                                         {"kind": "ai", "engine": "greedy"},
                                         {"kind": "ai", "engine": "ismcts", "params": {"iterations": 4}}], seed=1)
    game = created["game"]
    tokens = tokens_by_seat(created)
    seat = game["to_move"]
    assert game["seats"][seat]["kind"] == "human"
    suggestion = client.post(f"/v1/games/{game['id']}/suggestions", json={"engine": "random"},
                             headers=bearer(tokens[seat])).get_json()["id"]
    move = client.get(f"/v1/games/{game['id']}/moves", headers=bearer(tokens[seat])).get_json()[0]["id"]
    after = client.post(f"/v1/games/{game['id']}/moves", json={"move": move}, headers=bearer(tokens[seat]))
    play_job = after.get_json()["ai"]["job"]
    queues = [app.extensions["queues"][n] for n in ("suggest", "play")]
    SimpleWorker(queues, connection=app.extensions["redis"]).work(burst=True, logging_level="WARNING")
    world = {"app": app, "game": game["id"], "tokens": [tokens[seat], created["admin_token"]],
             "jobs": [suggestion, play_job]}
    yield world
    app.extensions["redis"].close()


METHODS = ("get", "post", "put", "patch", "delete")
#: every operation of openapi.yaml, as schemathesis labels them ("GET /v1/games/{game_id}")
OPERATIONS = sorted(f"{method.upper()} {path}" for path, item in SPEC["paths"].items()
                    for method in item if method in METHODS)
#: the operations that take input, and so can be sent invalid input (negative mode)
WITH_INPUT = sorted(f"{method.upper()} {path}" for path, item in SPEC["paths"].items()
                    for method, op in item.items() if method in METHODS
                    and (item.get("parameters") or op.get("parameters") or op.get("requestBody")))
#: schemathesis' ``positive_data_acceptance`` expects every schema-valid request to succeed; here a
#: request can be well-formed and still name a rule set, engine or move that does not exist or is not
#: legal now, which is a documented 422 (the schema cannot know the registries or the game)
EXCLUDED_CHECKS = [positive_data_acceptance]
#: ``ignored_auth`` replays a request with other credentials after it ran: after a DELETE that succeeded
#: the game is gone, so the replay's 404 is right (tests/test_api_errors.py checks the DELETE tokens)
EXCLUDED_FOR = {"DELETE /v1/games/{game_id}": [ignored_auth]}
CASES = [(GenerationMode.POSITIVE, label) for label in OPERATIONS] + \
        [(GenerationMode.NEGATIVE, label) for label in WITH_INPUT]


def _pick(generated: str, choices: list[str]) -> str:
    """A real id for most generated ones (chosen by the generated value, so a failure replays)."""
    digest = hashlib.sha256(generated.encode()).digest()[0]
    return generated if digest % 4 == 0 else choices[digest % len(choices)]


@pytest.mark.parametrize(("mode", "label"), CASES, ids=[f"{m.value}-{label}" for m, label in CASES])
def test_every_operation_answers_only_what_openapi_documents(fuzz_world, label, mode):
    schema = schemathesis.openapi.from_wsgi("/openapi.yaml", fuzz_world["app"])
    operation = schema.find_operation_by_label(label)
    assert operation is not None, label

    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Case) -> None:
        aim(case, fuzz_world)
        case.call_and_validate(excluded_checks=EXCLUDED_CHECKS + EXCLUDED_FOR.get(label, []))

    run()


def aim(case: Case, fuzz_world: dict[str, Any]) -> None:
    """Point most cases at the real game, jobs and tokens."""
    path_params = case.path_parameters or {}
    if "game_id" in path_params:
        path_params["game_id"] = _pick(str(path_params["game_id"]), [fuzz_world["game"]])
    if "job_id" in path_params:
        path_params["job_id"] = _pick(str(path_params["job_id"]), fuzz_world["jobs"])
    headers = case.headers if case.headers is not None else {}
    auth = headers.get("Authorization", "")
    pick = _pick(auth, fuzz_world["tokens"])
    if pick != auth:
        headers["Authorization"] = f"Bearer {pick}"
    case.headers = headers
