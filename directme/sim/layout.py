"""Procedural apartment: two rows of rooms on either side of a corridor, walls with door gaps,
and walkable areas (each room's inner rectangle, kept free of furniture) for path planning."""
from __future__ import annotations

from collections import deque
from typing import Optional

import numpy as np

from .catalog import CORRIDOR, ROOM_TYPES
from .episode import Door, Layout, Room

WALL_THICKNESS_M = 0.1
CEILING_M = 2.6
DOOR_WIDTH_M = (0.9, 1.0)
DOOR_CORNER_CLEARANCE_M = 1.15  # door edge to room corner, keeps doors out of furniture corners
DOOR_CLEAR_MARGIN_M = 0.3  # no furniture this close to a door's edges along its wall
CORNER_RESERVE_M = 1.0  # walls along y leave their ends to the furniture of walls along x


def _wall_boxes(axis: str, coord: float, a: float, b: float, gaps: list[tuple[float, float]]) -> list[np.ndarray]:
    """Boxes of a wall line (along ``axis`` at the other coordinate ``coord``) from a to b minus gaps."""
    h = WALL_THICKNESS_M / 2
    pieces, start = [], a - h
    for g0, g1 in sorted(gaps):
        pieces.append((start, g0))
        start = g1
    pieces.append((start, b + h))
    boxes = []
    for p0, p1 in pieces:
        if p1 - p0 < 1e-3:
            continue
        if axis == "x":
            boxes.append(np.array([[p0, coord - h, 0.0], [p1, coord + h, CEILING_M]]))
        else:
            boxes.append(np.array([[coord - h, p0, 0.0], [coord + h, p1, CEILING_M]]))
    return boxes


def _split(total: float, n: int, rng: np.random.Generator, min_w: float) -> list[float]:
    w = rng.uniform(0.85, 1.15, size=n)
    w = w / w.sum() * total
    return list(w) if w.min() >= min_w else [total / n] * n


def make_layout(rng: np.random.Generator, room_types: Optional[tuple[str, ...]] = None) -> Layout:
    """A random apartment: 2-3 rooms above and below a corridor, distinct room types
    (always a kitchen and a living room), one door from each room to the corridor and
    sometimes a door between neighbouring rooms. ``room_types``: draw the rooms' types from these
    instead (with repeats; an office floor, a shop)."""
    n_top, n_bottom = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    widths_top = list(rng.uniform(3.6, 5.0, size=n_top))
    total_w = float(sum(widths_top))
    n_bottom = max(1, min(n_bottom, int(total_w // 3.6)))
    widths_bottom = _split(total_w, n_bottom, rng, 3.5)
    d_bottom, d_corr, d_top = rng.uniform(3.6, 4.8), rng.uniform(1.8, 2.1), rng.uniform(3.6, 4.8)
    y_c0, y_c1 = d_bottom, d_bottom + d_corr
    y_max = y_c1 + d_top
    others = [t for t in ROOM_TYPES if t not in ("kitchen", "living room")]
    types = ["kitchen", "living room"] + list(rng.permutation(others))[: n_top + n_bottom - 2]
    types = list(rng.permutation(types))
    if room_types is not None:
        types = [str(room_types[int(i)]) for i in rng.integers(len(room_types), size=n_top + n_bottom)]
    h = WALL_THICKNESS_M / 2

    rooms: list[Room] = [Room(0, CORRIDOR, h, y_c0 + h, total_w - h, y_c1 - h)]
    cells = []  # (row, x0, x1)
    for row, widths in (("bottom", widths_bottom), ("top", widths_top)):
        x = 0.0
        for w in widths:
            cells.append((row, x, x + w))
            x += w
    for row, x0, x1 in cells:
        y0, y1 = (0.0, y_c0) if row == "bottom" else (y_c1, y_max)
        rooms.append(Room(len(rooms), str(types[len(rooms) - 1]), x0 + h, y0 + h, x1 - h, y1 - h))

    doors: list[Door] = []
    gaps: dict[tuple[str, float], list[tuple[float, float]]] = {("x", y_c0): [], ("x", y_c1): []}
    for room, (row, x0, x1) in zip(rooms[1:], cells):
        width = float(rng.uniform(*DOOR_WIDTH_M))
        lo, hi = x0 + DOOR_CORNER_CLEARANCE_M + width / 2, x1 - DOOR_CORNER_CLEARANCE_M - width / 2
        cx = float(rng.uniform(lo, hi))
        wall_y = y_c0 if row == "bottom" else y_c1
        doors.append(Door(room.room_id, 0, (cx, wall_y), width, "x"))
        gaps[("x", wall_y)].append((cx - width / 2, cx + width / 2))
    side_walls: list[tuple[float, float, float, Optional[tuple[float, float]]]] = []
    for i in range(len(cells) - 1):
        (row_a, _, xa1), (row_b, _, _) = cells[i], cells[i + 1]
        if row_a != row_b:
            continue
        y0, y1 = (0.0, y_c0) if row_a == "bottom" else (y_c1, y_max)
        gap = None
        if rng.random() < 0.4:
            width = float(rng.uniform(*DOOR_WIDTH_M))
            cy = float(rng.uniform(y0 + DOOR_CORNER_CLEARANCE_M + width / 2, y1 - DOOR_CORNER_CLEARANCE_M - width / 2))
            doors.append(Door(i + 1, i + 2, (xa1, cy), width, "y"))
            gap = (cy - width / 2, cy + width / 2)
        side_walls.append((xa1, y0, y1, gap))

    boxes = []
    boxes += _wall_boxes("x", 0.0, 0.0, total_w, [])
    boxes += _wall_boxes("x", y_max, 0.0, total_w, [])
    boxes += _wall_boxes("y", 0.0, 0.0, y_max, [])
    boxes += _wall_boxes("y", total_w, 0.0, y_max, [])
    for (axis, coord), g in gaps.items():
        boxes += _wall_boxes(axis, coord, 0.0, total_w, g)
    for x, y0, y1, gap in side_walls:
        boxes += _wall_boxes("y", x, y0, y1, [gap] if gap else [])
    return Layout(tuple(rooms), tuple(doors), np.stack(boxes), CEILING_M)


def room_path(layout: Layout, start: int, goal: int) -> list[tuple[int, Door]]:
    """Shortest room sequence start -> goal as [(next_room, door crossed), ...] (BFS)."""
    prev: dict[int, tuple[int, Door]] = {}
    queue, seen = deque([start]), {start}
    while queue:
        r = queue.popleft()
        if r == goal:
            break
        for d in layout.doors:
            if r in (d.room_a, d.room_b):
                n = d.room_b if r == d.room_a else d.room_a
                if n not in seen:
                    seen.add(n)
                    prev[n] = (r, d)
                    queue.append(n)
    path, r = [], goal
    while r != start:
        p, d = prev[r]
        path.append((r, d))
        r = p
    return path[::-1]


def room_grid(layout: Layout, cell_m: float = 0.1) -> tuple[np.ndarray, float, float]:
    """A raster of room ids (-1 outside / in walls) for fast per-pixel room look-ups."""
    x_max = max(r.x1 for r in layout.rooms) + 0.5
    y_max = max(r.y1 for r in layout.rooms) + 0.5
    nx, ny = int(np.ceil((x_max + 0.5) / cell_m)), int(np.ceil((y_max + 0.5) / cell_m))
    xs = (np.arange(nx) + 0.5) * cell_m - 0.5
    ys = (np.arange(ny) + 0.5) * cell_m - 0.5
    grid = -np.ones((ny, nx), dtype=np.int16)
    for room in layout.rooms:
        m = ((ys[:, None] >= room.y0 - 0.06) & (ys[:, None] <= room.y1 + 0.06)
             & (xs[None, :] >= room.x0 - 0.06) & (xs[None, :] <= room.x1 + 0.06))
        grid[m & (grid < 0)] = room.room_id
    return grid, cell_m, -0.5
