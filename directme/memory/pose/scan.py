"""Scan-to-map registration: each frame's depth laid on the structure seen before, to stop pose drift growing.

Odometry-style poses drift a little with every step; the landmark relocaliser (relocalize.py) corrects the
drift only when the wearer comes back to objects not seen for a while, so while the wearer stays in a room
the objects in view are mapped with the drifting poses and move with them, while the objects out of view
stay where an earlier pose put them - the map stops agreeing with itself. Walls and furniture are in view
nearly all the time. As in 2D laser SLAM (Kohlbrecher et al., "A Flexible and Scalable SLAM System with Full
3D Motion Estimation", SSRR 2011 - Hector SLAM), the depth points of each frame between the knees and the
head (``scan.below_cam_m`` / ``above_cam_m`` from the camera, along up) are flattened onto the ground plane
and registered to a 2D grid of the structure seen at least ``scan.established_s`` before: a correlative
search of shifts on the coarse grid, then Gauss-Newton on the smoothed occupancy, coarse to fine. A share
(``scan.gain``) of the shift found is applied to the memory's drift correction before the frame's objects
are lifted, and the frame's points (corrected) are then added to the grid.

Guards (docs/memory.md, "Scan-to-map registration"): enough points on mapped structure, constraining both
ground directions (one wall fixes one direction only); a shift of at least ``scan.min_shift_m`` (below it,
the grid's own error) and within ``scan.search_m``; the shifted points must lie on the older structure
(``scan.min_fit``) about as well as the unshifted ones lie on all structure (``scan.fit_ratio``: else a part
of a new view slid onto older structure nearby); and the fit must rise with the shift (``scan.min_gain``,
``scan.gain_per_m``).
"""
from __future__ import annotations

import functools
import logging
import math
from typing import Any, Mapping, Optional

import numpy as np

from ...geometry import Intrinsics, columns, ground_basis
from ..buffers import canonical_nans
from ..component import FrameStep, State
from ..config import MemoryConfig, ScanConfig
from .correction import Correction
from .scan_grid import Field, StructureGrid, smoothed

log = logging.getLogger("directme.memory")


def camera_points(depth_m: np.ndarray, K: Intrinsics, cfg: ScanConfig) -> np.ndarray:
    """(N, 3) camera-frame points of every ``pixel_stride``-th depth pixel (from the middle of the first stride
    cell) within ``min_depth_m``-``max_depth_m``. Not ``geometry.backproject`` on a cropped window: a crop's
    intrinsics of a tiny image are refused by their own checks (the fuzz test of odd image sizes)."""
    s = cfg.pixel_stride
    d = np.asarray(depth_m[s // 2::s, s // 2::s], dtype=np.float64)
    v, u = _pixel_grid(depth_m.shape[:2], s)
    ok = np.isfinite(d) & (d >= cfg.min_depth_m) & (d <= cfg.max_depth_m)
    z = d[ok]
    return columns((u[ok] - K.cx) / K.fx * z, (v[ok] - K.cy) / K.fy * z, z)


def structure_xy(p_cam: np.ndarray, T_world_cam: np.ndarray, up: np.ndarray, cfg: ScanConfig) -> np.ndarray:
    """(N, 2) ground-plane coordinates (``ground_basis(up)``) of the camera points between ``below_cam_m``
    under and ``above_cam_m`` over the camera along ``up``."""
    d_w = p_cam @ T_world_cam[:3, :3].T
    h = d_w @ up
    keep = (h >= -cfg.below_cam_m) & (h <= cfg.above_cam_m)
    return (d_w[keep] + T_world_cam[:3, 3]) @ ground_basis(up).T


@functools.lru_cache(maxsize=8)
def _pixel_grid(shape: tuple[int, int], s: int) -> tuple[np.ndarray, np.ndarray]:
    """``camera_points``' (rows, columns) of the strided pixels of an image of ``shape`` (read-only, kept per
    size)."""
    v, u = np.mgrid[s // 2:shape[0]:s, s // 2:shape[1]:s]
    v.setflags(write=False)
    u.setflags(write=False)
    return v, u


class ScanMatcher:
    """The scan registration stage (pose/): the structure grid and the per-frame registration against it (one per
    memory)."""

    key = "scan"
    sections = ("scan",)

    def __init__(self, cfg: ScanConfig) -> None:
        self.cfg = cfg
        self.grid = StructureGrid(cfg.cell_m, cfg.grid_tile_cells, cfg.max_grid_cells)
        self.points_cam: Optional[np.ndarray] = None  # this frame's scan points, until ``finish`` maps them
        # the last structure_xy computed: (points, pose, up, its result); mapping under an unchanged pose reuses it
        self._last_xy: Optional[tuple[np.ndarray, bytes, bytes, np.ndarray]] = None
        self.corrections = 0  # frames whose pose it changed
        self.last = ""  # why the last frame was or was not registered (diagnostics, not saved)
        self.full = False  # the grid reached max_grid_cells and forgets its oldest tiles (warned once)

    def register(self, p_cam: np.ndarray, T_world_cam: np.ndarray, up: np.ndarray, t_s: float,
                 cfg: ScanConfig) -> Optional[tuple[float, np.ndarray]]:
        """(turn about up in radians, shift along the ground as a world vector in metres) that lays this
        frame's structure points on the structure first seen ``scan.established_s`` or more before ``t_s``
        (over seconds the input poses are better than a registration), or None."""
        xy = self.structure(p_cam, T_world_cam, up, cfg)
        if len(xy) > cfg.max_points:  # an even subset: the registration's cost grows with the points
            xy = xy[_even_subset(len(xy), cfg.max_points)]
        if len(xy) < cfg.min_support or self.grid.empty:
            self.last = "few points"
            return None
        B = ground_basis(up)
        c = T_world_cam[:3, 3] @ B.T
        pad = cfg.search_m + 4 * cfg.cell_m * 2 ** (cfg.levels - 1)
        lo, hi = xy.min(axis=0) - pad, xy.max(axis=0) + pad
        before = t_s - cfg.established_s
        window = self.grid.occupancy(lo, hi, cfg, before)  # smoothed at each level in turn
        coarse = None if window is None else smoothed(window, cfg.levels - 1, self.grid.cell_m, cfg)
        if coarse is None:
            self.last = "nothing mapped"
            return None
        # correlative search over shifts on the coarse grid, then Gauss-Newton on each level from the best
        k = int(round(cfg.search_m / coarse.cell))
        scores = coarse.score(xy, k)  # the shifts by whole cells in [-k, k] along both axes, the first one major
        zero = scores[len(scores) // 2]
        best = int(np.argmax(scores))
        xi = np.array([(best // (2 * k + 1) - k) * coarse.cell, (best % (2 * k + 1) - k) * coarse.cell, 0.0])
        dof = 3 if cfg.max_turn_deg > 0 else 2  # no turn allowed: translation only
        turn = dof == 3
        eye = np.eye(dof)
        at = _unturned(xy, c)
        box = (at.min(axis=1), at.max(axis=1))  # the unshifted points' extent: each shift's is this shifted
        fld = coarse
        # how far the steps left can still move the estimate (at most a field cell each): one beyond search_m by
        # more than that is refused now, as it would be after them
        reach = sum((cfg.iterations if lv == 0 else cfg.coarse_iterations) * self.grid.cell_m * 2 ** lv
                    for lv in range(cfg.levels)) * (1 + 1e-9)
        for level in range(cfg.levels - 1, -1, -1):
            if level != cfg.levels - 1:
                fld = smoothed(window, level, self.grid.cell_m, cfg)
            for _ in range(cfg.iterations if level == 0 else cfg.coarse_iterations):
                J, val = _warp(xy, c, xi, fld, turn, at, box)
                on = val >= cfg.min_occupancy
                if np.count_nonzero(on) < cfg.min_support:
                    break
                Jo = J[on][:, :dof]
                H = Jo.T @ Jo
                h = H.tolist()
                tr = sum(h[i][i] for i in range(dof))  # np.trace's sum, in Python floats
                if not tr > 1e-12:
                    break  # the points lie where the field is flat (inside a filled area): no direction to go
                if turn:
                    H += cfg.damping * tr / dof * eye
                    step = np.linalg.solve(H, Jo.T @ (1.0 - val[on]))
                else:
                    step = np.array((*_solve2(h, (Jo.T @ (1.0 - val[on])).tolist(), cfg.damping * tr / dof), 0.0))
                n = float(np.hypot(step[0], step[1]))
                if n > fld.cell:  # at most one field cell a step: the field's slope reaches about that far
                    step *= fld.cell / n
                xi = xi + step
                reach -= fld.cell * (1 + 1e-9)
                if math.hypot(xi[0], xi[1]) - reach > cfg.search_m:
                    self.last = f"too far {xi[0]:.3f} {xi[1]:.3f} (early)"
                    return None
                if n < 1e-4 and abs(step[2]) < 1e-5:
                    break
        J1, v1 = _warp(xy, c, xi, fld, turn, at, box)
        on = v1 >= cfg.min_occupancy
        if on.sum() < cfg.min_support:
            self.last = "support"
            return None
        H2 = J1[on][:, :2].T @ J1[on][:, :2] / on.sum()
        weakest = _weakest(H2, cfg.min_constraint)
        if weakest < cfg.min_constraint:
            self.last = f"constraint {weakest:.2f}"
            return None  # one wall: the other direction is free (or the points lie on nothing)
        shift = float(np.hypot(xi[0], xi[1]))
        if shift > cfg.search_m or abs(xi[2]) > math.radians(cfg.max_turn_deg):
            self.last = f"too far {xi[0]:.3f} {xi[1]:.3f} {math.degrees(xi[2]):.2f}"
            return None
        if shift < cfg.min_shift_m and abs(xi[2]) < math.radians(cfg.min_turn_deg):
            self.last = f"small {shift:.3f}"
            return None
        # the gain first: it needs no new smoothing (the fit's field is built only for a frame that gains)
        v0 = _values(xy, c, fld, turn, at)  # the unshifted points' fit, needed only now
        gain = float(v1.mean() - v0.mean())
        if gain < cfg.min_gain + cfg.gain_per_m * shift:
            self.last = f"no gain {v0.mean():.3f} {v1.mean():.3f} shift {shift:.3f}"
            return None
        everything = self.grid.field(lo, hi, 0, cfg)  # with the structure of the last seconds
        va = _values(xy, c, everything, turn, at)
        if float(v1.mean()) < max(cfg.min_fit, cfg.fit_ratio * float(va.mean())):
            self.last = f"poor fit {v1.mean():.3f} {va.mean():.3f}"
            return None  # most of the view lies on nothing older, or the last seconds' structure explains it
            #              better: a part slid onto older structure
        self.last = f"ok {xi[0]:.3f} {xi[1]:.3f} {math.degrees(xi[2]):.2f} gain {v0.mean():.3f} {v1.mean():.3f} coarse {zero:.3f} {scores[best]:.3f}"
        return float(xi[2]), xi[0] * B[0] + xi[1] * B[1]

    def update(self, step: FrameStep) -> Optional[Correction]:
        """The share (``scan.gain``) of the pose change that lays this frame's depth on the structure seen before,
        or None; the structure is flattened along the settled vertical (``step.up``; before it settles nothing is
        registered or mapped: a tilted vertical smears every wall's footprint by its height)."""
        self.points_cam, self._last_xy = None, None
        if step.up is None or not self.cfg.enabled:
            return None
        f, T, cfg = step.fp_input.frame, step.T_mem_cam, self.cfg
        self.points_cam = camera_points(f.depth_m, f.intrinsics, cfg)
        found = self.register(self.points_cam, T, step.up, step.t_s, cfg)
        if found is None:
            return None
        yaw, shift_w = found
        self.corrections += 1  # a frame's registration is noisy (depth scale, few walls): a share is applied
        return Correction(cfg.gain * yaw, T[:3, 3], cfg.gain * shift_w, step.up)

    def finish(self, step: FrameStep) -> None:
        """Add this frame's scan points, under its final pose (after every correction), to the grid."""
        if self.points_cam is not None:
            self.add(self.points_cam, step.fp.frame.T_world_cam.matrix, step.up, step.t_s, self.cfg)
            self.points_cam, self._last_xy = None, None

    def to_state(self) -> State:
        meta, arrays = self.grid.to_state()
        return {**meta, "corrections": self.corrections}, canonical_nans(arrays)

    @classmethod
    def from_state(cls, cfg: MemoryConfig, state: State, loaded: Mapping[str, Any]) -> "ScanMatcher":
        meta, arrays = state
        if not meta:  # saves before the structure grid start with an empty one
            return cls(cfg.scan)
        m = cls(cfg.scan)
        m.grid = StructureGrid.from_state(meta, arrays, cfg.scan.grid_tile_cells, cfg.scan.max_grid_cells)
        m.full = m.grid.dropped_tiles > 0
        m.corrections = int(meta.get("corrections", 0))
        return m

    def structure(self, p_cam: np.ndarray, T_world_cam: np.ndarray, up: np.ndarray, cfg: ScanConfig) -> np.ndarray:
        """``structure_xy``, computed once for the frame's points under one pose and vertical (a frame no stage
        corrected is registered and mapped under the same pose)."""
        key = (np.asarray(T_world_cam, dtype=np.float64).tobytes(), np.asarray(up, dtype=np.float64).tobytes())
        last = self._last_xy
        if last is not None and last[0] is p_cam and last[1:3] == key:
            return last[3]
        xy = structure_xy(p_cam, T_world_cam, up, cfg)
        self._last_xy = (p_cam, *key, xy)
        return xy

    def add(self, p_cam: np.ndarray, T_world_cam: np.ndarray, up: np.ndarray, t_s: float, cfg: ScanConfig) -> None:
        self.grid.add(self.structure(p_cam, T_world_cam, up, cfg), cfg.max_hits, t_s)
        if self.grid.dropped_tiles and not self.full:
            self.full = True
            log.warning("scan grid at its %d cells (memory.scan.max_grid_cells): the structure hit longest ago is "
                        "forgotten to map new areas", cfg.max_grid_cells)


def _warp(xy: np.ndarray, c: np.ndarray, xi: np.ndarray, fld: Field, turn: bool = True,
          at: Optional[np.ndarray] = None,
          box: Optional[tuple[np.ndarray, np.ndarray]] = None) -> tuple[np.ndarray, np.ndarray]:
    """The Jacobian (N, 3) of the field at the points turned by xi[2] about ``c`` and shifted by xi[:2]; its values
    there. ``turn=False`` (no turn in ``xi``, none asked for): the turn column is left 0; ``at``: the points'
    coordinates turned by 0 about ``c`` (``_unturned``), computed once for every shift; ``box``: their smallest and
    largest coordinate per axis (``Field.sample_xy``), with ``at``."""
    if not turn and xi[2] == 0.0:
        # three columns: register's Jo is then a strided view, whose Jo.T @ Jo rounds as it always did
        shift = xi[:2]
        q = (_unturned(xy, c) if at is None else at) + shift[:, None]
        val, J = fld.sample_xy(q, cols=3, box=None if at is None or box is None else (box[0] + shift, box[1] + shift))
        return J, val
    cs, sn = math.cos(xi[2]), math.sin(xi[2])
    d = xy - c
    q = np.stack([cs * d[:, 0] - sn * d[:, 1], sn * d[:, 0] + cs * d[:, 1]], axis=1) + c + xi[:2]
    val, grad = fld.sample(q)
    dq = q - c - xi[:2]  # d q / d theta = (-dq_y, dq_x)
    J = np.stack([grad[:, 0], grad[:, 1], -grad[:, 0] * dq[:, 1] + grad[:, 1] * dq[:, 0]], axis=1)
    return J, val


def _weakest(H: np.ndarray, threshold: float) -> float:
    """The smaller eigenvalue of the symmetric 2x2 ``H`` - in closed form when it is clearly above ``threshold``
    (``np.linalg.eigvalsh`` would say so too: both are exact to a few ulps of H's size), else eigvalsh's own value."""
    (a, b), (_, c) = H.tolist()
    low = 0.5 * (a + c) - math.hypot(0.5 * (a - c), b)
    if math.isfinite(low) and low - threshold > 1e-9 * (abs(a) + abs(b) + abs(c) + abs(threshold)):
        return low
    return float(np.linalg.eigvalsh(H)[0])


def _even_subset(n: int, m: int) -> np.ndarray:
    """Indices of ``m`` of ``n`` points evenly spread (first and last included):
    ``np.linspace(0, n - 1, m).astype(np.int64)``, computed as linspace does without its argument handling."""
    if n < 2 or m < 2:
        return np.linspace(0, n - 1, m).astype(np.int64)
    y = np.arange(m, dtype=np.float64)
    y *= np.float64(n - 1) / (m - 1)
    y[-1] = n - 1
    return y.astype(np.int64)


def _solve2(H: list, b: list, damping: float) -> tuple[float, float]:
    """``np.linalg.solve(H + damping * I, b)`` for a 2x2 ``H``: LAPACK's LU with partial pivoting (the multiplier
    by the pivot's reciprocal, the solution by division), bit for bit, without its per-call cost."""
    (a00, a01), (a10, a11) = H
    a00, a01, a10, a11 = a00 + damping, a01 + 0.0, a10 + 0.0, a11 + damping
    b0, b1 = b
    if abs(a10) > abs(a00):
        a00, a01, a10, a11, b0, b1 = a10, a11, a00, a01, b1, b0
    l = a10 * (1.0 / a00)
    u11 = a11 - l * a01
    if a00 == 0.0 or u11 == 0.0:
        raise np.linalg.LinAlgError("Singular matrix")
    x1 = (b1 - l * b0) / u11
    return (b0 - a01 * x1) / a00, x1


def _values(xy: np.ndarray, c: np.ndarray, fld: Field, turn: bool, at: np.ndarray) -> np.ndarray:
    """The field's values at the unshifted points: ``_warp(xy, c, np.zeros(3), fld, turn, at)[1]`` without the
    Jacobian."""
    if turn:
        return _warp(xy, c, np.zeros(3), fld, turn, at)[1]
    return fld.sample_xy(at + np.zeros(2)[:, None], cols=0)[0]


def _unturned(xy: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(2, N): ``xy`` turned by 0 about ``c``, (xy - c) + c as ``_warp``'s turn computes it, coordinates first."""
    d = np.array(xy.T)
    d -= c[:, None]
    d += c[:, None]
    return d
