"""`directme run`'s input side: open the INPUT as frames (a simulator episode, a video, an image or RGB-D
folder, an Aria recording), the agent's configuration for it, and the check that its frames carry what the
perception backend takes from them."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Optional

from ..errors import InvalidInputError
from .run_questions import Ask

@dataclass
class Source:
    frames: Iterable[Any]
    total: Optional[int]
    kind: str
    episode: Any = None
    questions: tuple[Ask, ...] = ()
    up_world: Any = None
    no_geometry: str = ""  # "the frames of X (...)" when no frame of this source carries depth or a pose
    aria: Any = None  # the AriaVrsReader of an Aria recording (its poses and ground truth decide what runs)


def open_source(path: str, fps: Optional[float], trajectory: Optional[str] = None,
                skip_corrupt: bool = False, source_fps: Optional[float] = None) -> Source:
    """The frames of ``path`` (``source_fps``: the recording rate of a 7-Scenes or image folder, which has no
    timestamps; refused for other inputs)."""
    p = Path(path)
    if source_fps is not None:
        from ..readers.aria_folder import is_aria_folder

        if not p.is_dir() or is_aria_folder(p) or (p / "rgb.txt").exists() or (p / "episode.json").exists():
            raise InvalidInputError(f"--source-fps: {path} carries its own timestamps; the flag is for 7-Scenes and "
                                    "image folders (no timestamps in those layouts)")
    if p.is_dir() and (p / "episode.json").is_file():
        from ..sim import load_episode

        ep = load_episode(p)
        asks = tuple(Ask(q.text, q.t_s, q.options, q.answer) for q in ep.questions)
        return Source(ep.frames(), ep.n_frames, "simulator episode", ep, asks, ep.up_world)
    kwargs: dict[str, Any] = {"trajectory": trajectory} if trajectory else {}
    from ..readers import VIDEO_EXTS, open_reader
    from ..readers.aria import AriaVrsReader
    from ..readers.images import ImageFolderReader
    from ..readers.video import OnCorrupt, VideoReader

    if skip_corrupt and p.suffix.lower() in VIDEO_EXTS:
        kwargs["on_corrupt"] = OnCorrupt.SKIP
    if source_fps is not None:
        kwargs["source_fps"] = source_fps
    reader = open_reader(p, fps=fps, **kwargs)
    plain = {VideoReader: "a video file", ImageFolderReader: "an image folder"}.get(type(reader))
    aria = reader if isinstance(reader, AriaVrsReader) else None
    return Source(reader, _estimate_total(reader), type(reader).__name__,
                  up_world=aria.up_world if aria is not None else None,
                  no_geometry=f"the frames of {path} ({plain})" if plain else "", aria=aria)


def _estimate_total(reader: Any) -> Optional[int]:
    """Frames the reader will yield, when it can tell cheaply (for the progress bar's ETA): its length,
    else its ``estimated_frames()`` (every directme reader: from file counts, timestamps or headers)."""
    if hasattr(reader, "__len__"):
        return len(reader)
    estimate = getattr(reader, "estimated_frames", None)
    return estimate() if callable(estimate) else None


def configure(args: argparse.Namespace, src: Optional[Source]):
    from ..config import AgentConfig

    cfg = AgentConfig.from_file(args.config) if args.config else AgentConfig()
    if src is not None and src.episode is not None and cfg.perception.backend == "given":
        cfg = replace(cfg, perception=replace(cfg.perception, backend="oracle"))
    if src is not None and src.aria is not None and cfg.perception.backend == "given":  # the recording's own data
        from ..perception.aria_gt import require_poses

        require_poses(src.aria, str(args.input))
        cfg = replace(cfg, perception=replace(cfg.perception, backend="aria_gt"))
    if src is not None and src.up_world is not None and cfg.memory.up_world is None:
        cfg = replace(cfg, memory=replace(cfg.memory, up_world=tuple(float(x) for x in src.up_world)))
    return cfg


class GeometryCheck:
    """Frames must carry the depth and camera pose that a 'given' perception takes from them. Frames
    with neither get `directme.bench.models.require_depth_backend`'s error, the one `directme eval`
    gives; each kind of frame (what it lacks) is checked once."""

    def __init__(self, spec: Any, backend: str, input_name: str) -> None:
        self.spec, self.backend, self.input_name = spec, backend, input_name
        self.seen: set[tuple[str, ...]] = set()

    def source(self, description: str) -> None:
        """Check a source whose frames carry no depth and no pose, before any model is built."""
        from ..bench.models import require_depth_backend

        require_depth_backend(self.spec, description)

    def __call__(self, frame: Any) -> None:
        lacks = tuple(n for n, v in (("depth", frame.depth_m), ("camera pose", frame.T_world_cam),
                                     ("intrinsics", frame.intrinsics)) if v is None)
        if not lacks or lacks in self.seen:
            return
        if "depth" in lacks and "camera pose" in lacks:
            self.source(f"the frames of {self.input_name}")
        elif self.backend == "given":
            from ..bench.models import PERCEPTION_EXAMPLE

            fixes = {"depth": f"a depth model that keeps given poses (--config {PERCEPTION_EXAMPLE})",
                     "camera pose": "a pose backend (the 'rgbd' preset: RGB-D odometry) or an input with poses",
                     "intrinsics": "an input with camera intrinsics"}
            raise InvalidInputError(
                f"frame {frame.index} ({frame.source or self.input_name}) has no {', '.join(lacks)}, but the "
                f"agent's perception backend is 'given', which takes them from the frames; give it "
                f"{' and '.join(fixes[n] for n in lacks)} (docs/backends.md)")
        self.seen.add(lacks)
