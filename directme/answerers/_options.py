"""Build an answerer's frozen config dataclass from its ``options`` mapping, naming unknown keys."""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Mapping, TypeVar

from ..errors import InvalidInputError

T = TypeVar("T")


def options_to_config(cls: type[T], options: Mapping[str, Any], what: str) -> T:
    """``cls(**options)``, or InvalidInputError listing unknown and known keys for answerer ``what``."""
    if not isinstance(options, Mapping):
        raise InvalidInputError(f"{what} answerer options must be a mapping, got {type(options).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = set(options) - known
    if unknown:
        raise InvalidInputError(f"unknown {what} answerer options {sorted(unknown)}; known: {sorted(known)}")
    return cls(**options)
