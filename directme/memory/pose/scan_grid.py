"""The structure grid of scan registration (scan.py): hit counts on the ground plane, in tiles made where structure
is hit (a frame's cost depends on the area near it, not on the area mapped over the day), and the smoothed
occupancy fields a frame is registered on, with bilinear values and gradients."""
from __future__ import annotations

import functools
import math
from typing import Any, Mapping, Optional

import numpy as np

from ..._atomic import StateError
from ..config import ScanConfig


class StructureGrid:
    """Hit counts of structure points on the ground plane (cells of ``cell_m``) and the time each cell was first
    hit, kept in square tiles of ``tile_cells`` cells a side made where structure is hit: a day's walk through
    many places stores the areas seen, not the box around them, and a frame reads and writes only the tiles
    near it. At most ``max_cells`` cells are held: a new tile beyond that takes the place of the tile hit
    longest ago (structure far back along the day's route is forgotten; registration goes on).

    The grid also keeps the box a dense grid growing to hold every hit would have (its first cell ``origin``
    and its ``shape``, grown 8 cells past the hits): a window read is cut to it, so the fields (their first cell,
    their blocks of cells) are those of a dense grid, whatever the tiles."""

    def __init__(self, cell_m: float, tile_cells: int = 64, max_cells: int = 1 << 62) -> None:
        self.cell_m = float(cell_m)
        self.tile = int(tile_cells)
        self.max_tiles = max(1, int(max_cells) // (self.tile * self.tile))
        self.origin = np.zeros(2, dtype=np.int64)  # first cell of the box a dense grid would cover
        self.shape = np.zeros(2, dtype=np.int64)  # its size in cells (0, 0: nothing hit yet)
        self.slot: dict[tuple[int, int], int] = {}  # tile (cell // tile_cells) -> its row in the stacks
        self.keys = np.zeros((0, 2), dtype=np.int64)  # each row's tile
        self.hits = np.zeros((0, self.tile, self.tile), dtype=np.uint8)
        # time of each cell's first hit (inf: never)
        self.first_s = np.zeros((0, self.tile, self.tile), dtype=np.float32)
        self.last_s = np.zeros(0)  # time each row's tile was last hit (the one to forget when full)
        self.dropped_tiles = 0  # tiles forgotten to stay within max_cells

    def __len__(self) -> int:
        """Cells hit."""
        return int(np.count_nonzero(self.hits[:len(self.slot)]))

    @property
    def empty(self) -> bool:
        return not self.slot

    def cells(self, xy: np.ndarray) -> np.ndarray:
        return np.floor(xy / self.cell_m).astype(np.int64)

    def add(self, xy: np.ndarray, max_hits: int, t_s: float) -> int:
        """Count one hit in the cell of each point (once per cell). Returns how many points were dropped (only when
        this frame's own tiles would hold more than ``max_cells``)."""
        if not len(xy):
            return 0
        c = self.cells(xy)
        c_lo, c_hi = c.min(axis=0), c.max(axis=0)
        self._grow_box(c_lo, c_hi)
        t = c // self.tile
        keys, inverse = _tiles_hit(t, c_lo // self.tile, c_hi // self.tile)
        rows = np.empty(len(keys), dtype=np.int64)
        for j, key in enumerate(keys):
            r = self.slot.get(key)
            rows[j] = self._new_row(key, set(keys)) if r is None else r
        row = rows[inverse]
        kept = row >= 0  # none only when this frame's own tiles fill max_cells
        dropped = len(kept) - int(np.count_nonzero(kept))
        if dropped:
            rows, row, c, t = rows[rows >= 0], row[kept], c[kept], t[kept]
        self.last_s[rows] = t_s
        local = c - t * self.tile
        flat = (row * self.tile + local[:, 0]) * self.tile + local[:, 1]
        # a cell named twice gets the same value twice: one hit per cell and frame without sorting the cells
        h = self.hits.reshape(-1)
        if 1 <= max_hits <= 255:  # min(h + 1, max_hits) as min(h, max_hits - 1) + 1: in uint8, no overflow
            bumped = np.minimum(h[flat], np.uint8(max_hits - 1))
            bumped += 1
            h[flat] = bumped
        else:
            h[flat] = np.minimum(h[flat].astype(np.int32) + 1, max_hits).astype(np.uint8)
        f = self.first_s.reshape(-1)
        f[flat] = np.minimum(f[flat], np.float32(t_s))
        return dropped

    def _grow_box(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Grow the dense grid's box as that grid grew: to 8 cells past the hits."""
        if not self.shape.any():
            self.origin, self.shape = lo - 8, hi - lo + 17
            return
        o, end = self.origin, self.origin + self.shape - 1
        new_lo, new_hi = np.minimum(o, lo - 8), np.maximum(end, hi + 8)
        if (new_lo < o).any() or (new_hi > end).any():
            self.origin, self.shape = new_lo, new_hi - new_lo + 1

    def _new_row(self, key: tuple[int, int], busy: set[tuple[int, int]]) -> int:
        """A row of the stacks for a new tile: a new one, or (at ``max_cells``) that of the tile hit longest ago
        outside ``busy`` (-1: none)."""
        n = len(self.slot)
        if n < self.max_tiles:
            if n == len(self.hits):  # the stacks double (up to max_cells): amortised, as a list grows
                more = min(max(8, n), self.max_tiles - n)
                self.hits = np.concatenate([self.hits, np.zeros((more, self.tile, self.tile), np.uint8)])
                self.first_s = np.concatenate([self.first_s, np.full((more, self.tile, self.tile), np.inf, np.float32)])
                self.keys = np.concatenate([self.keys, np.zeros((more, 2), np.int64)])
                self.last_s = np.concatenate([self.last_s, np.full(more, -np.inf)])
            r = n
        else:
            last = self.last_s[:n].copy()
            last[[self.slot[k] for k in busy if k in self.slot]] = np.inf  # this frame's own tiles stay
            r = int(np.argmin(last))
            if last[r] == np.inf:
                return -1
            del self.slot[tuple(self.keys[r].tolist())]
            self.hits[r], self.first_s[r] = 0, np.inf
            self.dropped_tiles += 1
        self.slot[key] = r
        self.keys[r] = key
        return r

    def window(self, c0: np.ndarray, c1: np.ndarray, before_s: float = math.inf) -> np.ndarray:
        """Hit counts of the cells [c0, c1) (absolute cell indices) first hit at or before ``before_s`` (0
        elsewhere)."""
        (a0, a1), (b0, b1) = c0.tolist(), c1.tolist()  # Python ints: a window crosses few tiles, each a few slices
        out = np.zeros((b0 - a0, b1 - a1), dtype=np.uint8)
        T, dated = self.tile, math.isfinite(before_s)
        for ti in range(a0 // T, (b0 - 1) // T + 1):
            for tj in range(a1 // T, (b1 - 1) // T + 1):
                r = self.slot.get((ti, tj))
                if r is None:
                    continue
                i0, i1 = max(a0, ti * T), min(b0, ti * T + T)  # the tile's part inside the window, in absolute cells
                j0, j1 = max(a1, tj * T), min(b1, tj * T + T)
                src = (slice(i0 - ti * T, i1 - ti * T), slice(j0 - tj * T, j1 - tj * T))
                dst = out[i0 - a0:i1 - a0, j0 - a1:j1 - a1]
                if dated:
                    np.copyto(dst, self.hits[r][src], where=self.first_s[r][src] <= before_s)
                else:
                    dst[...] = self.hits[r][src]
        return out

    def dense(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first cell, hit counts, first-hit times) over the whole box: a dense copy (tests, small grids)."""
        c0, c1 = self.origin, self.origin + self.shape
        first = np.full(tuple(self.shape.tolist()), np.inf, np.float32)
        for key, r in self.slot.items():
            base = np.array(key) * self.tile
            a, b = np.maximum(c0, base), np.minimum(c1, base + self.tile)
            if (b > a).all():
                first[a[0] - c0[0]:b[0] - c0[0], a[1] - c0[1]:b[1] - c0[1]] = \
                    self.first_s[r][a[0] - base[0]:b[0] - base[0], a[1] - base[1]:b[1] - base[1]]
        return c0, self.window(c0, c1), first

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
        if self.empty:
            return None
        a = np.maximum(self.cells(lo_xy), self.origin)
        b = np.minimum(self.cells(hi_xy) + 1, self.origin + self.shape)
        if (b <= a).any():
            return None
        return occupancy_table(cfg.hits_scale)[self.window(a, b, before_s)], a * self.cell_m

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        n = len(self.slot)
        return ({"cell_m": self.cell_m, "origin": self.origin.tolist(), "shape": self.shape.tolist(),
                 "tile_cells": self.tile, "dropped_tiles": self.dropped_tiles},
                {"scan_tile_keys": self.keys[:n], "scan_tile_hits": self.hits[:n],
                 "scan_tile_first_s": self.first_s[:n], "scan_tile_last_s": self.last_s[:n]})

    @staticmethod
    def from_state(meta: dict[str, Any], arrays: Mapping[str, np.ndarray], tile_cells: int = 64,
                   max_cells: int = 1 << 62) -> "StructureGrid":
        """The grid of a save (tiles; or the dense ``scan_hits``/``scan_first_s`` of saves before the tiles, cut
        into tiles of ``tile_cells``); a missing or malformed part raises StateError."""
        cell_m = float(meta["cell_m"])
        if not (cell_m > 0 and math.isfinite(cell_m)):
            raise StateError("scan", "cell_m must be a positive number")
        origin = np.asarray(meta["origin"], dtype=np.int64)
        if origin.shape != (2,):
            raise StateError("scan", "origin must be two cell indices")
        if "scan_tile_hits" in arrays:
            return _from_tiles(meta, arrays, cell_m, origin, max_cells)
        hits, first_s = arrays.get("scan_hits"), arrays.get("scan_first_s")
        if hits is None or first_s is None:
            raise StateError("scan_hits", "is missing (with scan_first_s)")
        if hits.ndim != 2 or hits.dtype != np.uint8:
            raise StateError("scan_hits", "must be a 2-D uint8 array")
        if first_s.shape != hits.shape or first_s.dtype != np.float32:
            raise StateError("scan_first_s", "must be a float32 array shaped like scan_hits")
        g = StructureGrid(cell_m, tile_cells, max_cells)
        g.origin, g.shape = origin, np.array(hits.shape, dtype=np.int64)
        T = g.tile
        t0, t1 = origin // T, (origin + g.shape - 1) // T
        for ti in range(int(t0[0]), int(t1[0]) + 1):  # the dense grid's tiles with a hit, each hit at its first time
            for tj in range(int(t0[1]), int(t1[1]) + 1):
                a = np.maximum(origin, (ti * T, tj * T)) - origin
                b = np.minimum(origin + g.shape, (ti * T + T, tj * T + T)) - origin
                block = hits[a[0]:b[0], a[1]:b[1]]
                if not block.any():
                    continue
                r = g._new_row((ti, tj), set())
                d = a + origin - (ti * T, tj * T)
                g.hits[r, d[0]:d[0] + block.shape[0], d[1]:d[1] + block.shape[1]] = block
                g.first_s[r, d[0]:d[0] + block.shape[0], d[1]:d[1] + block.shape[1]] = first_s[a[0]:b[0], a[1]:b[1]]
                g.last_s[r] = float(np.max(np.where(block > 0, first_s[a[0]:b[0], a[1]:b[1]], -np.inf)))
        return g


def _tiles_hit(t: np.ndarray, t_lo: np.ndarray, t_hi: np.ndarray) -> tuple[list[tuple[int, int]], np.ndarray]:
    """(the distinct tiles of ``t`` (N, 2) in (row, column) order, each row's place among them) - ``np.unique``'s
    order and inverse - counted on the box of tiles [t_lo, t_hi] (a frame's few) instead of sorting the points."""
    (l0, l1), (h0, h1) = t_lo.tolist(), t_hi.tolist()
    if (h0 - l0 + 1) * (h1 - l1 + 1) > 1 << 16:  # points strewn over many tiles: sort them
        tile_id, first, inverse = np.unique(t[:, 0] * (1 << 32) + t[:, 1], return_index=True, return_inverse=True)
        return [tuple(k) for k in t[first].tolist()], inverse.reshape(-1)
    w = h1 - l1 + 1
    local = t[:, 0] * w
    local += t[:, 1]
    local -= l0 * w + l1
    ids = np.flatnonzero(np.bincount(local))
    lookup = np.empty(int(ids[-1]) + 1, dtype=np.int64)
    lookup[ids] = np.arange(len(ids))
    return list(zip((ids // w + l0).tolist(), (ids % w + l1).tolist())), lookup[local]


def _from_tiles(meta: dict[str, Any], arrays: Mapping[str, np.ndarray], cell_m: float, origin: np.ndarray,
                max_cells: int) -> StructureGrid:
    """The tiled grid of a save, its arrays checked."""
    keys, hits = arrays.get("scan_tile_keys"), arrays.get("scan_tile_hits")
    first_s, last_s = arrays.get("scan_tile_first_s"), arrays.get("scan_tile_last_s")
    tile = int(meta.get("tile_cells", 0))
    if tile < 1:
        raise StateError("scan", "tile_cells must be a positive whole number")
    if hits.ndim != 3 or hits.shape[1:] != (tile, tile) or hits.dtype != np.uint8:
        raise StateError("scan_tile_hits", "must be a uint8 array of tile_cells x tile_cells tiles")
    if first_s is None or first_s.shape != hits.shape or first_s.dtype != np.float32:
        raise StateError("scan_tile_first_s", "must be a float32 array shaped like scan_tile_hits")
    if keys is None or keys.shape != (len(hits), 2) or keys.dtype.kind != "i":
        raise StateError("scan_tile_keys", "must be one pair of whole numbers a tile")
    if last_s is None or last_s.shape != (len(hits),):
        raise StateError("scan_tile_last_s", "must be one number a tile")
    shape = np.asarray(meta.get("shape", ()), dtype=np.int64)
    if shape.shape != (2,) or (shape < 0).any():
        raise StateError("scan", "shape must be two cell counts")
    g = StructureGrid(cell_m, tile, max(int(max_cells), len(hits) * tile * tile))
    g.origin, g.shape, g.dropped_tiles = origin, shape, int(meta.get("dropped_tiles", 0))
    g.keys, g.hits, g.first_s = np.array(keys, np.int64), np.array(hits), np.array(first_s)
    g.last_s = np.array(last_s, np.float64)
    g.slot = {tuple(k): r for r, k in enumerate(g.keys.tolist())}
    if len(g.slot) != len(hits):
        raise StateError("scan_tile_keys", "names a tile twice")
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
        self._lo_col, self._lo_list = self.lo[:, None], self.lo.tolist()  # kept for the many samples of a frame
        self._flat = occ.reshape(-1)
        self._quad = np.array([[[0], [1]], [[occ.shape[1]], [occ.shape[1] + 1]]])  # offsets of the 2x2 cells

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

    def sample_xy(self, q: np.ndarray, cols: int = 2,
                  box: Optional[tuple[np.ndarray, np.ndarray]] = None) -> tuple[np.ndarray, np.ndarray]:
        """``sample`` of the points given as a (2, N) array of their coordinates (numpy is slow on rows of two);
        ``cols=0``: the values only (no gradients computed). ``box``: the points' smallest and largest coordinate
        per axis, when the caller knows them (the same points shifted): whether every point's 2x2 cells lie
        inside is then decided from the box (rounding is monotonic, so the box's cells are the extreme cells)."""
        g = q - self._lo_col
        g /= self.cell
        g -= 0.5
        fl = np.floor(g)
        n0, n1 = self.occ.shape
        grad = np.zeros((q.shape[1], cols))
        if box is None:
            everywhere = q.shape[1] > 0 and fl.min() >= 0
            if everywhere:
                top = fl.max(axis=1)
                everywhere = top[0] < n0 - 1 and top[1] < n1 - 1
        else:
            everywhere = q.shape[1] > 0 and self._inside(box)
        if not everywhere:
            ok = (fl[0] >= 0) & (fl[1] >= 0) & (fl[0] < n0 - 1) & (fl[1] < n1 - 1)
            val = np.zeros(q.shape[1])
            if not ok.any():
                return val, grad
            g, fl = g[:, ok], fl[:, ok]
        ij = fl.astype(np.int64)
        # the 2x2 cells around each point from one gather: m[r, s] = occ[i + r, j + s]
        flat = ij[0]
        flat *= n1
        flat += ij[1]
        m = self._flat.take(flat + self._quad)
        fr = g - fl  # (a, b): each point's place between the cells along the two axes
        fr1 = 1 - fr
        rows = fr1[1] * m[:, 0]
        rows += fr[1] * m[:, 1]  # rows i and i + 1 interpolated along the second axis
        v = fr1[0] * rows[0]
        v += fr[0] * rows[1]
        if cols == 0:
            if everywhere:
                return v, grad
            val[ok] = v
            return val, grad
        d0, d1 = m[1] - m[0], m[:, 1] - m[:, 0]  # differences along the first axis and along the second
        g0 = fr1[1] * d0[0]
        g0 += fr[1] * d0[1]
        g0 /= self.cell
        g1 = fr1[0] * d1[0]
        g1 += fr[0] * d1[1]
        g1 /= self.cell
        if everywhere:
            grad[:, 0], grad[:, 1] = g0, g1
            return v, grad
        val[ok], grad[ok, 0], grad[ok, 1] = v, g0, g1
        return val, grad

    def _inside(self, box: tuple[np.ndarray, np.ndarray]) -> bool:
        """Whether the 2x2 cells of every point in ``box`` (smallest, largest coordinate per axis) lie in the
        field: ``sample_xy``'s per-point arithmetic on the box's corners, in Python floats (the same doubles)."""
        (a0, a1), (b0, b1) = box[0].tolist(), box[1].tolist()
        l0, l1 = self._lo_list
        c, (n0, n1) = self.cell, self.occ.shape
        return math.floor((a0 - l0) / c - 0.5) >= 0 and math.floor((a1 - l1) / c - 0.5) >= 0 \
            and math.floor((b0 - l0) / c - 0.5) < n0 - 1 and math.floor((b1 - l1) / c - 0.5) < n1 - 1
