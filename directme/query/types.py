"""What the query stage hands an answerer: the parsed question, the memory snapshot, the ego-frame
subgraph as text, typed facts, evidence and keyframes (answerers import this; query never imports them). ``Evidence`` is re-exported from directme.types."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..memory.snapshot import MemorySnapshot
from ..types import Answer, Evidence
from .ego import ROOMS, RoomConfig
from .intent import Intent
from .options import OptionMeaning
from .path import MetricPath
from .retrieval import Match
from .timeref import ResolvedTime


@dataclass(frozen=True, eq=False)
class Keyframe:
    """An image from memory (observed at or before the question time) for an MLLM."""

    t_s: float
    frame_index: int
    rgb: np.ndarray
    caption: str = ""


@dataclass(frozen=True, eq=False)
class Facts:
    """Structured results of the query stage that the geometric answerer reasons on."""

    matches: tuple[tuple[Match, ...], ...] = ()  # per target of the intent, best match first
    time: Optional[ResolvedTime] = None  # the asked time resolved against memory (None: not resolved)
    options: tuple[OptionMeaning, ...] = ()  # the meaning of each answer option
    reach_m: float = 1.0  # arm reach used for reachability
    rooms: RoomConfig = ROOMS  # how rooms are read from the scene tags: objects', the path's, entering / leaving (query.rooms)
    place_tags: tuple[str, ...] = ()  # scene tags known to memory
    metric_path: Optional[MetricPath] = None  # path questions: the wearer's path from the asked time to now


@dataclass(frozen=True, eq=False)
class QueryContext:
    """What the query module hands an answerer. ``intent`` and ``snapshot`` are None only in contexts
    built by hand for an MLLM answerer (tests, external callers with their own subgraph text)."""

    question: str
    t_s: float
    options: tuple[str, ...]
    intent: Optional[Intent]
    snapshot: Optional[MemorySnapshot]
    subgraph_text: str
    facts: Facts = field(default_factory=Facts)
    keyframes: tuple[Keyframe, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    hint: Optional[Answer] = None  # e.g. the geometric answer given to an MLLM as a hint
