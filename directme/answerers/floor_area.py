"""A room's floor rectangle from the far edges its frames saw (memory/outline.py): walls are the lines along which
those edges gather, seen over much of their length; the room's own wall on each side is the innermost such line
outward from where the wearer stood (what a door shows of the corridor or the next room lies beyond it).

Numpy only; the constants are ``MeasureConfig``'s ``room_wall_*`` (docs/memory.md, "Measurements")."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .geometric_config import MeasureConfig


def dominant_angle_rad(points_xy: np.ndarray, cell_m: float, step_deg: float) -> float:
    """The rotation (0-90 deg, in ``step_deg`` steps) that gathers the points most sharply on lines along the axes:
    the largest sum of squared counts of their ``cell_m`` histograms along both rotated axes."""
    best, best_a = -1.0, 0.0
    for a in np.radians(np.arange(0.0, 90.0, step_deg)):
        r = points_xy @ _rotation(a)
        score = 0.0
        for k in range(2):
            idx = np.floor(r[:, k] / cell_m).astype(np.int64)
            score += float(np.square(np.bincount(idx - idx.min()).astype(np.float64)).sum())
        if score > best:
            best, best_a = score, float(a)
    return best_a


def wall_support(u: np.ndarray, v: np.ndarray, cfg: MeasureConfig) -> tuple[float, np.ndarray]:
    """For each ``room_wall_cell_m`` cell along ``u`` (from the returned origin): how much of a wall across ``u``
    stands there: the points within ``room_wall_band_m`` of it counted per cell along ``v``, each cell at most
    ``room_wall_cap`` (a wall seen along its length beats a short face seen often)."""
    cell = cfg.room_wall_cell_m
    u0, v0 = float(u.min()), float(v.min())
    iu = np.floor((u - u0) / cell).astype(np.int64)
    iv = np.floor((v - v0) / cell).astype(np.int64)
    counts = np.zeros((int(iu.max()) + 1, int(iv.max()) + 1))
    np.add.at(counts, (iu, iv), 1.0)
    k = round(cfg.room_wall_band_m / cell)
    padded = np.pad(counts, ((k, k), (0, 0)))
    band = sum(padded[j:j + len(counts)] for j in range(2 * k + 1))
    return u0, np.minimum(band, cfg.room_wall_cap).sum(axis=1)


def walls_along(u: np.ndarray, v: np.ndarray, centre: float, cfg: MeasureConfig) -> tuple[float, float]:
    """The room's walls across ``u`` below and above ``centre``: on each side the innermost cell whose support
    (``wall_support``) reaches ``room_wall_share`` of that side's best, moved outward to the top of its rise (a
    wall blurred by drift is where its support peaks, not where it starts), placed at the median of its points."""
    cell = cfg.room_wall_cell_m
    u0, support = wall_support(u, v, cfg)
    c = int(np.clip(math.floor((centre - u0) / cell), 0, len(support) - 1))
    below, above = support[:c + 1], support[c:]
    lo = int(np.flatnonzero(below >= cfg.room_wall_share * below.max())[-1])
    hi = c + int(np.flatnonzero(above >= cfg.room_wall_share * above.max())[0])
    while lo > 0 and support[lo - 1] > support[lo]:
        lo -= 1
    while hi < len(support) - 1 and support[hi + 1] > support[hi]:
        hi += 1
    out = []
    for i in (lo, hi):
        x = u0 + (i + 0.5) * cell
        near = u[np.abs(u - x) <= cfg.room_wall_band_m + 0.5 * cell]
        out.append(float(np.median(near)) if len(near) else x)
    return out[0], out[1]


def wall_rectangle_m2(edges_xy: np.ndarray, walked_xy: np.ndarray, cfg: MeasureConfig) -> Optional[float]:
    """Area (m2) of the rectangle of a room's walls (``walls_along`` on both axes of ``dominant_angle_rad``, from the
    median of the walk ``walked_xy``), fitted again with each axis's points limited to the other axis's walls
    (a door's view beyond reaches past them); None when the walls close in on each other."""
    if len(edges_xy) > cfg.room_max_edges:
        edges_xy = edges_xy[np.linspace(0, len(edges_xy) - 1, cfg.room_max_edges).astype(np.int64)]
    rot = _rotation(dominant_angle_rad(edges_xy, cfg.room_wall_cell_m, cfg.rect_step_deg))
    r, centre = edges_xy @ rot, np.median(walked_xy @ rot, axis=0)
    walls: list[Optional[tuple[float, float]]] = [None, None]
    for _ in range(2):
        found = []
        for k in range(2):
            u, v = r[:, k], r[:, 1 - k]
            other = walls[1 - k]
            if other is not None:
                keep = (v >= other[0] - cfg.room_wall_cell_m) & (v <= other[1] + cfg.room_wall_cell_m)
                u, v = u[keep], v[keep]
            if not len(u):
                return None
            found.append(walls_along(u, v, float(centre[k]), cfg))
        walls = found
    sides = [hi - lo for lo, hi in walls]
    return None if min(sides) < cfg.room_wall_cell_m else float(sides[0] * sides[1])


def _rotation(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])
