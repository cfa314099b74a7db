"""Synthetic egocentric world with exact ground truth (layouts, wearer, renderer, questions).

    from directme.sim import generate_episode, save_episode, load_episode, OraclePerception
    ep = generate_episode(seed=0, minutes=5.0)
    for frame in ep.frames(): ...          # lazily rendered directme.types.Frame
    ep.questions                            # tuple of directme.types.Question
    perception = OraclePerception(ep, noise="realistic", seed=0)   # = ep.oracle_perception("realistic", 0)

See docs/simulator.md for the world, the on-disk format and the question templates.
"""
from __future__ import annotations

from .episode import Episode, FrameGT, Layout, ObjectGT, RenderedFrame, Room, SimEvent
from .generate import generate_episode
from .io import load_episode, save_episode, to_ucsbench
from .oracle import NOISE_PRESETS, NoisePreset, OraclePerception
from .questions import SUBTASK_CATEGORY, SUBTASKS

__all__ = ["Episode", "FrameGT", "Layout", "ObjectGT", "RenderedFrame", "Room", "SimEvent", "generate_episode",
           "save_episode", "load_episode", "to_ucsbench", "SUBTASKS", "SUBTASK_CATEGORY", "OraclePerception",
           "NoisePreset", "NOISE_PRESETS"]
