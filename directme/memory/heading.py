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
structure nothing is ever applied. How it behaves on real RGB-D is in docs/memory.md and
docs/performance.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..geometry import Intrinsics, ground_basis

from .config import HeadingConfig, MemoryConfig


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


def refine_up(normals_w: np.ndarray, up: np.ndarray, max_cone_deg: float = HeadingConfig.up_refine_max_deg) -> np.ndarray:
    """The vertical from horizontal surfaces (floor, tables, ceiling): the mean of the normals within a cone
    about ``up``, narrowed step by step (slanted normals at edges would bias a wide cone)."""
    up = np.asarray(up, dtype=np.float64) / np.linalg.norm(up)
    for cone in (max_cone_deg, 15.0, 8.0, 4.0, 2.0):
        c = normals_w @ up
        sel = np.abs(c) > math.cos(math.radians(cone))
        if sel.sum() < 50:
            break
        v = (normals_w[sel] * np.sign(c[sel])[:, None]).mean(axis=0)
        up = v / np.linalg.norm(v)
    return up


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
                up_hint: np.ndarray, up_given: bool, cfg: MemoryConfig) -> Optional[float]:
        """Measure one frame (pose in the memory frame); returns the heading correction (radians about
        ``self.up``) to apply now, or None."""
        if self.last_t_s is not None and t_s - self.last_t_s < cfg.heading.interval_s:
            return None  # a frame's bias depends on what is in view: frames a moment apart repeat it
        normals = surface_normals_w(depth_m, intrinsics, T_world_cam[:3, :3], cfg.heading.grid_cols)
        if len(normals) == 0:
            return None
        if self.up is None:
            self.up = np.asarray(up_hint, dtype=np.float64) / np.linalg.norm(up_hint)
            if not up_given:
                self.up = refine_up(normals, self.up, cfg.heading.up_refine_max_deg)
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
