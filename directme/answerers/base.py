"""The answerer interface: a question plus retrieved ego-frame context in, an Answer out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Protocol, Sequence, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Evidence:
    """One memory item an answer used: a node id, the times it was seen, keyframe times."""

    node_id: str
    label: str = ""
    times_s: tuple[float, ...] = ()
    keyframe_times_s: tuple[float, ...] = ()
    detail: str = ""


@dataclass(frozen=True, eq=False)
class Keyframe:
    """An image from memory (observed at or before the question time) for an MLLM."""

    t_s: float
    frame_index: int
    rgb: np.ndarray
    caption: str = ""


@dataclass(frozen=True, eq=False)
class QueryContext:
    """What the query module hands an answerer: the parsed intent, the memory snapshot,
    the ego-frame subgraph rendered as text, structured facts, and keyframes."""

    question: str
    t_s: float
    options: tuple[str, ...]
    intent: Any  # directme.query.intent.Intent
    snapshot: Any  # directme.memory.snapshot.MemorySnapshot
    subgraph_text: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    keyframes: tuple[Keyframe, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    hint: Optional["Answer"] = None  # e.g. the geometric answer given to an MLLM as a hint


@dataclass(frozen=True)
class Answer:
    """An answer at time ``t_s``. ``letter`` for multiple choice, ``text`` always.

    ``option_scores`` maps letters to probabilities that sum to 1 when options were given.
    ``flags`` mark special cases: "no_evidence", "unparsed", "not_understood", "empty_memory",
    "before_first_frame", "options_mismatch", "silent" (streaming: not answering yet);
    MLLM answerers add "no_probs" (the backend gave no probabilities: confidence is nominal) and
    "backend_error" (server down, too slow or malformed reply: no answer, confidence 0); the
    policy answerer adds "mllm_failed" (its MLLM failed: the geometric answer stands).
    """

    question: str
    t_s: float
    text: str
    letter: Optional[str] = None
    confidence: float = 0.0
    option_scores: Optional[Mapping[str, float]] = None
    evidence: tuple[Evidence, ...] = ()
    subgraph_text: str = ""
    answerer: str = ""
    flags: tuple[str, ...] = ()
    raw_output: str = ""
    latency_s: float = 0.0

    @property
    def entropy(self) -> Optional[float]:
        if not self.option_scores:
            return None
        p = np.asarray([v for v in self.option_scores.values() if v > 0], dtype=np.float64)
        return float(-(p * np.log(p)).sum())


@runtime_checkable
class Answerer(Protocol):
    """Turns a QueryContext into an Answer."""

    name: str

    def answer(self, ctx: QueryContext) -> Answer: ...

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]: ...
