"""Every log line a real worker process (``python worker.py``) writes about a job queued by a
request carries that request's id and the job's id -- RQ's own lines ("play: ... (id)", "Job OK", "result is
kept") as much as the job's.  Jobs are queued through real HTTP (Flask test client) on the test Redis."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from api_support import ROOT, bearer, create, tokens_by_seat

import worker

pytest_plugins = ["api_fixtures"]


def test_every_worker_line_about_a_job_carries_the_request_id_that_queued_it(app, client, drain, redis_url):
    people = create(client, "tiengow", [{"kind": "human"}, {"kind": "ai", "engine": "greedy"},
                                        {"kind": "ai", "engine": "random"}, {"kind": "ai", "engine": "random"}])
    people_id = people["game"]["id"]
    drain()  # any AI seats ahead of the human move in process, before the worker under test starts
    assert client.get(f"/v1/games/{people_id}").get_json()["to_move"] == 0
    asked = client.post(f"/v1/games/{people_id}/suggestions", headers={
        **bearer(tokens_by_seat(people)[0]), "X-Request-ID": "ask-for-help"},
        json={"engine": "ismcts", "params": {"iterations": 20}, "workers": 2})
    assert asked.status_code == 202
    ai_game = client.post("/v1/games", headers={"X-Request-ID": "create-ai-table"}, json={
        "rules": "kozel", "options": {"target": 10},
        "seats": [{"kind": "ai", "engine": "random"}, {"kind": "ai", "engine": "greedy"}]}).get_json()
    ai_id = ai_game["game"]["id"]
    env = {**os.environ, "TILEHOUSE_REDIS_URL": redis_url, "TILEHOUSE_LOG_LEVEL": "INFO"}
    out = subprocess.run([sys.executable, "worker.py", "--burst", "--no-scheduler"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [json.loads(line) for line in out.stderr.splitlines() if line.startswith("{")]
    expected = {f"play-{ai_id}-": "create-ai-table", f"suggest-{people_id}-": "ask-for-help"}
    about_jobs = [line for line in lines if any(prefix in line["msg"] for prefix in expected)]
    assert about_jobs, "the worker wrote no line about the queued jobs"
    for line in about_jobs:
        # the line is about its own job (a merge job's lines name the parts it merges, of the same request)
        mentioned = re.findall(r"(?:play|suggest)-[0-9a-f]{16}-[A-Za-z0-9-]+", line["msg"])
        assert line["job_id"] and any(m.startswith(line["job_id"]) for m in mentioned), line
        want = next(rid for prefix, rid in expected.items() if line["job_id"].startswith(prefix))
        assert line["request_id"] == want, line
    rq_lines = [line for line in about_jobs if line["logger"].startswith("rq.")]
    assert {line["request_id"] for line in rq_lines} == {"create-ai-table", "ask-for-help"}
    assert any("Job OK" in line["msg"] for line in rq_lines)
    # the AI table played to its end inside that one burst, each play job queued by the one before it
    assert client.get(f"/v1/games/{ai_id}").get_json()["status"] == "finished"
    played = {line["job_id"] for line in rq_lines if line["job_id"].startswith("play-")}
    assert len(played) > 5
    # lines outside any job carry no ids at all
    idle = [line for line in lines if line["job_id"] is None]
    assert idle and all(line["request_id"] is None for line in idle)


def test_the_worker_serves_only_the_queues_it_is_given_in_that_order():
    assert worker.queue_names("play") == ["play"]
    assert worker.queue_names("play, suggest") == ["play", "suggest"]
    for bad in ("", "plays", "play,play", "suggest,other"):
        with pytest.raises(ValueError, match="--queues"):
            worker.queue_names(bad)
