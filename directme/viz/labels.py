"""Label de-overlap: each text label goes beside its anchor where it covers no label placed before it and
no obstacle (the wearer, markers), by a greedy search over positions around the anchor on widening rings.

Pure numpy on display boxes (x0, y0, x1, y1 in pixels), so it is tested without drawing; ``report`` feeds
it the sizes matplotlib measured and moves the texts to the boxes it returns."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

# directions tried around an anchor, in order: right, upper right, lower right, left, upper left, lower left,
# above, below (a label reads best to the right of its point)
_DIRECTIONS_DEG = (0.0, 35.0, -35.0, 180.0, 145.0, -145.0, 90.0, -90.0)


def overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    """True when the boxes (x0, y0, x1, y1) share an area (touching edges do not count)."""
    return bool(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def _hits(box: np.ndarray, boxes: np.ndarray) -> bool:
    """True when ``box`` overlaps any row of ``boxes`` (M, 4)."""
    return bool(np.any((box[0] < boxes[:, 2]) & (boxes[:, 0] < box[2]) & (box[1] < boxes[:, 3])
                       & (boxes[:, 1] < box[3])))


def _candidates(anchor: np.ndarray, size: np.ndarray, gap: float, rings: int) -> list[np.ndarray]:
    w, h = float(size[0]), float(size[1])
    out = []
    for k in range(rings):
        r = gap + k * (h + gap)
        for deg in _DIRECTIONS_DEG:
            c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
            cx = anchor[0] + c * (r + w / 2) if abs(c) > 1e-9 else anchor[0]
            cy = anchor[1] + s * (r + h / 2) if abs(s) > 1e-9 else anchor[1]
            out.append(np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]))
    return out


def place_labels(anchors: np.ndarray, sizes: np.ndarray, obstacles: Sequence[np.ndarray] = (),
                 bounds: Optional[np.ndarray] = None, gap: float = 4.0, rings: int = 5) -> list[Optional[np.ndarray]]:
    """Boxes (x0, y0, x1, y1) for labels of ``sizes`` (N, 2) beside ``anchors`` (N, 2), in priority order.

    A label takes the first position around its anchor (``gap`` pixels away, then ``rings`` widening rings)
    whose box stays inside ``bounds`` and overlaps neither a box placed before it nor an ``obstacle``;
    ``None`` when no position fits (the label is left out rather than drawn over another one)."""
    placed = np.asarray(obstacles, dtype=np.float64).reshape(-1, 4)
    out: list[Optional[np.ndarray]] = []
    for anchor, size in zip(np.asarray(anchors, dtype=np.float64).reshape(-1, 2),
                            np.asarray(sizes, dtype=np.float64).reshape(-1, 2)):
        box = next((b for b in _candidates(anchor, size, gap, rings)
                    if (bounds is None or (b[0] >= bounds[0] and b[1] >= bounds[1] and b[2] <= bounds[2]
                                           and b[3] <= bounds[3]))
                    and not _hits(b, placed)), None)
        if box is not None:
            placed = np.vstack([placed, box])
        out.append(box)
    return out


def place_required(anchors: np.ndarray, sizes: np.ndarray, obstacles: Sequence[np.ndarray] = (),
                   bounds: Optional[np.ndarray] = None, gap: float = 4.0, rings: int = 5) -> list[np.ndarray]:
    """Boxes for labels that must be drawn (an answer's objects), in priority order: as ``place_labels``, but a
    label with no free position is never left out - it takes the first position clear of the labels placed
    before it (covering markers if it must), else the first inside ``bounds``, else the nearest one."""
    obstacles = np.asarray(obstacles, dtype=np.float64).reshape(-1, 4)
    placed = np.zeros((0, 4))
    out: list[np.ndarray] = []
    for anchor, size in zip(np.asarray(anchors, dtype=np.float64).reshape(-1, 2),
                            np.asarray(sizes, dtype=np.float64).reshape(-1, 2)):
        every = _candidates(anchor, size, gap, rings)
        inside = [b for b in every if bounds is None or (b[0] >= bounds[0] and b[1] >= bounds[1]
                                                         and b[2] <= bounds[2] and b[3] <= bounds[3])] or every[:1]
        box = next((b for b in inside if not _hits(b, np.vstack([obstacles, placed]))), None)
        if box is None:
            box = next((b for b in inside if not _hits(b, placed)), inside[0])
        placed = np.vstack([placed, box])
        out.append(box)
    return out


def point_box(xy: np.ndarray, radius_px: float) -> np.ndarray:
    """The square box of a marker of ``radius_px`` at display point ``xy``."""
    return np.array([xy[0] - radius_px, xy[1] - radius_px, xy[0] + radius_px, xy[1] + radius_px])


def polyline_boxes(points: np.ndarray, radius_px: float, step_px: float = 3.0) -> np.ndarray:
    """(M, 4) small boxes along a display-space polyline (N, 2), one every ``step_px``: a line as obstacles."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(pts) < 2:
        return np.array([point_box(p, radius_px) for p in pts]).reshape(-1, 4)
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    s = np.r_[0.0, np.cumsum(seg)]
    along = np.arange(0.0, s[-1] + step_px, step_px)
    xy = np.stack([np.interp(along, s, pts[:, 0]), np.interp(along, s, pts[:, 1])], axis=1)
    return np.c_[xy - radius_px, xy + radius_px]
