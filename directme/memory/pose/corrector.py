"""The pose corrector: owns ``T_mem_input`` (input world frame -> memory world frame) and changes it from past
evidence only, by its stages in a fixed order (``STAGES``), each returning its correction of the frame's pose:

1. vertical (vertical.py): the direction of gravity, estimated from the first seconds' surfaces;
2. heading (heading.py): a turn about the vertical when the walls' directions drift from their reference;
3. scan registration (scan.py): a share of the shift that lays the frame's depth on the structure seen before;
4. relocalisation (relocalize.py): the shift remembered landmarks agree on when the wearer comes back.

Each later stage sees the pose corrected by the earlier ones; after the last, the frame's scan points are
mapped under its final pose. Each stage is a memory component (component.py) with its own state."""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from ..._atomic import StateError
from ...geometry import Pose
from ...types import FramePerception
from ..component import FrameStep, State
from ..config import MemoryConfig
from .correction import Correction, with_pose
from .heading import HeadingTracker
from .relocalize import Relocaliser
from .scan import ScanMatcher
from .vertical import VerticalEstimator

_EYE4 = np.eye(4)
STAGES = ("vertical", "heading", "scan", "relocalisation")  # the order the stages correct a frame in


class PoseCorrector:
    """The correction its stages maintain, and the corrections recent frames were lifted with (one per memory)."""

    key = "pose"
    sections = ("gone",)  # gone.odometry_window_s: how long the corrections of recent frames are kept

    def __init__(self, cfg: MemoryConfig, vertical: Optional[VerticalEstimator] = None,
                 heading: Optional[HeadingTracker] = None, scan: Optional[ScanMatcher] = None,
                 relocalisation: Optional[Relocaliser] = None) -> None:
        self.cfg = cfg
        self.T_mem_input = np.eye(4)
        # the correction each recent frame was lifted with: (time, T_mem_input), oldest first, changes only
        self.recent: list[tuple[float, np.ndarray]] = []
        self.vertical = VerticalEstimator(cfg=cfg) if vertical is None else vertical
        self.heading = HeadingTracker(cfg=cfg) if heading is None else heading
        self.scan = ScanMatcher(cfg.scan) if scan is None else scan
        self.relocalisation = Relocaliser(cfg) if relocalisation is None else relocalisation

    @property
    def stages(self) -> tuple[Any, ...]:
        """The stages, in the order they correct a frame (``STAGES``)."""
        return tuple(getattr(self, name) for name in STAGES)

    @property
    def identity(self) -> bool:
        return bool((self.T_mem_input == _EYE4).all())  # np.array_equal of two 4x4 arrays

    def corrected(self, fp: FramePerception) -> FramePerception:
        """``fp`` with its pose in the memory frame (``fp`` itself while there is no correction)."""
        return fp if self.identity else with_pose(fp, Pose(self.T_mem_input @ fp.frame.T_world_cam.matrix))

    def update(self, step: FrameStep) -> None:
        """Walk the stages; apply each one's correction before the next; map the frame's scan points."""
        for stage in self.stages:
            corr = stage.update(step)
            if corr is not None:
                self.apply(corr, step)
        self.scan.finish(step)
        self.frame_done(step.t_s)

    def apply(self, corr: Correction, step: FrameStep) -> None:
        D = corr.matrix()
        self.T_mem_input = D @ self.T_mem_input
        if corr.moves_recent:  # the recent frames' objects moved with it: they count as corrected too
            self.recent = [(t_r, D @ C) for t_r, C in self.recent]
        step.moved()

    def frame_done(self, t_s: float) -> None:
        """Note the correction the frame at ``t_s`` was lifted with; forget those no object can need any more
        (older than ``gone.odometry_window_s``, but the one in effect then)."""
        if not self.recent or not np.array_equal(self.recent[-1][1], self.T_mem_input):
            self.recent.append((t_s, self.T_mem_input.copy()))
        cut = t_s - self.cfg.gone.odometry_window_s
        k = next((i for i, (t, _) in enumerate(self.recent) if t > cut), len(self.recent))
        del self.recent[:max(k - 1, 0)]

    def since_seen(self, last_seen_s: float, now_s: float) -> Optional[np.ndarray]:
        """For an object last seen at ``last_seen_s``: the transform (memory frame -> memory frame) that puts it
        where the input's own motion since then says it is in the current frame - the current correction times
        the inverse of the one its sighting was lifted with - when that sighting is at most
        ``gone.odometry_window_s`` old (over seconds the input's motion is better than a fresh correction, which
        jumps by its own error from frame to frame) and the correction changed since; else None."""
        if now_s - last_seen_s > self.cfg.gone.odometry_window_s or not self.recent:
            return None
        C_seen = next((C for t, C in reversed(self.recent) if t <= last_seen_s), None)
        if C_seen is None or C_seen is self.recent[-1][1]:
            return None
        return self.T_mem_input @ np.linalg.inv(C_seen)

    # ------------------------------------------------------------------ persistence (the stages save themselves)
    def to_state(self) -> State:
        return {"T_mem_input": self.T_mem_input.tolist(),
                "recent": [[t, C.tolist()] for t, C in self.recent]}, {}

    @classmethod
    def from_state(cls, cfg: MemoryConfig, state: State, loaded: Mapping[str, Any]) -> "PoseCorrector":
        """The corrector saved as ``state``, with the stages in ``loaded`` (loaded before it)."""
        meta = state[0]
        p = cls(cfg, *(loaded[name] for name in STAGES))
        p.T_mem_input = np.asarray(meta.get("T_mem_input", np.eye(4)), dtype=np.float64)
        if p.T_mem_input.shape != (4, 4) or not np.isfinite(p.T_mem_input).all() or \
                not np.allclose(p.T_mem_input[3], (0, 0, 0, 1)):
            raise StateError("T_mem_input", "must be a finite 4x4 rigid transform")
        p.recent = [(float(t), np.asarray(C, dtype=np.float64)) for t, C in meta.get("recent", [])]
        if any(C.shape != (4, 4) or not np.isfinite(C).all() for _, C in p.recent):
            raise StateError("recent_corrections", "must be finite 4x4 transforms")
        return p
