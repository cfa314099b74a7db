"""The memory's vertical: the direction of gravity in the memory's world frame, the first of the pose stages.

The input gives no gravity; the first camera's -y is tilted by the wearer's pitch. Every frame's depth gives
surface normals (``surface_normals_w``); pooled over the first seconds, the direction most parallel to the
floor's, tables' and ceiling's normals and most perpendicular to the walls' is the vertical (``estimate_up``).
Settings: ``MemoryConfig.vertical`` (``MemoryConfig.up_world`` when it is known).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional

import numpy as np

from ..._atomic import StateError
from ...geometry import Intrinsics, Pose, columns, default_up_world
from ..buffers import canonical_nans
from ..component import FrameStep, State
from ..config import MemoryConfig, VerticalConfig

UNIT_TOL = 1e-6  # a saved direction whose length is within this of 1 is a unit vector (rounding), loaded as is


def surface_normals_w(depth_m: np.ndarray, intrinsics: Intrinsics, R_world_cam: np.ndarray,
                      grid_cols: int = 64) -> np.ndarray:
    """(N, 3) unit surface normals (world frame) on a grid of about ``grid_cols`` columns of the depth map.

    Depth is box-smoothed over 3x3 grid cells first (per-pixel depth noise would swamp the normals);
    normals spanning a depth jump (an occluding edge) or an invalid pixel are dropped."""
    h, w = depth_m.shape
    s = max(1, w // grid_cols)
    d = np.asarray(depth_m[::s, ::s], dtype=np.float64)
    valid = np.isfinite(d) & (d > 0)
    if valid.all():  # every cell valid: the share of valid cells is the same for every frame of this size
        num = _box3(d)
        whole, den = _all_valid_share(d.shape)
    else:
        num = _box3(np.where(valid, d, 0.0))
        den = _box3(valid.astype(np.float64))
        whole, den = den > 0.99, np.maximum(den, 1e-9)
    z = np.where(whole, num / den, np.nan)  # only where the whole 3x3 is valid
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
    n = columns(*(c[ok] / norm for c in n))
    return n @ np.asarray(R_world_cam, dtype=np.float64).T


def _box3(a: np.ndarray) -> np.ndarray:
    """``ndimage.uniform_filter(a, 3, mode="nearest")`` of a 2-D float64 array: the same two 1-D passes, the second
    in place, as it makes them (without its per-call argument handling)."""
    from scipy import ndimage

    out = ndimage.uniform_filter1d(a, 3, 0, mode="nearest")
    return ndimage.uniform_filter1d(out, 3, 1, out, mode="nearest")


@functools.lru_cache(maxsize=4)
def _all_valid_share(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``surface_normals_w``'s (whole 3x3 valid, share of valid cells) for a grid of ``shape`` with every cell
    valid: the box-smoothed share of ones, computed once per grid size."""
    from scipy import ndimage

    den = ndimage.uniform_filter(np.ones(shape, dtype=np.float64), 3, mode="nearest")
    whole, den = den > 0.99, np.maximum(den, 1e-9)
    whole.setflags(write=False)
    den.setflags(write=False)
    return whole, den


def estimate_up(normals_w: np.ndarray, hint: np.ndarray, cfg: VerticalConfig = VerticalConfig()) -> np.ndarray:
    """The vertical from many frames' surface normals: the direction most parallel to the horizontal surfaces'
    normals (floor, tables, ceiling: within a cone about the estimate) and most perpendicular to the vertical
    ones' (walls, cupboard fronts: within the same angle of the horizontal) - the top eigenvector of the
    difference of their scatter matrices - in cones narrowed step by step from ``hint`` (``refine_max_deg``, then
    ``refine_cones_deg``). Walls alone leave it free to tip about their normal, so horizontal surfaces are
    needed: with fewer than ``min_cone_normals`` in a cone the estimate so far is kept."""
    up = np.asarray(hint, dtype=np.float64) / np.linalg.norm(hint)
    N = np.asarray(normals_w, dtype=np.float64)
    least = cfg.min_cone_normals
    for cone in (cfg.refine_max_deg, *cfg.refine_cones_deg):
        c = N @ up
        flat = np.abs(c) > math.cos(math.radians(cone))
        wall = np.abs(c) < math.sin(math.radians(cone))
        if flat.sum() < least:
            break
        M = N[flat].T @ N[flat] / flat.sum()
        if wall.sum() >= least:
            M = M - N[wall].T @ N[wall] / wall.sum()
        v = np.linalg.eigh(M)[1][:, -1]
        up = v if v @ up >= 0 else -v
    return up


@dataclass(eq=False)
class VerticalEstimator:
    """The vertical stage (pose/), the one source of "up" in the memory: answers and ground distances (the
    snapshot's ``up_world``), lifting objects, heading, scan registration and relocalisation all read it.

    Given (``MemoryConfig.up_world``), it is that. Otherwise the first camera's "up" is tilted by the wearer's
    pitch (10-15 degrees looking down at a table), and one frame facing a cupboard shows too little floor to
    refine it, so the normals of the first ``vertical.window_s`` seconds are pooled (``estimate_up``) once
    ``vertical.min_normals`` of them lie on horizontal surfaces (or after ``vertical.max_wait_s``); then it is
    fixed. Until then the first camera's -y stands in (``as_of``); heading and scan registration wait for the
    estimate - a wrong vertical tips every registration shift and heading turn out of the ground plane."""

    up: Optional[np.ndarray] = None  # the settled vertical (memory frame)
    hint: Optional[np.ndarray] = None  # the first frame's up hint, the estimate's start
    first_t_s: Optional[float] = None
    normals: list = field(default_factory=list)  # (N, 3) float32 per frame until settled ...
    times_s: list = field(default_factory=list)  # ... and the frames' times (the heading reference is taken from them)
    flat_counts: list = field(default_factory=list, repr=False)  # per frame: its normals on flat surfaces (derived)
    settled_s: Optional[float] = None  # the time the estimate settled (None with ``up`` set: known from the start)
    cfg: MemoryConfig = field(default_factory=MemoryConfig, repr=False)

    key: ClassVar[str] = "vertical"
    sections: ClassVar[tuple[str, ...]] = ("vertical",)  # and MemoryConfig.up_world

    def as_of(self, t_s: float) -> Optional[np.ndarray]:
        """The vertical known at ``t_s`` (from frames up to then): the estimate once settled, the first camera's
        -y before; the given one at any time; None before the first frame when none is given."""
        if self.up is not None and (self.settled_s is None or t_s >= self.settled_s):
            return self.up
        if self.hint is not None and self.first_t_s is not None and t_s >= self.first_t_s:
            return self.hint
        if self.cfg.up_world is not None:
            return np.asarray(self.cfg.up_world, dtype=np.float64) / np.linalg.norm(self.cfg.up_world)
        return None

    def update(self, step: FrameStep) -> None:
        """Estimate the vertical from this frame: ``step.up`` is it once settled (None before: heading and scan
        registration wait); when it settles now, ``step.settled_frames`` are the frames it was taken on."""
        if self.up is not None:  # settled: nothing more to estimate
            step.up = self.up
            return None
        f = step.fp_input.frame
        step.up = self.observe(f.depth_m, f.intrinsics, step.T_mem_cam[:3, :3], step.t_s,
                               default_up_world(Pose(step.T_mem_cam)), self.cfg)
        if step.up is not None:  # settled just now
            step.settled_frames = self.take_frames()
        return None

    def observe(self, depth_m: np.ndarray, intrinsics: Intrinsics, R_world_cam: np.ndarray, t_s: float,
                hint: np.ndarray, cfg: MemoryConfig) -> Optional[np.ndarray]:
        """Take one frame (rotation in the memory frame; ``hint``: its camera's -y); returns the vertical once
        settled, else None."""
        if self.up is not None:
            return self.up
        if cfg.up_world is not None:
            self.up = np.asarray(cfg.up_world, dtype=np.float64) / np.linalg.norm(cfg.up_world)
            return self.up
        v = cfg.vertical
        if self.hint is None:
            self.hint, self.first_t_s = np.asarray(hint, dtype=np.float64) / np.linalg.norm(hint), t_s
        n = surface_normals_w(depth_m, intrinsics, R_world_cam, v.grid_cols)
        self.normals.append(n[:: max(1, len(n) // v.normals_per_frame)].astype(np.float32))  # whatever the rate
        self.times_s.append(float(t_s))
        cos_max = math.cos(math.radians(v.refine_max_deg))  # counted once a frame (after a load: the loaded ones)
        self.flat_counts += [int(np.sum(np.abs(m @ self.hint) > cos_max)) for m in self.normals[len(self.flat_counts):]]
        waited = t_s - self.first_t_s
        if (waited >= v.window_s and sum(self.flat_counts) >= v.min_normals) or waited >= v.max_wait_s:
            self.up = estimate_up(self.to_array(), self.hint, v)
            self.settled_s = float(t_s)
        return self.up

    def take_frames(self) -> list[tuple[float, np.ndarray]]:
        """The frames seen while the vertical was estimated, (time, normals), oldest first; forgotten here."""
        out = list(zip(self.times_s, self.normals))
        self.normals, self.times_s, self.flat_counts = [], [], []
        return out

    def to_state(self) -> State:
        return self.to_json(), canonical_nans({"up_normals": self.to_array()})

    @classmethod
    def from_state(cls, cfg: MemoryConfig, state: State, loaded: Mapping[str, Any]) -> "VerticalEstimator":
        try:
            est = cls.from_json(state[0], state[1].get("up_normals"))
        except ValueError as e:
            raise StateError("vertical", str(e)) from None
        est.cfg = cfg
        return est

    def to_json(self) -> dict:
        return {"up": None if self.up is None else self.up.tolist(), "settled_s": self.settled_s,
                "hint": None if self.hint is None else self.hint.tolist(), "first_t_s": self.first_t_s,
                "frame_times_s": list(self.times_s), "frame_sizes": [len(n) for n in self.normals]}

    def to_array(self) -> np.ndarray:
        return np.concatenate(self.normals) if self.normals else np.zeros((0, 3), np.float32)

    @staticmethod
    def from_json(d: dict, normals: Optional[np.ndarray] = None) -> "VerticalEstimator":
        vec = lambda k: None if d.get(k) is None else _unit(d[k], k)  # noqa: E731
        first = d.get("first_t_s")
        est = VerticalEstimator(vec("up"), vec("hint"), None if first is None else float(first))
        sizes, times = [int(k) for k in d.get("frame_sizes", [])], [float(t) for t in d.get("frame_times_s", [])]
        normals = np.zeros((0, 3), np.float32) if normals is None else np.asarray(normals, dtype=np.float32)
        if normals.ndim != 2 or normals.shape[1] != 3 or not np.isfinite(normals).all() or \
                len(sizes) != len(times) or min(sizes, default=0) < 0 or sum(sizes) != len(normals):
            raise ValueError("up_normals must be finite (N, 3) vectors, frame_sizes and frame_times_s one per frame "
                             "summing to N")
        est.normals = np.split(normals, np.cumsum(sizes)[:-1]) if sizes else []
        est.times_s = times
        settled = d.get("settled_s")
        est.settled_s = None if settled is None else float(settled)
        return est


def _unit(v, key: str) -> np.ndarray:
    """A saved direction: kept bit for bit when it is a unit vector to rounding (as saved), else normalised."""
    a = np.asarray(v, dtype=np.float64)
    if a.shape != (3,) or not np.isfinite(a).all() or np.linalg.norm(a) < 1e-9:
        raise ValueError(f"{key} must be 3 finite numbers, not all zero")
    norm = float(np.linalg.norm(a))
    return a if abs(norm - 1.0) <= UNIT_TOL else a / norm


