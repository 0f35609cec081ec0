"""Hardening of the service: request bodies bounded before they are read, AI jobs of a killed
worker noticed and re-run within seconds, and ``/metrics`` kept off the public API.

* :mod:`service.hardening.bodies` -- the body size limit, for ``Content-Length`` and chunked bodies alike.
* :mod:`service.hardening.recovery` -- the RQ worker class with job heartbeats and fast abandoned-job
  handling, and the game view's check for a play job whose worker died.
* :mod:`service.hardening.metrics_access` -- ``/metrics`` behind a bearer token or on a separate bind.
"""
