"""The streaming episode runner: replays frames in time order, calls ``observe`` as time
advances, and fires each scheduled probe (a question, a re-ask, a poll) at its stream time.

Strictly causal by construction: a probe at time t runs after every frame with
``t_s <= t`` was observed and before any later frame is; asking for a time earlier than
the last observed frame is an error.
"""
from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import InvalidInputError
from ..types import Answer, Frame


@runtime_checkable
class ModelUnderTest(Protocol):
    """What a benchmark needs from the model: ``directme.Agent`` satisfies it."""

    def observe(self, frame: Frame) -> Any: ...

    def ask(self, question: str, t: Optional[float] = None, options: Optional[Sequence[str]] = None) -> Answer: ...


@dataclass(order=True)
class _Probe:
    t_s: float
    seq: int
    action: Callable[["StreamRunner", float], None] = field(compare=False)


@dataclass(frozen=True)
class Asked:
    """The answer to one question with the stream time it was asked at and the wall-clock
    latency of ``ask`` (what decision windows are checked against)."""

    answer: Answer
    t_s: float
    latency_s: float
    observed_until_s: Optional[float]


class StreamRunner:
    """Drives one model over one stream. Benchmarks schedule probes, then call :meth:`run`."""

    def __init__(self, model: ModelUnderTest, frames: Iterable[Frame], fps: Optional[float] = None):
        self.model = model
        self._frames = frames
        self._fps = fps
        self._heap: list[_Probe] = []
        self._seq = itertools.count()
        self.t_observed: Optional[float] = None
        self.frames_observed = 0
        self.stream_ended = False

    def schedule(self, t_s: float, action: Callable[["StreamRunner", float], None]) -> None:
        """Run ``action(runner, t_s)`` once the stream has reached ``t_s``."""
        if self.t_observed is not None and t_s < self.t_observed:
            raise InvalidInputError(f"cannot schedule a probe at {t_s:.3f}s: the stream is already at "
                                    f"{self.t_observed:.3f}s (that would not be causal)")
        heapq.heappush(self._heap, _Probe(float(t_s), next(self._seq), action))

    def ask(self, question: str, t_s: float, options: Optional[Sequence[str]] = None) -> Asked:
        """Ask at stream time ``t_s``; the model sees only frames up to now."""
        if self.t_observed is not None and t_s + 1e-9 < self.t_observed:
            raise InvalidInputError(f"question at {t_s:.3f}s asked after the stream reached {self.t_observed:.3f}s")
        t_arg = None if self.t_observed is None else min(float(t_s), self.t_observed)
        start = time.perf_counter()
        answer = self.model.ask(question, t=t_arg, options=list(options) if options else None)
        latency = time.perf_counter() - start
        if not isinstance(answer, Answer):
            raise InvalidInputError(f"{type(self.model).__name__}.ask returned {type(answer).__name__}; a model under "
                                    "test answers with a directme.types.Answer")
        return Asked(answer=answer, t_s=float(t_s), latency_s=latency, observed_until_s=self.t_observed)

    def run(self, end_s: Optional[float] = None, on_end: Optional[Callable[[], None]] = None) -> None:
        """Stream every frame, firing probes as time passes, then the probes left after the
        last frame (time keeps running without new frames). Probes later than ``end_s`` are dropped.
        ``on_end()`` runs once after the last frame, before those probes (e.g. to flush buffered perception)."""
        for frame in subsample(self._frames, self._fps):
            while self._heap and self._heap[0].t_s < frame.t_s:
                self._fire()
            self.model.observe(frame)
            self.t_observed = frame.t_s
            self.frames_observed += 1
        if on_end is not None:
            on_end()
        self.stream_ended = True
        while self._heap:
            if end_s is not None and self._heap[0].t_s > end_s:
                break
            self._fire()
        self._heap.clear()

    def _fire(self) -> None:
        probe = heapq.heappop(self._heap)
        probe.action(self, probe.t_s)


def subsample(frames: Iterable[Frame], fps: Optional[float]) -> Iterator[Frame]:
    """Keep at most ``fps`` frames per second of stream time; check time never runs backwards."""
    bucket = -1
    last_t = -1.0
    for frame in frames:
        if frame.t_s < last_t:
            raise InvalidInputError(f"frame {frame.index} ({frame.source}) at {frame.t_s:.3f}s comes after a "
                                    f"frame at {last_t:.3f}s: frames must be in time order")
        last_t = frame.t_s
        if not fps:
            yield frame
            continue
        b = int(np.floor(frame.t_s * fps + 1e-9))
        if b > bucket:
            bucket = b
            yield frame


# --- frame sources (picklable callables: episode -> frames) --------------------------------


@dataclass(frozen=True)
class BlankFrames:
    """Black frames at ``fps`` up to the episode's duration: annotation-only dry runs and tests. Each shows
    a flat black wall (constant depth), from a fixed camera pose with pinhole intrinsics, so the default
    agent ("given" perception) runs the protocol on them too: no object is seen, answers abstain."""

    fps: float = 1.0
    height: int = 16
    width: int = 16
    default_duration_s: float = 60.0
    hfov_deg: float = 60.0  # horizontal field of view of the blank camera
    wall_depth_m: float = 3.0  # depth of the black wall (the memory refuses frames with no valid depth)

    def __call__(self, episode: Any) -> Iterator[Frame]:
        from ..geometry import Intrinsics, Pose

        meta = getattr(episode, "meta", {}) or {}
        duration = getattr(episode, "duration_s", None) or meta.get("horizon_s") or self.default_duration_s
        rgb = np.zeros((self.height, self.width, 3), dtype=np.uint8)
        depth = np.full((self.height, self.width), self.wall_depth_m, dtype=np.float32)
        K = Intrinsics.from_fov(self.width, self.height, self.hfov_deg)
        n = int(np.floor(duration * self.fps + 1e-9)) + 1
        for i in range(n):
            yield Frame(t_s=i / self.fps, rgb=rgb, depth_m=depth, T_world_cam=Pose.identity(), intrinsics=K, index=i,
                        source=f"blank:{getattr(episode, 'episode_id', '')}")


@dataclass(frozen=True)
class VideoFrames:
    """Decoded frames of ``videos_dir / episode.video`` at ``fps`` (directme.readers); when
    ``videos_dir`` is a video file, that file (single-stream benchmarks such as TeleEgo)."""

    videos_dir: str
    fps: Optional[float] = 1.0
    suffixes: tuple[str, ...] = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v")

    def resolve(self, episode: Any) -> Path:
        root = Path(self.videos_dir)
        if root.is_file():
            return root
        ref = Path(str(episode.video))
        candidates = [ref] if ref.is_absolute() else [root / ref]
        candidates += [root / (ref.name + s) for s in self.suffixes] + [root / (str(ref) + s) for s in self.suffixes]
        for c in candidates:
            if c.is_file():
                return c
        hits = sorted(root.rglob(ref.name + "*")) if root.is_dir() else []
        hits = [h for h in hits if h.is_file() and h.suffix.lower() in self.suffixes]
        if hits:
            return hits[0]
        raise InvalidInputError(f"episode {episode.episode_id}: video {episode.video!r} not found under "
                                f"{root}; pass --videos DIR holding the benchmark's videos")

    def __call__(self, episode: Any) -> Iterable[Frame]:
        return read_video(self.resolve(episode), self.fps)


def read_video(path: Path, fps: Optional[float]) -> Iterable[Frame]:
    """Frames of a video file (or any input directme.readers opens) resampled to ``fps``."""
    from ..readers import open_reader

    return subsample(open_reader(path, fps=fps), fps)
