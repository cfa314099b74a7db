"""Heading drift from the scene's structure: the dominant directions of walls and furniture sides.

Odometry heading wanders (a slow random walk for visual odometry); every later
step is then walked in a slightly wrong direction, so position drift grows with the heading error times
the distance walked, and "on your left" turns into "in front of you". Landmark relocalisation
(relocalize.py) fixes position from remembered objects; a heading from object centres measured over a
room's few metres is too noisy to correct a drift of a few degrees.

Indoors, most vertical surfaces - walls, cupboards, tables, doors - are parallel or perpendicular to
each other (the Manhattan-world assumption). Every frame's depth gives thousands of surface normals; the
horizontal directions of those on vertical surfaces, taken modulo 90 degrees (``exp(4i theta)``
averaged), give the structure's heading in the memory's world frame. The first frames fix a reference
(the memory frame is the input frame there: no drift yet); later, the structure appearing turned by
``e`` means the wearer's heading is off by ``e``, and the memory turns its correction by ``-e`` about
the vertical through the wearer (positions already walked are kept; the following steps go the right way).

Guards (settings in ``MemoryConfig.heading``): at most one frame per ``interval_s`` is measured (views
a moment apart share their bias); a frame counts only when its vertical-surface normals agree on one
direction (``min_strength``) and its offset from the reference is small (``max_deg``: a room built at
another angle, or a frame of clutter, is not drift). The reference is the wrap-safe median of the first
``ref_frames`` structured frames. Offsets feed a scalar Kalman filter (measurement noise ``noise_deg``,
random-walk process noise ``drift_deg_per_min``; innovations clipped at ``innovation_clip_sigmas``), and its
offset is applied once it is at least ``min_deg`` and known to better than that. In a scene without a dominant
structure nothing is ever applied. How it behaves on real RGB-D is in docs/memory.md.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional

import numpy as np

from ..._atomic import StateError
from ...geometry import Intrinsics, ground_basis
from ..component import FrameStep, State
from ..config import HeadingConfig, MemoryConfig
from .correction import Correction
from .vertical import surface_normals_w

log = logging.getLogger("directme.memory")


def _wrap_quarter(a: float) -> float:
    """Angle modulo 90 degrees, in [-pi/4, pi/4)."""
    return (a + math.pi / 4) % (math.pi / 2) - math.pi / 4


@dataclass(frozen=True)
class StructureHeading:
    """Dominant horizontal direction of a frame's vertical surfaces, modulo 90 degrees."""

    angle_rad: float  # in [-pi/4, pi/4), about ``up`` in the basis ground_basis(up)
    strength: float  # |mean of exp(4i theta)|: 1 all normals on one grid, ~0 no dominant direction
    n_normals: int


def dominant_heading(normals_w: np.ndarray, up: np.ndarray, min_normals: int = HeadingConfig.min_vertical_normals,
                     vertical_max_cos: float = HeadingConfig.vertical_max_cos) -> Optional[StructureHeading]:
    """The structure heading of ``normals_w`` (None when fewer than ``min_normals`` lie on vertical surfaces)."""
    nw = normals_w[np.abs(normals_w @ up) < vertical_max_cos]
    if len(nw) < min_normals:
        return None
    B = ground_basis(up)
    theta = np.arctan2(nw @ B[1], nw @ B[0])
    s = np.add.reduce(np.exp(4j * theta)) / len(theta)  # the mean, without its overhead
    return StructureHeading(_wrap_quarter(float(np.angle(s)) / 4), float(abs(s)), int(len(nw)))


@dataclass(eq=False)
class HeadingTracker:
    """The heading stage (pose/): reference structure heading, a scalar Kalman filter of the offset from it, and
    the log of the turns applied (one per memory)."""

    ref_rad: Optional[float] = None
    ref_samples: list = field(default_factory=list)  # structure angles of the first structured frames
    offset_rad: float = 0.0  # filtered heading offset of the current correction
    var_rad2: float = 0.0  # its variance (the filter runs once ``ref_rad`` is set)
    last_t_s: Optional[float] = None  # last structured frame measured
    filter_t_s: Optional[float] = None  # last frame the filter took
    corrections: list = field(default_factory=list)  # applied turns: (time, turn about up in degrees)
    cfg: MemoryConfig = field(default_factory=MemoryConfig, repr=False)

    key: ClassVar[str] = "heading"
    sections: ClassVar[tuple[str, ...]] = ("heading",)

    def update(self, step: FrameStep) -> Optional[Correction]:
        """The turn about the vertical through the wearer that this frame's structure shows is due, or None (the
        reference is taken from the frames the vertical was estimated on, when it settles)."""
        cfg = self.cfg
        if step.settled_frames is not None and cfg.heading.enabled:  # once, when the vertical settles
            self.reference_from(step.settled_frames[:-1], step.up, cfg)  # the last one: this frame, measured below
        if step.up is None or not cfg.heading.enabled:
            return None
        f, T = step.fp_input.frame, step.T_mem_cam
        yaw = self.observe(f.depth_m, f.intrinsics, T, step.t_s, step.up, cfg)
        if yaw is None:
            return None
        self.applied(yaw)
        self.corrections.append((step.t_s, math.degrees(yaw)))
        log.debug("t=%.3fs: heading corrected by %.2f deg from the scene structure", step.t_s, math.degrees(yaw))
        return Correction(yaw, T[:3, 3], np.zeros(3), step.up)

    def observe(self, depth_m: np.ndarray, intrinsics: Intrinsics, T_world_cam: np.ndarray, t_s: float,
                up: np.ndarray, cfg: MemoryConfig) -> Optional[float]:
        """Measure one frame (pose in the memory frame) about the vertical ``up`` (``VerticalEstimator``'s); returns
        the heading correction (radians about ``up``) to apply now, or None."""
        if self.last_t_s is not None and t_s - self.last_t_s < cfg.heading.interval_s:
            return None  # a frame's bias depends on what is in view: frames a moment apart repeat it
        normals = surface_normals_w(depth_m, intrinsics, T_world_cam[:3, :3], cfg.heading.grid_cols)
        return self.measure(normals, t_s, up, cfg)

    def reference_from(self, frames: list[tuple[float, np.ndarray]], up: np.ndarray, cfg: MemoryConfig) -> None:
        """Take the reference from frames seen before the vertical was known (``VerticalEstimator.take_frames``: their
        normals in the memory frame of their time, with no heading correction yet), as ``observe`` would have."""
        for t_s, normals in frames:
            if self.ref_rad is not None:
                break
            self.measure(np.asarray(normals, dtype=np.float64), t_s, up, cfg)

    def measure(self, normals: np.ndarray, t_s: float, up: np.ndarray, cfg: MemoryConfig) -> Optional[float]:
        """``observe`` on a frame's surface normals (memory frame) about ``up``."""
        if self.last_t_s is not None and t_s - self.last_t_s < cfg.heading.interval_s:
            return None
        if len(normals) == 0:
            return None
        h = dominant_heading(normals, up, cfg.heading.min_vertical_normals, cfg.heading.vertical_max_cos)
        if h is None or h.strength < cfg.heading.min_strength:
            return None
        self.last_t_s = t_s
        r = math.radians(cfg.heading.noise_deg) ** 2
        if self.ref_rad is None:
            self.ref_samples.append(h.angle_rad)
            if len(self.ref_samples) >= cfg.heading.ref_frames:  # median on the 4x circle (robust, wrap-safe)
                a = np.asarray(self.ref_samples)
                centre = float(np.angle(np.exp(4j * a).mean())) / 4
                self.ref_rad = _wrap_quarter(centre + float(np.median([_wrap_quarter(x - centre) for x in a])))
                # the memory frame is the input frame until now: no offset yet, known as well as the reference
                self.offset_rad, self.var_rad2, self.filter_t_s = 0.0, r / len(a), t_s
            return None
        off = _wrap_quarter(h.angle_rad - self.ref_rad)
        if abs(off) > math.radians(cfg.heading.max_deg):
            return None
        q = math.radians(cfg.heading.drift_deg_per_min) ** 2 / 60.0  # random-walk variance per second
        self.var_rad2 += q * max(t_s - self.filter_t_s, 0.0)
        s = math.sqrt(self.var_rad2 + r)
        clip = cfg.heading.innovation_clip_sigmas * s
        innov = min(max(off - self.offset_rad, -clip), clip)  # clipped: one wild frame moves it little
        k = self.var_rad2 / (self.var_rad2 + r)
        self.offset_rad += k * innov
        self.var_rad2 *= 1 - k
        self.filter_t_s = t_s
        if math.sqrt(self.var_rad2) > math.radians(cfg.heading.min_deg) or \
                abs(self.offset_rad) < math.radians(cfg.heading.min_deg):
            return None  # not sure enough yet, or too small to matter
        return -self.offset_rad

    def applied(self, yaw_rad: float) -> None:
        """A correction of ``yaw_rad`` was applied: the offset it removed is gone."""
        self.offset_rad += yaw_rad

    def to_state(self) -> State:
        return {"ref_rad": self.ref_rad,
                "ref_samples": list(self.ref_samples), "offset_rad": self.offset_rad,
                "var_rad2": self.var_rad2, "last_t_s": self.last_t_s,
                "filter_t_s": self.filter_t_s, "corrections": [list(c) for c in self.corrections]}, {}

    @classmethod
    def from_state(cls, cfg: MemoryConfig, state: State, loaded: Mapping[str, Any]) -> "HeadingTracker":
        d = state[0]
        try:
            return cls(d.get("ref_rad"), list(d.get("ref_samples", [])), float(d.get("offset_rad", 0.0)),
                       float(d.get("var_rad2", 0.0)), d.get("last_t_s"), d.get("filter_t_s"),
                       [(float(t), float(y)) for t, y in d.get("corrections", [])], cfg)
        except (TypeError, ValueError) as e:
            raise StateError("heading", f"is malformed ({type(e).__name__}: {e})") from None
