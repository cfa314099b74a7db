"""The structure grid of scan registration (scan.py): hit counts on the ground plane and the smoothed occupancy
fields a frame is registered on, with bilinear values and gradients."""
from __future__ import annotations

import functools
import math
from typing import Any, Optional

import numpy as np

from ..._atomic import StateError
from ..config import ScanConfig


class StructureGrid:
    """Hit counts of structure points on the ground plane (cells of ``cell_m``) and the time each cell was
    first hit, growing as needed."""

    def __init__(self, cell_m: float) -> None:
        self.cell_m = float(cell_m)
        self.origin = np.zeros(2, dtype=np.int64)  # cell index of hits[0, 0]
        self.hits = np.zeros((0, 0), dtype=np.uint8)
        self.first_s = np.zeros((0, 0), dtype=np.float32)  # time of each cell's first hit (inf: never)

    def __len__(self) -> int:
        return int(np.count_nonzero(self.hits))

    def cells(self, xy: np.ndarray) -> np.ndarray:
        return np.floor(xy / self.cell_m).astype(np.int64)

    def add(self, xy: np.ndarray, max_hits: int, t_s: float, max_cells: int = 1 << 62) -> int:
        """Count one hit in the cell of each point (once per cell); the grid grows to hold them unless it would
        then have more than ``max_cells`` cells: points outside it are then dropped. Returns how many were."""
        if not len(xy):
            return 0
        c = self.cells(xy)
        dropped = 0
        if self.hits.size:
            o, shape = self.origin, np.array(self.hits.shape)
            lo, hi = c.min(axis=0), c.max(axis=0)
            grown = np.maximum(o + shape - 1, hi + 8) - np.minimum(o, lo - 8) + 1
            if int(np.prod(grown)) > max_cells:  # a walk far beyond the area mapped so far: keep what fits
                inside = np.all((c >= o) & (c < o + shape), axis=1)
                dropped, c = int((~inside).sum()), c[inside]
                if not len(c):
                    return dropped
        lo, hi = c.min(axis=0), c.max(axis=0)
        if self.hits.size == 0:
            self.origin = lo - 8
            self.hits = np.zeros(tuple((hi - lo + 17).tolist()), dtype=np.uint8)
            self.first_s = np.full(self.hits.shape, np.inf, dtype=np.float32)
        else:
            o, shape = self.origin, np.array(self.hits.shape)
            new_lo, new_hi = np.minimum(o, lo - 8), np.maximum(o + shape - 1, hi + 8)
            if (new_lo < o).any() or (new_hi > o + shape - 1).any():
                size = tuple((new_hi - new_lo + 1).tolist())
                hits, first = np.zeros(size, dtype=np.uint8), np.full(size, np.inf, dtype=np.float32)
                a = o - new_lo
                hits[a[0]:a[0] + shape[0], a[1]:a[1] + shape[1]] = self.hits
                first[a[0]:a[0] + shape[0], a[1]:a[1] + shape[1]] = self.first_s
                self.origin, self.hits, self.first_s = new_lo, hits, first
        idx = c - self.origin
        # a cell named twice gets the same value twice: one hit per cell and frame without sorting the cells
        flat = np.ravel_multi_index((idx[:, 0], idx[:, 1]), self.hits.shape)
        h = self.hits.reshape(-1)  # views: one hit per cell and frame, at most max_hits
        h[flat] = np.minimum(h[flat].astype(np.int32) + 1, max_hits).astype(np.uint8)
        f = self.first_s.reshape(-1)
        f[flat] = np.minimum(f[flat], np.float32(t_s))
        return dropped

    def field(self, lo_xy: np.ndarray, hi_xy: np.ndarray, level: int, cfg: ScanConfig,
              before_s: float = math.inf) -> Optional["Field"]:
        """The smoothed occupancy over the box [lo_xy, hi_xy] of the cells first hit at or before ``before_s``,
        at ``2**level`` cells a field cell (None: nothing mapped)."""
        window = self.occupancy(lo_xy, hi_xy, cfg, before_s)
        return None if window is None else smoothed(window, level, self.cell_m, cfg)

    def occupancy(self, lo_xy: np.ndarray, hi_xy: np.ndarray, cfg: ScanConfig,
                  before_s: float = math.inf) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """(occupancy of the cells over the box first hit at or before ``before_s``, the box's first cell as a
        ground-plane point) - what ``field`` smooths at every level (None: nothing mapped there)."""
        if self.hits.size == 0:
            return None
        a = np.maximum(self.cells(lo_xy) - self.origin, 0)
        b = np.minimum(self.cells(hi_xy) - self.origin + 1, np.array(self.hits.shape))
        if (b <= a).any():
            return None
        hits = self.hits[a[0]:b[0], a[1]:b[1]]
        if math.isfinite(before_s):
            hits = np.where(self.first_s[a[0]:b[0], a[1]:b[1]] <= before_s, hits, 0)
        return occupancy_table(cfg.hits_scale)[hits], (self.origin + a) * self.cell_m

    def to_state(self) -> dict[str, Any]:
        return {"cell_m": self.cell_m, "origin": self.origin.tolist()}

    @staticmethod
    def from_state(meta: dict[str, Any], hits: Optional[np.ndarray], first_s: Optional[np.ndarray]) -> "StructureGrid":
        """The grid of a save; a missing or malformed part raises StateError."""
        g = StructureGrid(float(meta["cell_m"]))
        if not (g.cell_m > 0 and math.isfinite(g.cell_m)):
            raise StateError("scan", "cell_m must be a positive number")
        origin = np.asarray(meta["origin"], dtype=np.int64)
        if origin.shape != (2,):
            raise StateError("scan", "origin must be two cell indices")
        if hits is None or first_s is None:
            raise StateError("scan_hits", "is missing (with scan_first_s)")
        if hits.ndim != 2 or hits.dtype != np.uint8:
            raise StateError("scan_hits", "must be a 2-D uint8 array")
        if first_s.shape != hits.shape or first_s.dtype != np.float32:
            raise StateError("scan_first_s", "must be a float32 array shaped like scan_hits")
        g.origin, g.hits, g.first_s = origin, np.array(hits), np.array(first_s)
        return g


@functools.lru_cache(maxsize=8)
def occupancy_table(hits_scale: float) -> np.ndarray:
    """``1 - exp(-hits / hits_scale)`` (float32) for every uint8 hit count: a cell's occupancy is looked up, not
    computed per cell and frame (the same float32 operations, so the same values)."""
    table = 1.0 - np.exp(-np.arange(256, dtype=np.uint8).astype(np.float32) / hits_scale)
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=8)
def gaussian_weights(sigma: float) -> np.ndarray:
    """The correlation weights ``ndimage.gaussian_filter1d`` uses for ``sigma`` (read off its response to an
    impulse: each weight times 1 plus zeros), so that two ``correlate1d`` passes give ``gaussian_filter``'s values
    without recomputing them per call."""
    from scipy import ndimage

    r = int(4.0 * sigma + 0.5)  # gaussian_filter1d's radius at its default truncate=4
    impulse = np.zeros(2 * r + 1)
    impulse[r] = 1.0
    weights = ndimage.gaussian_filter1d(impulse, sigma, mode="constant")[::-1].copy()
    weights.setflags(write=False)
    return weights


def smoothed(window: tuple[np.ndarray, np.ndarray], level: int, cell_m: float, cfg: ScanConfig) -> Optional["Field"]:
    """The ``Field`` of an occupancy window (``StructureGrid.occupancy``) at ``2**level`` cells a field cell: the
    maximum over each block of cells, smoothed (``blur_cells``) and scaled to a peak of 1 (None: empty)."""
    from scipy import ndimage

    occ, lo_xy = window
    f = 2 ** level
    if f > 1:
        n0, n1 = (occ.shape[0] // f) * f, (occ.shape[1] // f) * f
        if n0 == 0 or n1 == 0:
            return None
        blocks = occ[:n0, :n1]  # the maximum over each f x f block, as a maximum of f * f strided views
        occ = functools.reduce(np.maximum, (blocks[i::f, j::f] for i in range(f) for j in range(f)))
    blurred = np.empty_like(occ)  # ndimage.gaussian_filter(occ, blur_cells, mode="constant"), its weights kept
    weights = gaussian_weights(float(cfg.blur_cells))
    ndimage.correlate1d(occ, weights, 0, blurred, mode="constant", cval=0.0, origin=0)
    ndimage.correlate1d(blurred, weights, 1, blurred, mode="constant", cval=0.0, origin=0)
    occ = blurred
    peak = float(occ.max())
    if peak <= 0:
        return None
    return Field(occ / peak, lo_xy, cell_m * f)


class Field:
    """A smoothed occupancy grid with bilinear values and gradients (cell centres at (i + 0.5) * cell)."""

    def __init__(self, occ: np.ndarray, lo_xy: np.ndarray, cell_m: float) -> None:
        self.occ, self.lo, self.cell = occ, lo_xy.astype(np.float64), float(cell_m)

    def score(self, xy: np.ndarray, k: int) -> np.ndarray:
        """Mean value (nearest cell) at the points shifted by every whole number of cells in [-k, k] along both
        axes: ((2k + 1)^2,), the first axis's shift major."""
        g = np.floor((xy - self.lo) / self.cell).astype(np.int64)
        n0, n1 = self.occ.shape
        p = 2 * k + 1  # a margin of zeros (outside the field) wide enough for every shift of a kept point
        padded = np.zeros((n0 + 2 * p, n1 + 2 * p), dtype=np.float32)
        padded[p:p + n0, p:p + n1] = self.occ
        keep = (g[:, 0] >= -k - 1) & (g[:, 0] <= n0 + k) & (g[:, 1] >= -k - 1) & (g[:, 1] <= n1 + k)
        w = n1 + 2 * p
        flat = (g[keep, 0] + p) * w + (g[keep, 1] + p)
        a = np.arange(-k, k + 1)
        shifts = (a[:, None] * w + a[None, :]).reshape(-1)
        return padded.ravel()[flat[None, :] + shifts[:, None]].sum(axis=1, dtype=np.float64) / max(len(xy), 1)

    def sample(self, xy: np.ndarray, cols: int = 2) -> tuple[np.ndarray, np.ndarray]:
        """Values (N,) and gradients (N, ``cols``: the first two filled, the rest 0) per metre at ``xy``; 0
        outside."""
        return self.sample_xy(xy.T, cols)

    def sample_xy(self, q: np.ndarray, cols: int = 2) -> tuple[np.ndarray, np.ndarray]:
        """``sample`` of the points given as a (2, N) array of their coordinates (numpy is slow on rows of two);
        ``cols=0``: the values only (no gradients computed)."""
        g = (q - self.lo[:, None]) / self.cell - 0.5
        fl = np.floor(g)
        n0, n1 = self.occ.shape
        grad = np.zeros((q.shape[1], cols))
        everywhere = q.shape[1] > 0 and fl.min() >= 0
        if everywhere:
            top = fl.max(axis=1)
            everywhere = top[0] < n0 - 1 and top[1] < n1 - 1
        if not everywhere:
            ok = (fl[0] >= 0) & (fl[1] >= 0) & (fl[0] < n0 - 1) & (fl[1] < n1 - 1)
            val = np.zeros(q.shape[1])
            if not ok.any():
                return val, grad
            g, fl = g[:, ok], fl[:, ok]
        ij = fl.astype(np.int64)
        # the 2x2 cells around each point from one gather: m[r, s] = occ[i + r, j + s]
        m = self.occ.reshape(-1)[(ij[0] * n1 + ij[1]) + np.array([[[0], [1]], [[n1], [n1 + 1]]])]
        fr = g - fl  # (a, b): each point's place between the cells along the two axes
        fr1 = 1 - fr
        rows = fr1[1] * m[:, 0] + fr[1] * m[:, 1]  # rows i and i + 1 interpolated along the second axis
        v = fr1[0] * rows[0] + fr[0] * rows[1]
        if cols == 0:
            if everywhere:
                return v, grad
            val[ok] = v
            return val, grad
        d0, d1 = m[1] - m[0], m[:, 1] - m[:, 0]  # differences along the first axis and along the second
        g0 = (fr1[1] * d0[0] + fr[1] * d0[1]) / self.cell
        g1 = (fr1[0] * d1[0] + fr[0] * d1[1]) / self.cell
        if everywhere:
            grad[:, 0], grad[:, 1] = g0, g1
            return v, grad
        val[ok], grad[ok, 0], grad[ok, 1] = v, g0, g1
        return val, grad
