"""The live parts of a table: what happens over time rather than per request.

* ``stream``: ``GET /v1/games/{id}/stream``, the game's event log as Server-Sent Events, fed by Redis
  pub/sub from the same store commit (``service.store.COMMIT_LUA``) that writes every event, so every kind
  of event (moves, and the clock's, lobby's and resignation's events) reaches open streams with no extra work.
* ``tickets``: short-lived, single-game stream tickets for browsers, whose ``EventSource`` cannot send an
  ``Authorization`` header.
* ``clock``: the arithmetic of the per-game Fischer clocks of the human seats.  Their timeouts are RQ jobs
  scheduled by :func:`service.queues.schedule_timeout` (``queue.enqueue_at``; workers run with the
  scheduler), never a polling thread; the ``timeout`` events, like the lobby's ``join``/``start`` and a
  resignation's events, go through the same commit (:mod:`service.tables`).

Presence: an open stream of a seat counts as that seat being seen; ``Store.touch(game_id, seat)`` is the
hook (throttled, it writes at most once per ``PRESENCE_INTERVAL_SECONDS`` per seat).
"""
