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
random-walk process noise ``drift_deg_per_min``; innovations clipped at 3 sigma), and its offset is
applied once it is at least ``min_deg`` and known to better than that. In a scene without a dominant
structure nothing is ever applied. How it behaves on real RGB-D is in docs/memory.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..geometry import Intrinsics, ground_basis

from .config import HeadingConfig, MemoryConfig

UNIT_TOL = 1e-6  # a saved direction whose length is within this of 1 is a unit vector (rounding), loaded as is


def _wrap_quarter(a: float) -> float:
    """Angle modulo 90 degrees, in [-pi/4, pi/4)."""
    return (a + math.pi / 4) % (math.pi / 2) - math.pi / 4


def surface_normals_w(depth_m: np.ndarray, intrinsics: Intrinsics, R_world_cam: np.ndarray,
                      grid_cols: int = 64) -> np.ndarray:
    """(N, 3) unit surface normals (world frame) on a grid of about ``grid_cols`` columns of the depth map.

    Depth is box-smoothed over 3x3 grid cells first (per-pixel depth noise would swamp the normals);
    normals spanning a depth jump (an occluding edge) or an invalid pixel are dropped."""
    from scipy import ndimage

    h, w = depth_m.shape
    s = max(1, w // grid_cols)
    d = np.asarray(depth_m[::s, ::s], dtype=np.float64)
    valid = np.isfinite(d) & (d > 0)
    d0 = np.where(valid, d, 0.0)
    num = ndimage.uniform_filter(d0, 3, mode="nearest")
    den = ndimage.uniform_filter(valid.astype(np.float64), 3, mode="nearest")
    z = np.where(den > 0.99, num / np.maximum(den, 1e-9), np.nan)  # only where the whole 3x3 is valid
    gh, gw = z.shape
    if gh < 5 or gw < 5:
        return np.zeros((0, 3))
    x = (np.arange(gw) * s - intrinsics.cx) / intrinsics.fx * z  # camera-frame grid points (x, y, z)
    y = (np.arange(gh)[:, None] * s - intrinsics.cy) / intrinsics.fy * z
    P = (x, y, z)
    du = [c[2:-2, 4:] - c[2:-2, :-4] for c in P]  # tangents over +-2 grid cells
    dv = [c[4:, 2:-2] - c[:-4, 2:-2] for c in P]
    n = [(du[1] * dv[2] - du[2] * dv[1]).ravel(), (du[2] * dv[0] - du[0] * dv[2]).ravel(),
         (du[0] * dv[1] - du[1] * dv[0]).ravel()]  # du x dv
    sq = n[0] * n[0] + n[1] * n[1] + n[2] * n[2]
    jump = np.maximum(np.abs(du[2]), np.abs(dv[2])).ravel()
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(sq) & (sq > 0) & (jump < 0.5 * z[2:-2, 2:-2].ravel())  # NaN (an invalid cell) fails
    norm = np.sqrt(sq[ok])
    n = np.stack([c[ok] / norm for c in n], axis=1)
    return n @ np.asarray(R_world_cam, dtype=np.float64).T


def estimate_up(normals_w: np.ndarray, hint: np.ndarray, max_cone_deg: float = HeadingConfig.up_refine_max_deg) -> np.ndarray:
    """The vertical from many frames' surface normals: the direction most parallel to the horizontal surfaces'
    normals (floor, tables, ceiling: within a cone about the estimate) and most perpendicular to the vertical
    ones' (walls, cupboard fronts: within the same angle of the horizontal) - the top eigenvector of the
    difference of their scatter matrices - in cones narrowed step by step from ``hint``. Walls alone leave it
    free to tip about their normal, so horizontal surfaces are needed: with fewer than 50 the hint is kept."""
    up = np.asarray(hint, dtype=np.float64) / np.linalg.norm(hint)
    N = np.asarray(normals_w, dtype=np.float64)
    for cone in (max_cone_deg, 15.0, 8.0, 4.0):
        c = N @ up
        flat = np.abs(c) > math.cos(math.radians(cone))
        wall = np.abs(c) < math.sin(math.radians(cone))
        if flat.sum() < 50:
            break
        M = N[flat].T @ N[flat] / flat.sum()
        if wall.sum() >= 50:
            M = M - N[wall].T @ N[wall] / wall.sum()
        v = np.linalg.eigh(M)[1][:, -1]
        up = v if v @ up >= 0 else -v
    return up


@dataclass
class UpEstimator:
    """The memory's vertical for heading and scan registration when none is given: the first camera's "up"
    is tilted by the wearer's pitch (10-15 degrees looking down at a table), and one frame facing a cupboard
    shows too little floor to refine it, so the normals of the first ``heading.up_window_s`` seconds are
    pooled (``estimate_up``) once ``heading.up_min_normals`` of them lie on horizontal surfaces (or after
    ``heading.up_max_wait_s``); then it is fixed. A wrong vertical tips every registration shift and heading
    turn out of the ground plane: the map climbs or sinks as the wearer walks."""

    up: Optional[np.ndarray] = None  # the settled vertical (memory frame)
    hint: Optional[np.ndarray] = None  # the first frame's up hint, the estimate's start
    first_t_s: Optional[float] = None
    normals: list = field(default_factory=list)  # (N, 3) float32 per frame until settled ...
    times_s: list = field(default_factory=list)  # ... and the frames' times (the heading reference is taken from them)
    flat_counts: list = field(default_factory=list, repr=False)  # per frame: its normals on horizontal surfaces (derived)

    def observe(self, depth_m: np.ndarray, intrinsics: Intrinsics, R_world_cam: np.ndarray, t_s: float,
                hint: np.ndarray, cfg: MemoryConfig) -> Optional[np.ndarray]:
        """Take one frame (rotation in the memory frame); returns the vertical once settled, else None."""
        if self.up is not None:
            return self.up
        if cfg.up_world is not None:
            self.up = np.asarray(cfg.up_world, dtype=np.float64) / np.linalg.norm(cfg.up_world)
            return self.up
        h = cfg.heading
        if self.hint is None:
            self.hint, self.first_t_s = np.asarray(hint, dtype=np.float64) / np.linalg.norm(hint), t_s
        n = surface_normals_w(depth_m, intrinsics, R_world_cam, h.grid_cols)
        self.normals.append(n[:: max(1, len(n) // 1000)].astype(np.float32))  # ~1,000 a frame, whatever the rate
        self.times_s.append(float(t_s))
        cos_max = math.cos(math.radians(h.up_refine_max_deg))  # counted once a frame (after a load: the loaded ones)
        self.flat_counts += [int(np.sum(np.abs(m @ self.hint) > cos_max)) for m in self.normals[len(self.flat_counts):]]
        waited = t_s - self.first_t_s
        if (waited >= h.up_window_s and sum(self.flat_counts) >= h.up_min_normals) or waited >= h.up_max_wait_s:
            self.up = estimate_up(self.to_array(), self.hint, h.up_refine_max_deg)
        return self.up

    def take_frames(self) -> list[tuple[float, np.ndarray]]:
        """The frames seen while the vertical was estimated, (time, normals), oldest first; forgotten here."""
        out = list(zip(self.times_s, self.normals))
        self.normals, self.times_s, self.flat_counts = [], [], []
        return out

    def to_json(self) -> dict:
        return {"up": None if self.up is None else self.up.tolist(),
                "hint": None if self.hint is None else self.hint.tolist(), "first_t_s": self.first_t_s,
                "frame_times_s": list(self.times_s), "frame_sizes": [len(n) for n in self.normals]}

    def to_array(self) -> np.ndarray:
        return np.concatenate(self.normals) if self.normals else np.zeros((0, 3), np.float32)

    @staticmethod
    def from_json(d: dict, normals: Optional[np.ndarray] = None) -> "UpEstimator":
        vec = lambda k: None if d.get(k) is None else _unit(d[k], k)  # noqa: E731
        first = d.get("first_t_s")
        est = UpEstimator(vec("up"), vec("hint"), None if first is None else float(first))
        sizes, times = [int(k) for k in d.get("frame_sizes", [])], [float(t) for t in d.get("frame_times_s", [])]
        normals = np.zeros((0, 3), np.float32) if normals is None else np.asarray(normals, dtype=np.float32)
        if normals.ndim != 2 or normals.shape[1] != 3 or not np.isfinite(normals).all() or \
                len(sizes) != len(times) or min(sizes, default=0) < 0 or sum(sizes) != len(normals):
            raise ValueError("up_normals must be finite (N, 3) vectors, frame_sizes and frame_times_s one per frame "
                             "summing to N")
        est.normals = np.split(normals, np.cumsum(sizes)[:-1]) if sizes else []
        est.times_s = times
        return est


def _unit(v, key: str) -> np.ndarray:
    """A saved direction: kept bit for bit when it is a unit vector to rounding (as saved), else normalised."""
    a = np.asarray(v, dtype=np.float64)
    if a.shape != (3,) or not np.isfinite(a).all() or np.linalg.norm(a) < 1e-9:
        raise ValueError(f"{key} must be 3 finite numbers, not all zero")
    norm = float(np.linalg.norm(a))
    return a if abs(norm - 1.0) <= UNIT_TOL else a / norm


@dataclass(frozen=True)
class StructureHeading:
    """Dominant horizontal direction of a frame's vertical surfaces, modulo 90 degrees."""

    angle_rad: float  # in [-pi/4, pi/4), about ``up`` in the basis ground_basis(up)
    strength: float  # |mean of exp(4i theta)|: 1 all normals on one grid, ~0 no dominant direction
    n_normals: int


def dominant_heading(normals_w: np.ndarray, up: np.ndarray, min_normals: int = 100,
                     vertical_max_cos: float = HeadingConfig.vertical_max_cos) -> Optional[StructureHeading]:
    """The structure heading of ``normals_w`` (None when fewer than ``min_normals`` lie on vertical surfaces)."""
    nw = normals_w[np.abs(normals_w @ up) < vertical_max_cos]
    if len(nw) < min_normals:
        return None
    B = ground_basis(up)
    theta = np.arctan2(nw @ B[1], nw @ B[0])
    s = np.exp(4j * theta).mean()
    return StructureHeading(_wrap_quarter(float(np.angle(s)) / 4), float(abs(s)), int(len(nw)))


@dataclass
class HeadingTracker:
    """Reference structure heading and a scalar Kalman filter of the offset from it (one per memory)."""

    up: Optional[np.ndarray] = None  # the vertical the headings are measured about (refined when not given)
    ref_rad: Optional[float] = None
    ref_samples: list = field(default_factory=list)  # structure angles of the first structured frames
    offset_rad: float = 0.0  # filtered heading offset of the current correction
    var_rad2: float = 0.0  # its variance (the filter runs once ``ref_rad`` is set)
    last_t_s: Optional[float] = None  # last structured frame measured
    filter_t_s: Optional[float] = None  # last frame the filter took

    def observe(self, depth_m: np.ndarray, intrinsics: Intrinsics, T_world_cam: np.ndarray, t_s: float,
                up: np.ndarray, cfg: MemoryConfig) -> Optional[float]:
        """Measure one frame (pose in the memory frame) about the vertical ``up`` (kept from the first call:
        ``UpEstimator``'s); returns the heading correction (radians about ``self.up``) to apply now, or None."""
        if self.last_t_s is not None and t_s - self.last_t_s < cfg.heading.interval_s:
            return None  # a frame's bias depends on what is in view: frames a moment apart repeat it
        normals = surface_normals_w(depth_m, intrinsics, T_world_cam[:3, :3], cfg.heading.grid_cols)
        if self.up is None:
            self.up = np.asarray(up, dtype=np.float64) / np.linalg.norm(up)
        return self.measure(normals, t_s, cfg)

    def reference_from(self, frames: list[tuple[float, np.ndarray]], up: np.ndarray, cfg: MemoryConfig) -> None:
        """Take the reference from frames seen before the vertical was known (``UpEstimator.take_frames``: their
        normals in the memory frame of their time, with no heading correction yet), as ``observe`` would have."""
        self.up = np.asarray(up, dtype=np.float64) / np.linalg.norm(up)
        for t_s, normals in frames:
            if self.ref_rad is not None:
                break
            self.measure(np.asarray(normals, dtype=np.float64), t_s, cfg)

    def measure(self, normals: np.ndarray, t_s: float, cfg: MemoryConfig) -> Optional[float]:
        """``observe`` on a frame's surface normals (memory frame) about ``self.up``."""
        if self.last_t_s is not None and t_s - self.last_t_s < cfg.heading.interval_s:
            return None
        if len(normals) == 0:
            return None
        h = dominant_heading(normals, self.up, vertical_max_cos=cfg.heading.vertical_max_cos)
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
        innov = min(max(off - self.offset_rad, -3 * s), 3 * s)  # clipped: one wild frame moves it little
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

    def to_json(self) -> dict:
        return {"up": None if self.up is None else self.up.tolist(), "ref_rad": self.ref_rad,
                "ref_samples": list(self.ref_samples), "offset_rad": self.offset_rad,
                "var_rad2": self.var_rad2, "last_t_s": self.last_t_s,
                "filter_t_s": self.filter_t_s}

    @staticmethod
    def from_json(d: dict) -> "HeadingTracker":
        return HeadingTracker(None if d.get("up") is None else np.asarray(d["up"], dtype=np.float64),
                              d.get("ref_rad"), list(d.get("ref_samples", [])), float(d.get("offset_rad", 0.0)),
                              float(d.get("var_rad2", 0.0)), d.get("last_t_s"), d.get("filter_t_s"))
