"""tilehouse's HTTP face: the Flask app factory, Redis store and RQ jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(config: Any = None) -> Flask:
    """The application factory (``service.app.create_app``); imported lazily so that ``service.cli`` and
    ``tilehouse bench engine`` do not pay for Flask."""
    from service.app import create_app as factory

    return factory(config)


__all__ = ["create_app"]
