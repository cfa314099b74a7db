"""A ground-plane grid of record indices, so that a search around a point reads the objects of a few cells
instead of every object of the day (ObjectStore.nearby). Cells hold each record's current centre; a search
returns a superset (every record whose cell is within reach, by the largest object size ever seen) that the
caller filters with its exact test, so results do not depend on the cell size."""
from __future__ import annotations

import math

import numpy as np

GRID_CELL_M = 4.0  # side of a grid cell on the ground (x, y): about a room's width


class GridIndex:
    """Record index -> ground cell of its centre, and cell -> record indices."""

    def __init__(self, cell_m: float = GRID_CELL_M) -> None:
        if not cell_m > 0:
            raise ValueError(f"cell_m must be > 0, got {cell_m}")
        self.cell_m = float(cell_m)
        self.cells: dict[tuple[int, int], set[int]] = {}
        self.cell_of: dict[int, tuple[int, int]] = {}
        self._sorted: dict[tuple[int, int], np.ndarray] = {}  # cell -> its members ascending (built when read)
        self.max_half_size_m = 0.0  # largest half size ever placed: a search reaches this much farther

    def place(self, index: int, centre_w: np.ndarray, size_m: float) -> None:
        """Put record ``index`` at ``centre_w`` (a non-finite centre: in no cell, never found)."""
        x, y = float(centre_w[0]), float(centre_w[1])
        cell = (math.floor(x / self.cell_m), math.floor(y / self.cell_m)) if math.isfinite(x) and math.isfinite(y) \
            and math.isfinite(float(centre_w[2])) else None
        old = self.cell_of.get(index)
        if old != cell:
            if old is not None:
                self.cells[old].discard(index)
                del self.cell_of[index]
                self._sorted.pop(old, None)
            if cell is not None:
                self.cells.setdefault(cell, set()).add(index)
                self.cell_of[index] = cell
                self._sorted.pop(cell, None)
        if math.isfinite(size_m):
            self.max_half_size_m = max(self.max_half_size_m, 0.5 * float(size_m))

    def candidates(self, p_w: np.ndarray, radius_m: float) -> np.ndarray:
        """Ascending record indices whose centre may lie within ``radius_m`` + half their size of ``p_w``
        (every one that does, and others)."""
        reach = float(radius_m) + self.max_half_size_m + 1e-6  # a margin above the cells' rounding
        if not (math.isfinite(reach) and math.isfinite(p_w[0]) and math.isfinite(p_w[1])):
            return np.fromiter(sorted(self.cell_of), np.int64, len(self.cell_of))
        x0, x1 = math.floor((p_w[0] - reach) / self.cell_m), math.floor((p_w[0] + reach) / self.cell_m)
        y0, y1 = math.floor((p_w[1] - reach) / self.cell_m), math.floor((p_w[1] + reach) / self.cell_m)
        if (x1 - x0 + 1) * (y1 - y0 + 1) > len(self.cells):  # a search wider than the mapped cells
            found = [c for c in self.cells if x0 <= c[0] <= x1 and y0 <= c[1] <= y1]
        else:
            found = [(cx, cy) for cx in range(x0, x1 + 1) for cy in range(y0, y1 + 1) if (cx, cy) in self.cells]
        parts = [self._members(c) for c in found]
        if len(parts) == 1:
            return parts[0].copy()
        return np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)

    def _members(self, cell: tuple[int, int]) -> np.ndarray:
        """The record indices of ``cell``, ascending (kept until its members change)."""
        a = self._sorted.get(cell)
        if a is None:
            members = self.cells[cell]
            a = self._sorted[cell] = np.sort(np.fromiter(members, np.int64, len(members)))
        return a
