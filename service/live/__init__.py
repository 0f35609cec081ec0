"""The live parts of a table (issue 11): what happens over time rather than per request.

* ``stream``: ``GET /v1/games/{id}/stream``, the game's event log as Server-Sent Events, fed by Redis
  pub/sub from the same store commit (``service.store.COMMIT_LUA``) that writes every event, so every kind
  of event (moves, and the clock's, lobby's and resignation's events) reaches open streams with no extra work.
* ``tickets``: short-lived, single-game stream tickets for browsers, whose ``EventSource`` cannot send an
  ``Authorization`` header.
"""
