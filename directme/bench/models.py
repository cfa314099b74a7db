"""Which model a benchmark evaluates: a picklable spec built inside each worker, plus a
scripted baseline model (fixed answers, optional silence) used for pipeline checks."""
from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..errors import InvalidInputError
from ..types import OPTION_LETTERS, Answer, Evidence, Flag, Frame


@dataclass(frozen=True)
class ModelSpec:
    """``target`` is "agent" (directme.Agent built from ``config``: a dict or a YAML/JSON
    path), "scripted" (:class:`ScriptedModel` with ``kwargs``), or "module:attr" for any
    factory; ``build()`` runs in the worker so nothing heavy crosses process boundaries."""

    target: str = "agent"
    config: Any = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def build(self) -> Any:
        if self.target == "agent":
            from ..agent import Agent  # lazy: the Agent pulls in memory/query/perception

            if hasattr(Agent, "from_config") and self.config is not None:
                return Agent.from_config(self.config)
            return Agent(self.config) if self.config is not None else Agent()
        if self.target == "scripted":
            return ScriptedModel(**dict(self.kwargs))
        if ":" not in self.target:
            raise InvalidInputError(f"model target {self.target!r}: use 'agent', 'scripted' or 'module:attr'")
        module, attr = self.target.split(":", 1)
        factory = getattr(importlib.import_module(module), attr)
        return factory(self.config, **dict(self.kwargs)) if self.config is not None else factory(**dict(self.kwargs))


PERCEPTION_EXAMPLE = "perception-da3-gdino-sam2"  # a packaged config: `--config NAME` works from any folder
SMOKE_EXAMPLE = "smoke-random"  # the packaged smoke test (random weights, meaningless answers, no downloads)


def agent_config(spec: ModelSpec) -> Any:
    """The AgentConfig ``spec`` builds (None when the model is not the Agent); parsing it here
    reports a bad config file before any video is decoded."""
    if spec.target != "agent":
        return None
    from ..config import AgentConfig

    if spec.config is None or isinstance(spec.config, AgentConfig):
        return spec.config or AgentConfig()
    if isinstance(spec.config, (str, Path)):
        return AgentConfig.from_file(spec.config)
    return AgentConfig.from_dict(spec.config)


def require_depth_backend(spec: ModelSpec, source: str, hint: str = "") -> None:
    """Raise InvalidInputError when the Agent would read depth and pose from frames that carry
    none (``source`` says which: plain videos, black frames): its perception takes them "given"."""
    cfg = agent_config(spec)
    if cfg is None or cfg.perception.backend == "oracle":
        return
    backend = cfg.perception.backend
    if backend != "given":
        from ..perception.pipeline import resolve_config

        stage = resolve_config(cfg.perception).get("depth_pose") or {}
        if (stage if isinstance(stage, str) else stage.get("name")) != "given":
            return
    raise InvalidInputError(
        f"{source} carry no depth and no camera pose, but the agent's perception backend is {backend!r}"
        f"{' (the default)' if spec.config is None else ''}, which takes them from the frames. Give it a "
        f"depth model: --config {PERCEPTION_EXAMPLE} (Depth Anything 3 + Grounding DINO + SAM2, weights on "
        f"disk; docs/backends.md), or --config {SMOKE_EXAMPLE} to try the pipeline with random weights{hint}")


class ScriptedModel:
    """A model under test with scripted behaviour, for smoke tests and baselines.

    ``answers`` maps a question text (exact) to a letter or a text answer, or to a list of
    ``[t_from_s, answer]`` pairs (the answer changes over stream time); otherwise it
    answers ``default_letter`` when options are given (or a random letter with ``seed``),
    else ``default_text``. Questions in ``silent_until`` (text -> stream time) get a
    "silent" answer before that time. ``spans`` maps a query to ranked [start, end] spans
    returned as evidence. It records the latest frame time seen, for causality checks.
    """

    name = "scripted"

    def __init__(self, answers: Optional[Mapping[str, str]] = None, default_letter: str = "A",
                 default_text: str = "", silent_until: Optional[Mapping[str, float]] = None,
                 spans: Optional[Mapping[str, Sequence[Sequence[float]]]] = None, seed: Optional[int] = None,
                 scores: Optional[Mapping[str, Mapping[str, float]]] = None):
        self.answers = dict(answers or {})
        self.default_letter = default_letter
        self.default_text = default_text
        self.silent_until = dict(silent_until or {})
        self.spans = {k: [tuple(s) for s in v] for k, v in (spans or {}).items()}
        self.scores = dict(scores or {})
        self._rng = random.Random(seed) if seed is not None else None
        self.t_seen: Optional[float] = None
        self.n_frames = 0
        self.asked: list[tuple[str, Optional[float], Optional[float]]] = []

    def observe(self, frame: Frame) -> None:
        self.t_seen = frame.t_s
        self.n_frames += 1

    def ask(self, question: str, t: Optional[float] = None, options: Optional[Sequence[str]] = None) -> Answer:
        t_now = self.t_seen if t is None else t
        self.asked.append((question, t, self.t_seen))
        t_s = float(t_now or 0.0)
        if question in self.silent_until and t_s < self.silent_until[question]:
            return Answer(question=question, t_s=t_s, text="", flags=(Flag.SILENT,), answerer=self.name)
        letters = OPTION_LETTERS[: len(options or ())]
        evidence = tuple(Evidence(node_id=f"span{i}", times_s=(float(a), float(b)))
                         for i, (a, b) in enumerate(self.spans.get(question, ())))
        scripted = self._scripted(question, t_s)
        if letters:
            if scripted is not None:
                letter = scripted
            elif self._rng is not None:
                letter = self._rng.choice(letters)
            else:
                letter = self.default_letter
            letter_ok = len(letter) == 1 and letter in letters
            text = options[letters.index(letter)] if letter_ok else letter
            return Answer(question=question, t_s=t_s, text=text, letter=letter if letter_ok else None,
                          option_scores=self.scores.get(question), confidence=1.0, evidence=evidence,
                          answerer=self.name)
        return Answer(question=question, t_s=t_s, text=scripted if scripted is not None else self.default_text,
                      evidence=evidence, answerer=self.name)

    def _scripted(self, question: str, t_s: float) -> Optional[str]:
        value = self.answers.get(question)
        if value is None or isinstance(value, str):
            return value
        current = None
        for t_from, answer in value:
            if t_s >= float(t_from):
                current = answer
        return current
