"""``/v1/jobs/{job_id}``: the status of an AI job (docs/api.md, "AI").

``queued`` (RQ's queued, deferred or scheduled), ``started``, ``finished`` with ``result``, or ``failed``
with a ``problem`` document.  A suggestion job is readable only with the token of the seat that asked for
it (401 without a token, 403 with any other); a play job is readable by anyone because its result holds
only the outcome, the new version and the engine -- never the move or the search statistics.  A failed job's
problem never carries the exception text, which could name a hidden tile.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from service.api import caller, conn, store
from service.errors import GameNotFound
from service.fairplay import ai_share
from service.hardening import recovery
from service.keys import pace_job_id
from service.problems import TYPE_PREFIX, Problem
from service.tables import decision_json

bp = Blueprint("jobs", __name__, url_prefix="/v1/jobs")

JOB_ID = re.compile(r"[A-Za-z0-9_-]{1,160}")
_QUEUED = {JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED, JobStatus.CREATED}
_FAILED = {JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}


def _problem(status: int, slug: str, title: str, detail: str) -> dict[str, Any]:
    return {"type": TYPE_PREFIX + slug, "title": title, "status": status, "detail": detail}


def job_json(job: Job) -> dict[str, Any]:
    meta = job.meta
    status = job.get_status(refresh=False) or JobStatus.QUEUED
    out: dict[str, Any] = {"id": job.id, "kind": meta.get("kind", "unknown"), "game": meta.get("game"),
                           "version": meta.get("version")}
    if status in _QUEUED:
        out["status"] = "queued"
    elif status == JobStatus.STARTED:
        out["status"] = "started"
    elif status == JobStatus.FINISHED:
        value = job.return_value()
        if not isinstance(value, dict):
            value = decision_json(value, str(meta.get("engine")))
        if value.get("outcome") == "stale" and out["kind"] == "suggestion":
            out["status"] = "failed"
            out["problem"] = _problem(409, "stale-version", "Version conflict",
                                      "the game moved on before the suggestion was computed; ask again")
        else:
            out["status"] = "finished"
            out["result"] = value
    else:
        out["status"] = "failed"
        detail = ("the AI job failed; a retry or a cheaper engine takes over the move" if out["kind"] == "play"
                  else "the AI job failed; ask again")
        out["problem"] = _problem(500, "job-failed", "AI job failed", detail)
    return out


_PLAY_JOB_ID = re.compile(r"play-([0-9a-f]+)-([0-9]+)")


def _waiting_for_pace(job_id: str) -> dict[str, Any] | None:
    """A play job not queued yet because its table keeps the pace of a table with no person at it
    (service.queues, "The pace"): ``queued``, as the game's ``ai.job`` promises; None for any other id."""
    m = _PLAY_JOB_ID.fullmatch(job_id)
    if m is None or not conn().exists(Job.key_for(pace_job_id(m[1], int(m[2])))):
        return None
    return {"id": job_id, "kind": "play", "game": m[1], "version": int(m[2]), "status": "queued"}


@bp.get("/<job_id>")
def get_job(job_id: str) -> ResponseReturnValue:
    if not JOB_ID.fullmatch(job_id):
        raise Problem(404, f"no job {job_id!r}")
    try:
        job = Job.fetch(job_id, connection=conn())
        job.get_status(refresh=True)
    except NoSuchJobError:
        waiting = _waiting_for_pace(job_id)
        if waiting is not None:
            return jsonify(waiting)
        raise Problem(404, f"no job {job_id!r} (it may have expired)") from None
    if recovery.abandoned(job, current_app.config["ABANDONED_JOB_SECONDS"]):
        recovery.fail_over(conn(), job)  # its worker died: failed now, not after the next maintenance round
        job.get_status(refresh=True)
    elif recovery.stranded(conn(), job, current_app.config["ABANDONED_JOB_SECONDS"]):
        recovery.requeue_stranded(conn(), job)  # taken off its queue by a worker a failover cut off
    elif ai_share.release_if_orphaned(conn(), job) or recovery.enqueue_if_ready(conn(), job):
        # deferred in its client's chain behind nothing, or released but left off its queue by RQ
        job.get_status(refresh=True)
    if job.meta.get("kind") == "suggestion":
        try:
            game = store().get(job.meta["game"])
        except GameNotFound:
            raise Problem(404, f"no job {job_id!r} (its game is gone)") from None
        if caller(game, required=True) != job.meta["seat"]:
            raise Problem(403, "a suggestion is readable only with the token of the seat that asked for it",
                          slug="not-your-job")
    return jsonify(job_json(job))
