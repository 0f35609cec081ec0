"""Marshmallow schemas for every request body and query string of the API (docs/api.md).

Each schema checks shape and types only (unknown fields are refused; integers must be JSON integers, not
``true``, ``3.0`` or ``"3"``); whether a rule set, an option, an engine or a parameter exists is asked of
the engine and AI registries by the routes, and their errors become the same 422 document.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

from service.fairplay import seeds
from service.live import clock
from service.problems import Problem, invalid

#: the largest seed a game or a suggestion accepts, and the largest any seed the server makes reaches: 2^53 - 1
#: is the largest integer a JSON number keeps exactly in every client (JavaScript's Number.MAX_SAFE_INTEGER)
MAX_SEED = seeds.MAX_SEED
#: most seats any rule set could want; the rule set's own range is checked after the schema
MAX_SEATS = 16
#: ``workers`` of an ismcts suggestion: how many jobs (different seeds) one search is split into
MAX_SUGGESTION_WORKERS = 16
MAX_NAME_LENGTH = 64
MAX_ID_LENGTH = 64
#: the longest stream ticket accepted in a query (a real one is about 60 characters)
MAX_TICKET_LENGTH = 512
#: the largest game version and event number a request may name (a game has at most a few thousand
#: events; 2^31 - 1 keeps the numbers in 32 bits and far below what Redis' LRANGE accepts)
MAX_COUNTER = 2**31 - 1
#: bounds of a rule option or engine parameter value in a request (every registered option and parameter
#: lies within; each has its own tighter range, checked by the registries: tests/test_limits.py)
MAX_SETTING_MAGNITUDE = 1_000_000
MAX_SETTING_STRING = 64
#: most options or parameters one request may carry
MAX_SETTINGS = 32
#: the largest event number a query accepts (a game has hundreds of events; this only bounds the input)
MAX_EVENT_NUMBER = MAX_COUNTER


class StrictInt(fields.Integer):
    """An integer that refuses booleans (JSON ``true`` is not 1)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class StrictBool(fields.Boolean):
    """JSON ``true`` or ``false`` only (not ``1``, ``"true"`` or ``"yes"``)."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class MoveField(fields.Field):
    """A move id string or a move object."""

    default_error_messages = {"invalid": "a move is a move id string or a move object"}  # noqa: RUF012

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, str):
            if not value or len(value) > 256:
                raise ValidationError("a move id is 1 to 256 characters")
            return value
        if isinstance(value, dict):
            problem = _move_object_problem(value)
            if problem:
                # the same document as the engine's own refusal of a move object (``errors.move`` holds
                # the detail), not marshmallow's "move: ..." wording
                raise invalid({"move": [problem]}, detail=problem)
            return value
        raise self.make_error("invalid")


#: a move object is small: at most this many fields, each a scalar or a list of at most this many scalars
MAX_MOVE_OBJECT_ITEMS = 16


def _move_scalar_problem(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        if -MAX_SETTING_MAGNITUDE <= value <= MAX_SETTING_MAGNITUDE:
            return None
        return f"a number in a move object lies between -{MAX_SETTING_MAGNITUDE} and {MAX_SETTING_MAGNITUDE}"
    if isinstance(value, str):
        return None if len(value) <= 256 else "a string in a move object is at most 256 characters"
    return "a move object's fields are strings, numbers, booleans, null, or lists of those"


def _move_object_problem(value: dict[str, Any]) -> str | None:
    """Why the move object ``value`` is out of the bounds openapi.yaml gives it (``MoveObject``), or None."""
    if len(value) > MAX_MOVE_OBJECT_ITEMS:
        return f"a move object has at most {MAX_MOVE_OBJECT_ITEMS} fields"
    for name, item in value.items():
        if isinstance(item, list):
            if len(item) > MAX_MOVE_OBJECT_ITEMS:
                return f"move field {name[:64]!r}: a list in a move object has at most {MAX_MOVE_OBJECT_ITEMS} items"
            problem = next((p for p in map(_move_scalar_problem, item) if p), None)
        else:
            problem = _move_scalar_problem(item)
        if problem:
            return f"move field {name[:64]!r}: {problem}"
    return None


class SettingValue(fields.Field):
    """A rule option or engine parameter value: a boolean, a bounded number or a short string."""

    default_error_messages = {  # noqa: RUF012
        "invalid": "a setting is a boolean, a number or a string",
        "range": f"a number setting lies between -{MAX_SETTING_MAGNITUDE} and {MAX_SETTING_MAGNITUDE}",
        "length": f"a string setting is at most {MAX_SETTING_STRING} characters",
    }

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            if not -MAX_SETTING_MAGNITUDE <= value <= MAX_SETTING_MAGNITUDE:
                raise self.make_error("range")
            return value
        if isinstance(value, str):
            if len(value) > MAX_SETTING_STRING:
                raise self.make_error("length")
            return value
        raise self.make_error("invalid")


def settings_field(**kwargs: Any) -> fields.Dict:
    """``options`` / ``params``: at most :data:`MAX_SETTINGS` names, each value a :class:`SettingValue`."""
    return fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=MAX_ID_LENGTH)),
                       values=SettingValue(), validate=validate.Length(max=MAX_SETTINGS), **kwargs)


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class SeatSchema(_Strict):
    kind = fields.String(required=True, validate=validate.OneOf(["human", "ai", "open"]))
    name = fields.String(validate=validate.Length(min=1, max=MAX_NAME_LENGTH))
    engine = fields.String(validate=validate.Length(min=1, max=MAX_ID_LENGTH))
    params = settings_field()

    @validates_schema
    def _engine_only_for_ai(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("kind") == "ai" and "engine" not in data:
            raise ValidationError("an AI seat needs an engine", "engine")
        if data.get("kind") in ("human", "open") and ("engine" in data or "params" in data):
            raise ValidationError(f"a {data['kind']} seat has no engine or params", "engine")


class ClockSchema(_Strict):
    """Fischer time control of the human seats: bounded, out of range is a 422."""

    initial_ms = StrictInt(required=True, validate=validate.Range(min=clock.MIN_INITIAL_MS,
                                                                  max=clock.MAX_INITIAL_MS))
    increment_ms = StrictInt(load_default=0, validate=validate.Range(min=0, max=clock.MAX_INCREMENT_MS))
    on_timeout = fields.String(load_default="move", validate=validate.OneOf(clock.ON_TIMEOUT))


class CreateGameSchema(_Strict):
    rules = fields.String(required=True, validate=validate.Length(min=1, max=MAX_ID_LENGTH))
    options = settings_field(load_default=dict)
    seed = StrictInt(validate=validate.Range(min=0, max=MAX_SEED))
    #: deal from ``seed`` exactly as given even with human seats (service.fairplay.seeds)
    public_seed = StrictBool(load_default=False)
    seats = fields.List(fields.Nested(SeatSchema), required=True,
                        validate=validate.Length(min=1, max=MAX_SEATS))
    clock = fields.Nested(ClockSchema, load_default=None, allow_none=True)


class JoinSchema(_Strict):
    name = fields.String(validate=validate.Length(min=1, max=MAX_NAME_LENGTH))


#: games per page of the lobby
MAX_LOBBY_LIMIT = 50


class LobbyQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    status = fields.String(load_default="open", validate=validate.OneOf(["open"]))
    rules = fields.String(validate=validate.Length(min=1, max=MAX_ID_LENGTH))
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_LOBBY_LIMIT))
    cursor = fields.String(validate=validate.Regexp(r"^[0-9]{1,16}\.[0-9a-f]{1,32}$"))


class MoveSchema(_Strict):
    move = MoveField(required=True)
    version = StrictInt(validate=validate.Range(min=0, max=MAX_COUNTER))


class SuggestionSchema(_Strict):
    engine = fields.String(load_default="ismcts", validate=validate.Length(min=1, max=MAX_ID_LENGTH))
    params = settings_field(load_default=dict)
    workers = StrictInt(load_default=1, validate=validate.Range(min=1, max=MAX_SUGGESTION_WORKERS))
    seed = StrictInt(validate=validate.Range(min=0, max=MAX_SEED))
    version = StrictInt(validate=validate.Range(min=0, max=MAX_COUNTER))


class EventsQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_EVENT_NUMBER))


class StreamQuerySchema(EventsQuerySchema):
    ticket = fields.String(validate=validate.Length(min=1, max=MAX_TICKET_LENGTH))
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_COUNTER))
#: the largest event number a query accepts (a game has hundreds of events; this only bounds the input)
MAX_EVENT_NUMBER = MAX_COUNTER


CREATE_GAME = CreateGameSchema()
MOVE = MoveSchema()
SUGGESTION = SuggestionSchema()
EVENTS_QUERY = EventsQuerySchema()
STREAM_QUERY = StreamQuerySchema()
JOIN = JoinSchema()
LOBBY_QUERY = LobbyQuerySchema()


def load(schema: Schema, data: Any) -> dict[str, Any]:
    """``schema.load(data)`` or a 422 problem naming every bad field."""
    if not isinstance(data, dict):
        raise Problem(422, "the request body must be a JSON object", errors={"_schema": ["not an object"]})
    try:
        out = schema.load(data)
    except ValidationError as e:
        messages = e.messages if isinstance(e.messages, dict) else {"_schema": e.messages}
        raise invalid(messages) from None
    assert isinstance(out, dict)
    return out
