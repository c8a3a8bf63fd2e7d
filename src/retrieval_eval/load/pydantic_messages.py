"""Turn pydantic's validation errors into one-line messages a dataset author can act on.

pydantic's own text ("Extra inputs are not permitted", a location tuple) is
written for programmers; people editing JSONL by hand need the field name,
what was wrong, and for a typo the field they probably meant.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

_MAX_SHOWN_INPUT = 60


def validation_error_messages(error: ValidationError, model: type[BaseModel]) -> list[str]:
    """One message per problem pydantic found, in the order it found them."""
    return [_describe(detail, model) for detail in error.errors(include_url=False)]


def describe_validation_error(error: ValidationError, model: type[BaseModel]) -> str:
    return "; ".join(validation_error_messages(error, model))


def _describe(detail: ErrorDetails, model: type[BaseModel]) -> str:
    location = detail["loc"]
    kind = detail["type"]
    field = _format_location(location)
    if kind == "missing":
        return f"missing required field {field!r}"
    if kind == "extra_forbidden":
        return _unknown_field_message(location, model)
    message = detail["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if not location:
        return message
    message = message[:1].lower() + message[1:]
    shown = _show_input(detail.get("input"))
    return f"field {field!r}: {message} (got {shown})"


def _unknown_field_message(location: tuple[int | str, ...], model: type[BaseModel]) -> str:
    name = str(location[-1])
    owner = _model_at(location[:-1], model)
    field = _format_location(location)
    if owner is None:
        return f"unknown field {field!r}"
    allowed = sorted(owner.model_fields)
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown field {field!r} (did you mean {close[0]!r}?)"
    return f"unknown field {field!r}; allowed fields are {', '.join(allowed)}"


def _model_at(location: tuple[int | str, ...], model: type[BaseModel]) -> type[BaseModel] | None:
    """The model that owns the field at ``location`` (for nested objects such as ``filters``)."""
    current: type[BaseModel] = model
    for part in location:
        if not isinstance(part, str) or part not in current.model_fields:
            return None
        nested = _model_in(current.model_fields[part].annotation)
        if nested is None:
            return None
        current = nested
    return current


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for member in typing.get_args(annotation):
            found = _model_in(member)
            if found is not None:
                return found
    return None


def _format_location(location: tuple[int | str, ...]) -> str:
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _show_input(value: Any) -> str:
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    if len(shown) > _MAX_SHOWN_INPUT:
        shown = shown[: _MAX_SHOWN_INPUT - 1] + "…"
    return shown
