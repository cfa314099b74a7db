"""``Agent``: feed frames as they arrive, ask questions at any moment.

frames -> perception (configured backend) -> SpatialMemory.update -> at ask time:
memory.as_of(t) -> query (parse, retrieve, render in the ego frame, keyframes) -> answerer.
Answers are computed from the memory at the asked time, never cached by question text."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from .config import AgentConfig
from .errors import InvalidInputError
from .perception import build_perception
from .types import OPTION_LETTERS, Answer, Flag, Frame, FramePerception

log = logging.getLogger(__name__)
_T_TOL_S = 1e-6


class Agent:
    """Streaming spatial-memory assistant (see module docstring)."""

    def __init__(self, config: Union[AgentConfig, Mapping[str, Any], None] = None, *, perception: Any = None,
                 answerer: Any = None, episode: Any = None) -> None:
        if config is not None and not isinstance(config, AgentConfig):
            config = AgentConfig.from_dict(config)
        self.config = config or AgentConfig()
        self.episode = episode
        self._perception = perception
        self._answerer = answerer
        from .query.embed import CachedEmbedder

        self._embedder = CachedEmbedder(self.config.query.embedder)
        self.reset()

    @classmethod
    def from_config(cls, path_or_dict: Union[str, Path, Mapping[str, Any], AgentConfig], **kwargs) -> "Agent":
        if isinstance(path_or_dict, (str, Path)):
            return cls(AgentConfig.from_file(path_or_dict), **kwargs)
        return cls(path_or_dict, **kwargs)

    # ------------------------------------------------------------------ components
    @property
    def perception(self):
        if self._perception is None:
            self._perception = build_perception(self.config.perception, self.episode)
        return self._perception

    @property
    def answerer(self):
        if self._answerer is None:
            from .answerers.registry import build_answerer

            opts = dict(self.config.answerer.options)
            self._answerer = build_answerer(self.config.answerer.name, opts)
        return self._answerer

    def reset(self) -> None:
        """Forget everything observed (configuration and backends are kept)."""
        from .memory import SpatialMemory
        from .query.vocab import Vocabulary

        self.memory = SpatialMemory(self.config.memory)
        self._vocab = Vocabulary()
        self._first_t: Optional[float] = None
        self._last_t: Optional[float] = None  # latest time integrated into memory
        self._last_input_t: Optional[float] = None  # latest frame time given to observe()
        if self._perception is not None:
            self._perception.reset()

    # ------------------------------------------------------------------ streaming input
    def observe(self, frame: Frame) -> int:
        """Feed one frame (in time order); returns how many frames reached memory."""
        if not isinstance(frame, Frame):
            raise InvalidInputError(f"observe() takes a directme.Frame, got {type(frame).__name__}")
        if self._last_input_t is not None and frame.t_s < self._last_input_t - _T_TOL_S:
            raise InvalidInputError(f"frame {frame.index} at t={frame.t_s} s arrives after t={self._last_input_t} s: "
                                    "frames must be given in time order")
        self._last_input_t = frame.t_s
        return sum(self._integrate(fp) for fp in self.perception.process(frame))

    def observe_many(self, frames: Iterable[Frame]) -> int:
        return sum(self.observe(f) for f in frames)

    def flush(self) -> int:
        """Push frames still buffered by the perception backend into memory (end of a stream)."""
        return sum(self._integrate(fp) for fp in self.perception.flush())

    def observe_perception(self, fp: FramePerception) -> int:
        """Feed a pre-computed FramePerception (bypasses the configured perception)."""
        if not isinstance(fp, FramePerception):
            raise InvalidInputError(f"observe_perception() takes a FramePerception, got {type(fp).__name__}")
        if self._last_input_t is None or fp.t_s > self._last_input_t:
            self._last_input_t = fp.t_s
        return self._integrate(fp)

    def _integrate(self, fp: FramePerception) -> int:
        self.memory.update(fp)
        self._first_t = fp.t_s if self._first_t is None else self._first_t
        self._last_t = fp.t_s if self._last_t is None else max(self._last_t, fp.t_s)
        return 1

    @property
    def latest_t(self) -> Optional[float]:
        """Latest stream time in memory (None before the first frame)."""
        return self._last_t

    # ------------------------------------------------------------------ questions
    def ask(self, question: str, t: Optional[float] = None, options: Optional[Sequence[str]] = None) -> Answer:
        """Answer ``question`` at stream time ``t`` (default: the latest observed time) from memory <= t."""
        if not isinstance(question, str) or not question.strip():
            raise InvalidInputError(f"question must be a non-empty string, got {question!r}")
        opts = tuple(options or ())
        if len(opts) > len(OPTION_LETTERS) or not all(isinstance(o, str) for o in opts):
            raise InvalidInputError(f"options must be at most {len(OPTION_LETTERS)} strings, got {options!r}")
        latest = self._last_t if self._last_t is not None else self._last_input_t
        if t is None:
            t = latest if latest is not None else 0.0
        t = float(t)
        if not np.isfinite(t) or t < 0:
            raise InvalidInputError(f"question time must be a finite number of seconds >= 0, got {t}")
        if latest is not None and t > max(latest, self._last_input_t or latest) + _T_TOL_S:
            raise InvalidInputError(f"cannot answer at t={t:.3f} s: the stream has only been observed up to "
                                    f"t={latest:.3f} s (questions about the future are not answerable)")
        if self._first_t is None or t < self._first_t:
            flag = Flag.EMPTY_MEMORY if self._first_t is None else Flag.BEFORE_FIRST_FRAME
            return self._no_memory_answer(question, t, opts, flag)
        snapshot = self.memory.as_of(t)
        return self._answer(question, opts, snapshot)

    def _answer(self, question: str, opts: tuple[str, ...], snapshot) -> Answer:
        from .query.context import build_context

        q = self.config.query
        wants_images = q.load_keyframe_images or self.config.answerer.name != "geometric"
        loader = getattr(self.memory, "keyframe_image", None) if wants_images else None
        ctx = build_context(question, opts, snapshot, self._vocab, self._embedder, reach_m=q.reach_m,
                            max_keyframes=q.max_keyframes, just_now_s=q.just_now_s, image_loader=loader)
        answer = self.answerer.answer(ctx)
        if len(snapshot.ego) == 0 and not snapshot.objects and not snapshot.places and Flag.EMPTY_MEMORY not in answer.flags:
            from dataclasses import replace

            answer = replace(answer, flags=answer.flags + (Flag.EMPTY_MEMORY,), confidence=min(answer.confidence, 0.1))
        return answer

    def _no_memory_answer(self, question: str, t: float, opts: tuple[str, ...], flag: Flag) -> Answer:
        letters = OPTION_LETTERS[:len(opts)]
        scores = {c: 1.0 / len(opts) for c in letters} if opts else None
        where = "nothing has been observed yet" if flag == Flag.EMPTY_MEMORY else \
            f"t={t:.1f} s is before the first frame (t={self._first_t:.1f} s)"
        return Answer(question=question, t_s=t, text=f"I cannot tell: {where}.", letter=letters[0] if opts else None,
                      confidence=0.0, option_scores=scores, answerer="agent", flags=(flag, Flag.NO_EVIDENCE))

    # ------------------------------------------------------------------ persistence
    def save(self, directory: Union[str, Path]) -> Path:
        """Write the memory and the agent state to ``directory`` (created if needed)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self.memory.save(d / "memory")
        state = {"config": self.config.to_dict(), "first_t": self._first_t, "last_t": self._last_t,
                 "last_input_t": self._last_input_t}
        (d / "agent.json").write_text(json.dumps(state, indent=2, default=_jsonable), encoding="utf-8")
        return d

    @classmethod
    def load(cls, directory: Union[str, Path], **kwargs) -> "Agent":
        """Restore an agent saved with ``save``; new frames continue the stream where it stopped."""
        from .memory import SpatialMemory

        d = Path(directory)
        state_file = d / "agent.json"
        if not state_file.is_file():
            raise InvalidInputError(f"{d} is not a saved agent (no agent.json); save one with Agent.save(dir)")
        state = json.loads(state_file.read_text(encoding="utf-8"))
        agent = cls(AgentConfig.from_dict(state["config"]), **kwargs)
        agent.memory = SpatialMemory.load(d / "memory")
        agent._first_t, agent._last_t = state["first_t"], state["last_t"]
        agent._last_input_t = state.get("last_input_t", state["last_t"])
        return agent


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
