"""directme: a streaming spatial memory for AI assistants on wearable cameras.

``import directme`` is light (numpy only); heavy backends are imported when chosen.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (BackendError, CorruptInputError, DirectmeError, InvalidInputError, MissingDependencyError,
                     MissingWeightsError)
from .geometry import EgoFrame, Intrinsics, Pose
from .types import Frame, FramePerception, InstanceObservation, Question

__version__ = "0.1.0"

_LAZY = {
    "Agent": ("directme.agent", "Agent"),
    "AgentConfig": ("directme.config", "AgentConfig"),
    "Answer": ("directme.types", "Answer"),
}

if TYPE_CHECKING:  # pragma: no cover
    from .agent import Agent
    from .types import Answer
    from .config import AgentConfig


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'directme' has no attribute {name!r}")


__all__ = ["Agent", "AgentConfig", "Answer", "BackendError", "CorruptInputError", "DirectmeError", "EgoFrame", "Frame",
           "FramePerception", "InstanceObservation", "Intrinsics", "InvalidInputError",
           "MissingDependencyError", "MissingWeightsError", "Pose", "Question"]
