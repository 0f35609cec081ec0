"""Contract fuzzing: schemathesis generates requests for every operation of openapi.yaml
(valid and invalid data), sends them to the app on the test Redis and checks every answer: no 5xx, the
status code, content type, headers and body are the ones openapi.yaml documents for the operation, and
invalid data is refused.

The generated path ids would only ever name games and jobs that do not exist, so most cases are pointed at
real ones: a game with a human seat to move, AI seats, a finished suggestion job and a play job (made and
drained by a real RQ worker before the run), and the Authorization header is swapped for one of that
game's real tokens (the seat to move, another seat, the admin) or left as generated (unknown tokens).
Examples per operation are bounded (``MAX_EXAMPLES``) so the run stays short.

The push stream (``text/event-stream``) of a game in play never ends, so its operation is fuzzed against
a game already played to the end (its stream closes after the last event, so the whole answer is read and
checked) and against ids of no game; the stream of a live game is read a frame at a time by the stream's
own tests (tests/test_api_streams.py, tests/test_e2e.py).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import schemathesis
from api_support import SPEC, bearer, create, tokens_by_seat
from hypothesis import HealthCheck, given, settings
from rq import SimpleWorker
from schemathesis import Case, GenerationMode
from schemathesis.checks import ignored_auth, positive_data_acceptance

pytest_plugins = ["api_fixtures"]

#: examples per operation and data mode; the suite's time budget, not the search's appetite, sets it
MAX_EXAMPLES = 20


@pytest.fixture
def fuzz_world(make_app):
    app = make_app()
    client = app.test_client()
    seats = [{"kind": "human", "name": "Ann"}, {"kind": "human", "name": "Bo"}, {"kind": "ai", "engine": "random"},
             {"kind": "ai", "engine": "ismcts", "params": {"iterations": 4}}]
    # a deal where a human seat leads, so that it has moves and may ask for a suggestion
    created = next(c for seed in range(1, 50) if (c := create(client, "tiengow", seats, seed=seed, public_seed=True))["game"]["seats"][
        c["game"]["to_move"]]["kind"] == "human")
    game = created["game"]
    tokens = tokens_by_seat(created)
    seat = game["to_move"]
    suggestion = client.post(f"/v1/games/{game['id']}/suggestions", json={"engine": "random"},
                             headers=bearer(tokens[seat])).get_json()["id"]
    move = client.get(f"/v1/games/{game['id']}/moves", headers=bearer(tokens[seat])).get_json()[0]["id"]
    after = client.post(f"/v1/games/{game['id']}/moves", json={"move": move}, headers=bearer(tokens[seat]))
    play_job = after.get_json()["ai"]["job"]
    # a game the AI seats play to the end: its stream ends after the last event, so it can be read whole
    over = create(client, "kozel", [{"kind": "ai", "engine": "random"}] * 2, seed=2, options={"target": 1})
    queues = [app.extensions["queues"][n] for n in ("suggest", "play")]
    SimpleWorker(queues, connection=app.extensions["redis"]).work(burst=True, logging_level="WARNING")
    assert client.get(f"/v1/games/{over['game']['id']}").get_json()["status"] == "finished"
    world = {"app": app, "game": game["id"], "tokens": [tokens[seat], *(t for s, t in tokens.items() if s != seat), created["admin_token"]],
             "jobs": [suggestion, play_job], "finished": over["game"]["id"], "finished_token": over["admin_token"]}
    return world


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
#: ``ignored_auth`` takes the case's credentials for generated (invalid) ones and expects a 401/403: it is
#: left out for the cases given a real token of the game (tests/test_api_errors.py checks real tokens)
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
        real_token = aim(case, label, fuzz_world)
        case.call_and_validate(excluded_checks=EXCLUDED_CHECKS + ([ignored_auth] if real_token else []))

    run()


#: a push stream stays open while its game goes on: these operations are aimed only at the finished game
#: (whose stream ends after its last event) or at ids that name no game, never at a game in play
STREAMS = {"GET /v1/games/{game_id}/stream"}


def aim(case: Case, label: str, fuzz_world: dict[str, Any]) -> bool:
    """Point most cases at the real games, jobs and tokens; True when the case now carries a real token."""
    games = [fuzz_world["finished"]] if label in STREAMS else [fuzz_world["game"], fuzz_world["finished"]]
    tokens = [fuzz_world["finished_token"]] if label in STREAMS else fuzz_world["tokens"]
    path_params = case.path_parameters or {}
    if "game_id" in path_params:
        path_params["game_id"] = _pick(str(path_params["game_id"]), games)
    if "job_id" in path_params:
        path_params["job_id"] = _pick(str(path_params["job_id"]), fuzz_world["jobs"])
    headers = case.headers if case.headers is not None else {}
    auth = headers.get("Authorization", "")
    pick = _pick(auth, tokens)
    if pick != auth:
        headers["Authorization"] = f"Bearer {pick}"
    case.headers = headers
    return pick != auth
