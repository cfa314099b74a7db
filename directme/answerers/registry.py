"""Answerer names (used in configs and the CLI) -> factories. Each backend module is imported only
when its name is chosen, so a missing heavy dependency matters only for that backend."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, Optional

from ..errors import InvalidInputError
from .base import Answerer

# name -> (module, factory function taking the options mapping)
_BUILTIN = {
    "geometric": ("directme.answerers.geometric", "build"),
    "transformers": ("directme.answerers.transformers_vl", "build"),
    "openai": ("directme.answerers.openai_api", "build"),
    "policy": ("directme.answerers.policy", "build"),
}
_CUSTOM: dict[str, Callable[[Mapping[str, Any]], Answerer]] = {}


def register_answerer(name: str, factory: Callable[[Mapping[str, Any]], Answerer]) -> None:
    """Make ``name`` usable in ``AgentConfig.answerer.name`` (factory receives the options mapping)."""
    _CUSTOM[name] = factory


def available_answerers() -> tuple[str, ...]:
    return tuple(_BUILTIN) + tuple(n for n in _CUSTOM if n not in _BUILTIN)


def build_answerer(name: str, options: Optional[Mapping[str, Any]] = None) -> Answerer:
    """Build the answerer called ``name`` with ``options`` (see each backend's config)."""
    opts = dict(options or {})
    if name in _CUSTOM:
        return _CUSTOM[name](opts)
    if name not in _BUILTIN:
        raise InvalidInputError(f"unknown answerer {name!r}; choose one of {', '.join(available_answerers())}")
    module_name, attr = _BUILTIN[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise InvalidInputError(f"answerer {name!r} is not available in this installation ({module_name} missing)") \
            from exc
    return getattr(module, attr)(opts)
