"""``Agent``: feed frames as they arrive, ask questions at any moment.

frames -> perception (configured backend) -> SpatialMemory.update -> at ask time:
memory.as_of(t) -> query (parse, retrieve, render in the ego frame, keyframes) -> answerer.
Answers are computed from the memory at the asked time, never cached by question text."""
from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from ._atomic import MANIFEST, RESTORE, check_destination, read_json, resolve, save_dir, verify
from ._sync import ReadWriteLock, exclusive, guarded, shared
from .answerers.registry import build_answerer
from .config import AgentConfig
from .errors import InvalidInputError, InvalidSaveError
from .memory import SpatialMemory
from .memory.snapshot import MemorySnapshot
from .perception import build_perception
from .perception.pipeline import STAGES, has_random_weights, resolve_config
from .query.context import build_context
from .query.embed import CachedEmbedder
from .query.vocab import Vocabulary
from .types import OPTION_LETTERS, Answer, Flag, Frame, FramePerception, as_text, check_options, check_timestamp

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
        # observe/flush/save/reset write, ask reads (docs/faq.md, Threads); components are built once
        self._rwlock = ReadWriteLock()
        self._components_lock = threading.RLock()
        self._embedder = CachedEmbedder(self.config.query.embedder, question_encoder=self.config.query.question_encoder)
        self.reset()

    @classmethod
    def from_config(cls, path_or_dict: Union[str, Path, Mapping[str, Any], AgentConfig], **kwargs) -> "Agent":
        if isinstance(path_or_dict, (str, Path)):
            return cls(AgentConfig.from_file(path_or_dict), **kwargs)
        return cls(path_or_dict, **kwargs)

    def __getstate__(self) -> dict:  # copy / pickle: the locks are not copied, a copy gets its own
        return {k: v for k, v in self.__dict__.items() if k not in ("_rwlock", "_components_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._rwlock, self._components_lock = ReadWriteLock(), threading.RLock()

    # ------------------------------------------------------------------ components
    @property
    @guarded("_components_lock")
    def perception(self):
        if self._perception is None:
            self._perception = build_perception(self.config.perception, self.episode)
        return self._perception

    @property
    @guarded("_components_lock")
    def answerer(self):
        if self._answerer is None:
            opts = dict(self.config.answerer.options)
            self._answerer = build_answerer(self.config.answerer.name, opts)
            if _random_parts(self._answerer):
                log.warning("the answerer %r has random weights: every answer is meaningless (flagged "
                            "'random_weights')", self.config.answerer.name)
        return self._answerer

    @property
    def random_weights(self) -> tuple[str, ...]:
        """The components running with random weights (``weights: random`` in the config, or a built backend
        saying so, such as the tiny test MLLMs): every answer then carries ``Flag.RANDOM_WEIGHTS``. The config
        counts even before (or without) building: a loaded memory was made by the perception it names."""
        parts = _configured_random(self.config) + _random_parts(self._perception) + _random_parts(self._answerer)
        return tuple(dict.fromkeys(parts))

    @exclusive
    def reset(self) -> None:
        """Forget everything observed (configuration and backends are kept)."""
        self.memory = SpatialMemory(self.config.memory)
        self._vocab = Vocabulary()
        self._first_t: Optional[float] = None
        self._last_t: Optional[float] = None  # latest time integrated into memory
        self._last_input_t: Optional[float] = None  # latest frame time given to observe()
        self._scale_known = True  # every frame in memory came in metres (FramePerception.metric)
        if self._perception is not None:
            self._perception.reset()

    # ------------------------------------------------------------------ streaming input
    @exclusive
    def observe(self, frame: Frame) -> int:
        """Feed one frame (in time order); returns how many frames reached memory."""
        if not isinstance(frame, Frame):
            raise InvalidInputError(f"observe() takes a directme.Frame, got {type(frame).__name__}")
        if self._last_input_t is not None and frame.t_s < self._last_input_t - _T_TOL_S:
            raise InvalidInputError(f"frame {frame.index} at t={frame.t_s} s arrives after t={self._last_input_t} s: "
                                    "frames must be given in time order")
        # Nothing is recorded (the input clock included) until the frame and what perception made of it
        # passed every check: a rejected frame leaves the agent as it was.
        perceived = list(self.perception.process(frame))
        if len(perceived) > 1:  # all or nothing (one alone is checked by memory.update before it changes anything)
            latest, dim = self.memory.latest_t_s, None
            for fp in perceived:
                dim = self.memory.check(fp, latest, dim)
                latest = fp.t_s
        n = sum(self._integrate(fp) for fp in perceived)
        self._last_input_t = frame.t_s if self._last_input_t is None else max(self._last_input_t, frame.t_s)
        return n

    def observe_many(self, frames: Iterable[Frame]) -> int:
        return sum(self.observe(f) for f in frames)

    @exclusive
    def flush(self) -> int:
        """Push frames still buffered by the perception backend into memory (end of a stream)."""
        return sum(self._integrate(fp) for fp in self.perception.flush())

    @exclusive
    def observe_perception(self, fp: FramePerception) -> int:
        """Feed a pre-computed FramePerception (bypasses the configured perception)."""
        if not isinstance(fp, FramePerception):
            raise InvalidInputError(f"observe_perception() takes a FramePerception, got {type(fp).__name__}")
        n = self._integrate(fp)  # memory.update checks everything before it changes anything
        if self._last_input_t is None or fp.t_s > self._last_input_t:
            self._last_input_t = fp.t_s
        return n

    def _integrate(self, fp: FramePerception) -> int:
        try:
            self.memory.update(fp)  # checks everything the frame carries before it changes anything
        except BaseException:  # should an update fail half-way all the same (a bug), the agent's clock follows
            ego_t = self.memory.ego.t.view()  # the memory's frame log, so that a save of it loads again
            if len(ego_t):
                self._first_t, self._last_t = float(ego_t[0]), float(ego_t[-1])
                self._last_input_t = max(self._last_input_t or self._last_t, self._last_t)
            raise
        self._scale_known = self._scale_known and fp.metric
        self._first_t = fp.t_s if self._first_t is None else self._first_t
        self._last_t = fp.t_s if self._last_t is None else max(self._last_t, fp.t_s)
        return 1

    @property
    def scale_known(self) -> bool:
        """Whether memory is in metres: False once a frame came up to an unknown scale (e.g. DA3 without
        metric evidence); answers stating or using lengths then carry ``Flag.UNKNOWN_SCALE``."""
        return self._scale_known

    @property
    def latest_t(self) -> Optional[float]:
        """Latest stream time in memory (None before the first frame)."""
        return self._last_t

    # ------------------------------------------------------------------ questions
    @shared
    def ask(self, question: str, t: Optional[float] = None, options: Optional[Sequence[str]] = None) -> Answer:
        """Answer ``question`` at stream time ``t`` (default: the latest observed time) from memory <= t."""
        question = as_text(question, "question")
        opts = check_options(options)  # a str or a dict is refused, never split into characters or keys
        latest = self._last_t if self._last_t is not None else self._last_input_t
        if t is None:
            t = latest if latest is not None else 0.0
        t = check_timestamp(t, "question time", max_s=np.inf)
        if latest is not None and t > max(latest, self._last_input_t or latest) + _T_TOL_S:
            raise InvalidInputError(f"cannot answer at t={t:.3f} s: the stream has only been observed up to "
                                    f"t={latest:.3f} s (questions about the future are not answerable)")
        if self._first_t is None or t < self._first_t:
            flag = Flag.EMPTY_MEMORY if self._first_t is None else Flag.BEFORE_FIRST_FRAME
            answer = self._no_memory_answer(question, t, opts, flag)
        else:
            answer = self._answer(question, opts, self.memory.as_of(t))
        if self.random_weights and Flag.RANDOM_WEIGHTS not in answer.flags:
            answer = replace(answer, flags=answer.flags + (Flag.RANDOM_WEIGHTS,))
        return answer

    def _answer(self, question: str, opts: tuple[str, ...], snapshot: MemorySnapshot) -> Answer:
        q = self.config.query
        wants_images = q.load_keyframe_images or self.config.answerer.name != "geometric"
        loader = getattr(self.memory, "keyframe_image", None) if wants_images else None
        ctx = build_context(question, opts, snapshot, self._vocab, self._embedder, reach_m=q.reach_m,
                            max_keyframes=q.max_keyframes, just_now_s=q.just_now_s, image_loader=loader,
                            parser=q.parser, rooms=q.rooms)
        answer = self.answerer.answer(ctx)
        if answer.intent is None:  # the parse it answers, for what reads the answer (a picture draws it)
            answer = replace(answer, intent=ctx.intent)
        if not self._scale_known:
            answer = flag_unknown_scale(answer, ctx.intent.kind if ctx.intent is not None else "")
        empty = len(snapshot.ego) == 0 and not snapshot.objects and not snapshot.places
        if empty and Flag.EMPTY_MEMORY not in answer.flags:
            answer = replace(answer, flags=answer.flags + (Flag.EMPTY_MEMORY,), confidence=min(answer.confidence, 0.1))
        return answer

    def _no_memory_answer(self, question: str, t: float, opts: tuple[str, ...], flag: Flag) -> Answer:
        letters = OPTION_LETTERS[:len(opts)]
        scores = {c: 1.0 / len(opts) for c in letters} if opts else None
        where = "nothing has been observed yet" if flag == Flag.EMPTY_MEMORY else \
            f"t={t:.1f} s is before the first frame (t={self._first_t:.1f} s)"
        return Answer(question=question, t_s=t, text=f"I cannot tell: {where}.", letter=None, confidence=0.0,
                      option_scores=scores, answerer="agent", flags=(flag, Flag.NO_EVIDENCE, Flag.ABSTAINED))

    # ------------------------------------------------------------------ persistence
    @exclusive
    def save(self, directory: Union[str, Path]) -> Path:
        """Write the memory and the agent state to ``directory`` (its parents are created if needed).

        Crash-safe: written into a sibling directory, sealed with ``manifest.json`` (size and sha256 of each
        file) and renamed into place, so an earlier save there stays whole until the new one is complete.
        ``directory`` must be new, empty or an earlier directme save (docs/faq.md, Saved agents and memories)."""
        state = {"format": AGENT_FORMAT, "config": self.config.to_dict(), "first_t": self._first_t,
                 "last_t": self._last_t, "last_input_t": self._last_input_t, "scale_known": self._scale_known}
        text = json.dumps(state, indent=2, default=_jsonable)

        def write(tmp: Path) -> None:
            self.memory.save(tmp / "memory")
            (tmp / "agent.json").write_text(text, encoding="utf-8")

        return save_dir(directory, "agent", write, legacy=_SAVE_FILES)

    @classmethod
    def load(cls, directory: Union[str, Path], **kwargs) -> "Agent":
        """Restore an agent saved with ``save``; new frames continue the stream where it stopped. The checksums
        and the saved state's consistency are checked first: a damaged, incomplete or edited save raises
        ``directme.errors.InvalidSaveError`` naming the file and what to do."""
        d, state = _read_agent_state(directory)
        config = _saved_config(d / "agent.json", state)
        memory = SpatialMemory.load(d / "memory")
        times = _saved_times(d / "agent.json", state, memory, config)
        agent = cls(config, **kwargs)
        agent.memory = memory
        agent._first_t, agent._last_t, agent._last_input_t = times
        scale_known = state.get("scale_known", True)  # saves from before the flag: every frame was metric
        if not isinstance(scale_known, bool):
            raise InvalidSaveError(f"{d / 'agent.json'}: 'scale_known' must be true or false, got {scale_known!r:.40}; "
                                   "the save is damaged: save the agent again")
        agent._scale_known = scale_known
        return agent


# question kinds whose answers state or use lengths (distances, arm's reach, distances walked, moved objects)
SCALE_KINDS = frozenset({"distance", "reachability", "my_trajectory", "object_trajectory"})
_LENGTH = re.compile(r"\b\d+(?:\.\d+)?\s?(?:m|cm|mm|km|metres?|meters?|centimetres?|centimeters?)\b", re.I)


def flag_unknown_scale(answer: Answer, kind: str) -> Answer:
    """``answer`` flagged ``unknown_scale`` and saying so, when it states or uses a length."""
    if Flag.UNKNOWN_SCALE in answer.flags or (kind not in SCALE_KINDS and not _LENGTH.search(answer.text)):
        return answer
    note = " (Lengths are up to an unknown scale: the depth came without metric evidence.)"
    return replace(answer, text=answer.text + note, flags=answer.flags + (Flag.UNKNOWN_SCALE,))


def _configured_random(config: AgentConfig) -> tuple[str, ...]:
    """The perception stages that ``config`` builds with random weights (none for given / oracle input)."""
    try:
        stages = resolve_config(config.perception)
    except InvalidInputError:  # not a model pipeline ("given", "oracle", ...)
        return ()
    return tuple(s.value for s in STAGES if has_random_weights(stages.get(s)))


def _random_parts(component: Any) -> tuple[str, ...]:
    """What of ``component`` (a perception, an answerer, or a wrapper of either) has random weights: its
    ``random_weights``, those of what it wraps (``inner``: the run command's tap, ``mllm``: the policy)."""
    if component is None:
        return ()
    own = tuple(getattr(component, "random_weights", ()) or ())
    return own + _random_parts(getattr(component, "inner", None)) + _random_parts(getattr(component, "mllm", None))


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# ------------------------------------------------------------------ saves (Agent.save / Agent.load)
AGENT_FORMAT = "directme-agent/1"
_SAVE_FILES = ("agent.json", "memory")  # a save written before manifests and format versions


def check_save_destination(directory: Union[str, Path]) -> Path:
    """Refuse now a directory ``Agent.save`` would refuse (an empty path, a link, a file, a non-empty
    directory that is not a directme save), e.g. before streaming (``directme run --save``)."""
    return check_destination(directory, "agent", _SAVE_FILES)


def _read_agent_state(directory: Union[str, Path]) -> tuple[Path, dict]:
    """(the directory to read, agent.json) after checking the manifest; the recovery rule of _atomic.py."""
    if not isinstance(directory, (str, PathLike)) or not str(directory).strip():
        raise InvalidInputError(f"Agent.load() takes the directory of a saved agent, got {directory!r}")
    d = resolve(directory)
    state_file = d / "agent.json"
    sealed = (d / MANIFEST).exists() or (d / MANIFEST).is_symlink()
    if not sealed and not state_file.is_file():
        raise InvalidInputError(f"{d} is not a saved agent (no agent.json); save one with Agent.save(dir)")
    if sealed:
        verify(d, "agent", ("agent.json", "memory/manifest.json"))
    state = read_json(state_file, "agent's state")
    fmt = state.get("format")
    if fmt not in (None, AGENT_FORMAT) or (fmt is None and sealed):
        raise InvalidSaveError(f"{state_file}: format {fmt!r}, this version reads {AGENT_FORMAT!r}: load it with the "
                               "directme version that wrote it, or save it again from its source")
    if fmt is not None and not sealed:
        raise InvalidSaveError(f"{d / MANIFEST}: missing, but {state_file} says format {fmt!r}, which is always saved "
                               f"with one (the save is incomplete or was copied in part); {RESTORE}")
    return d, state


def _saved_config(path: Path, state: dict) -> AgentConfig:
    if "config" not in state:
        raise InvalidSaveError(f"{path}: no 'config' (edited or damaged); {RESTORE}")
    try:
        return AgentConfig.from_dict(state["config"])
    except (InvalidInputError, TypeError, ValueError, KeyError, AttributeError) as e:
        raise InvalidSaveError(f"{path}: its 'config' is not a valid agent config ({e}); {RESTORE}") from None


def _saved_times(path: Path, state: dict, memory: Any, config: AgentConfig) -> tuple:
    """first_t, last_t, last_input_t of agent.json, checked against the memory's ego log (the first and the
    latest frame in memory) and its config: an edited or mixed save is refused, not answered from."""
    def bad(problem: str) -> InvalidSaveError:
        return InvalidSaveError(f"{path}: {problem} - the save is inconsistent (edited, or files of two saves); "
                                f"{RESTORE}")

    def seconds(key: str) -> Optional[float]:
        v = state.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v)):
            raise bad(f"'{key}' must be a finite number of seconds or null, got {v!r}")
        return None if v is None else float(v)

    for key in ("first_t", "last_t"):
        if key not in state:
            raise bad(f"no '{key}'")
    first, last = seconds("first_t"), seconds("last_t")
    last_input = seconds("last_input_t") if "last_input_t" in state else last  # saves before it was kept
    ego_t = memory.ego.t.view()
    if not len(ego_t) and (first, last) != (None, None):
        raise bad(f"'first_t' {first} and 'last_t' {last} say frames were observed, but memory/ holds none")
    if len(ego_t) and (first is None or last is None or abs(first - float(ego_t[0])) > 1e-9
                       or abs(last - float(ego_t[-1])) > 1e-9):
        raise bad(f"'first_t' {first} and 'last_t' {last} do not match memory/'s frames, from t={float(ego_t[0])} "
                  f"to t={float(ego_t[-1])} s")
    if last is not None and (last_input is None or last_input < last - _T_TOL_S):
        raise bad(f"'last_input_t' {last_input} is before 'last_t' {last}")
    if memory.cfg != config.memory:
        raise bad("its 'memory' config differs from memory/memory.json's")
    return first, last, last_input
