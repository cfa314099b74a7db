"""The wearer's metric path from the ego track alone (no scene tags needed): distance walked,
where the start lies in the current ego frame, and the turns on the way.

Positions are projected on the ground plane of the ego frame at the path's end (x forward,
y left); the polyline is simplified (Ramer-Douglas-Peucker) before turns are read from it,
so head sway and pose jitter do not count as turns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..geometry import EgoFrame, Pose, azimuth_deg, clock_hour
from ..memory.snapshot import MemorySnapshot
from .ego import direction_text


@dataclass(frozen=True, eq=False)
class MetricPath:
    """The path in [t_from, t_to]; ``points_ego`` (N, 2) in the ego frame at t_to, metres."""

    t_from: float
    t_to: float
    times_s: np.ndarray
    points_ego: np.ndarray
    walked_m: float
    turns: tuple[tuple[float, float], ...]  # (time s, signed turn in degrees: + left, - right)
    heading_change_deg: float  # where you face now relative to where you faced at t_from (+ left)

    @property
    def start_ego(self) -> np.ndarray:
        return self.points_ego[0]

    @property
    def net_m(self) -> float:
        return float(np.hypot(*self.start_ego))

    def describe(self, max_turns: int = 6) -> str:
        """One sentence a person (or an MLLM) reads, e.g. 'You walked 7.4 m in 30 s; ...'."""
        span = f"in {self.t_to - self.t_from:.0f} s ({self.t_from:.0f}-{self.t_to:.0f} s)"
        if self.walked_m < 0.3:
            parts = [f"You stayed about where you were {span} (moved {self.walked_m:.1f} m)"]
        else:
            parts = [f"You walked {self.walked_m:.1f} m {span}"]
            if self.net_m >= 0.3:
                az = azimuth_deg(self.start_ego)
                parts.append(f"at {self.t_from:.0f} s you were {self.net_m:.1f} m from here, {direction_text(az)} "
                             f"({clock_hour(az)} o'clock)")
            else:
                parts.append(f"you are back near where you were at {self.t_from:.0f} s ({self.net_m:.1f} m away)")
            if self.turns:
                shown = ", ".join(f"{_turn_word(a)} at {t:.0f} s" for t, a in self.turns[:max_turns])
                more = f" and {len(self.turns) - max_turns} more" if len(self.turns) > max_turns else ""
                parts.append(f"{len(self.turns)} turn{'s' if len(self.turns) != 1 else ''}: {shown}{more}")
            else:
                parts.append("no sharp turns")
        if abs(self.heading_change_deg) >= 20:
            side = "left" if self.heading_change_deg > 0 else "right"
            parts.append(f"you now face {abs(self.heading_change_deg):.0f} deg to the {side} of your "
                         "heading at the start")
        return "; ".join(parts) + "."


def metric_path(snapshot: MemorySnapshot, t_from: float = -np.inf, t_to: Optional[float] = None,
                tolerance_m: float = 0.25, min_turn_deg: float = 45.0) -> Optional[MetricPath]:
    """The wearer's path between t_from and t_to (default: the snapshot time); None without poses."""
    ego = snapshot.ego
    t_to = snapshot.t_s if t_to is None else float(t_to)
    keep = (ego.times_s >= t_from) & (ego.times_s <= t_to)
    if not keep.any():
        return None
    times, T = ego.times_s[keep], ego.T_world_cam[keep]
    frame = EgoFrame.from_camera(Pose(T[-1]), snapshot.up_world)
    pts = frame.to_ego(T[:, :3, 3])[:, :2]
    walked = float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1))) if len(pts) > 1 else 0.0
    start = EgoFrame.from_camera(Pose(T[0]), snapshot.up_world)
    fwd0 = frame.T_world_ego.R.T @ start.T_world_ego.R[:, 0]
    return MetricPath(float(times[0]), t_to, times, pts, walked, _turns(times, pts, tolerance_m, min_turn_deg),
                      -azimuth_deg(fwd0))


def _turns(times: np.ndarray, pts: np.ndarray, tol_m: float, min_deg: float) -> tuple[tuple[float, float], ...]:
    idx = _simplify(pts, tol_m)
    out = []
    for a, b, c in zip(idx, idx[1:], idx[2:]):
        u, v = pts[b] - pts[a], pts[c] - pts[b]
        angle = float(np.degrees(np.arctan2(u[0] * v[1] - u[1] * v[0], u @ v)))
        if abs(angle) >= min_deg:
            out.append((float(times[b]), angle))
    return tuple(out)


def _simplify(pts: np.ndarray, tol_m: float) -> list[int]:
    """Indices of the Ramer-Douglas-Peucker simplification of a 2-D polyline."""
    if len(pts) < 3:
        return list(range(len(pts)))
    keep = np.zeros(len(pts), dtype=bool)
    keep[[0, -1]] = True
    stack = [(0, len(pts) - 1)]
    while stack:
        i, j = stack.pop()
        if j - i < 2:
            continue
        seg, rel = pts[j] - pts[i], pts[i + 1:j] - pts[i]
        n = np.linalg.norm(seg)
        d = np.abs(seg[0] * rel[:, 1] - seg[1] * rel[:, 0]) / n if n > 1e-9 else np.linalg.norm(rel, axis=1)
        k = int(np.argmax(d))
        if d[k] > tol_m:
            keep[i + 1 + k] = True
            stack += [(i, i + 1 + k), (i + 1 + k, j)]
    return [int(i) for i in np.flatnonzero(keep)]


def _turn_word(angle_deg: float) -> str:
    if abs(angle_deg) >= 135:
        return "U-turn"
    return "left" if angle_deg > 0 else "right"

