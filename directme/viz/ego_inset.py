"""The ego inset of a question picture: the memory seen from the wearer at the question time, heading up.

The wearer is at the centre, facing the top (12 o'clock); the ring carries the clock ticks (12 / 3 / 6 / 9
named, the other hours as small ticks) and its radius in metres. Objects sit at their ego-frame ground
position (x forward = up, y left = left), the answer's objects with a red arrow and their clock hour and
distance; a perspective question's imagined heading is a dashed arrow from the imagined observer to the
object faced."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from .._lazy import require
from ..geometry import EgoFrame, azimuth_deg, clock_hour
from .palette import ClassPalette
from .question import QuestionView
from .style import ReportStyle

ANSWER_RGB = (0.85, 0.1, 0.1)
IMAGINED_RGB = (0.95, 0.55, 0.0)


@dataclass(frozen=True, eq=False)
class EgoInset:
    """What the inset drew, in its own coordinates (metres; x to the wearer's right, y ahead)."""

    ax: Any  # the matplotlib Axes
    radius_m: float
    points: dict[str, np.ndarray] = field(default_factory=dict)  # node id -> (2,) drawn position
    imagined: Optional[np.ndarray] = None  # (2, 2): start and end of the imagined heading arrow
    labels: list = field(default_factory=list)  # (text, anchor (2,), text kwargs) for the label placer
    lines: list = field(default_factory=list)  # (2, 2) arrows drawn (labels keep off them)


def ego_xy(ego: EgoFrame, points_w: np.ndarray) -> np.ndarray:
    """(N, 2) inset coordinates of world points: x = to the right, y = ahead (heading up)."""
    p = ego.to_ego(np.asarray(points_w, dtype=np.float64).reshape(-1, 3))
    return np.stack([-p[:, 1], p[:, 0]], axis=1)


def _clock_face(ax: Any, radius: float) -> None:
    patches = require("matplotlib.patches", "viz", "matplotlib")
    ax.add_patch(patches.Circle((0, 0), radius, fill=False, color="0.55", lw=1.0, zorder=1))
    ax.add_patch(patches.Circle((0, 0), radius / 2, fill=False, color="0.85", lw=0.6, ls=":", zorder=1))
    for hour in range(1, 13):
        a = np.radians(90.0 - 30.0 * hour)  # 12 at the top, 3 to the right
        d = np.array([np.cos(a), np.sin(a)])
        major = hour % 3 == 0
        ax.plot(*np.stack([d * radius * (0.9 if major else 0.95), d * radius]).T, color="0.3" if major else "0.6",
                lw=1.4 if major else 0.7, zorder=1)
        if major:
            ax.text(*(d * radius * 1.12), f"{hour}", ha="center", va="center", fontsize=9, weight="bold",
                    color="0.2", zorder=3)
    ax.text(radius * 0.71, -radius * 0.71, f"{radius:.1f} m", fontsize=6.5, color="0.45", ha="left", va="top")
    ax.text(radius * 0.36, -radius * 0.36, f"{radius / 2:.1f} m", fontsize=6, color="0.6", ha="left", va="top")


def _radius(dists: np.ndarray, target_dists: np.ndarray, style: ReportStyle) -> float:
    ref = target_dists if len(target_dists) else np.sort(dists)[:style.inset_max_objects]
    far = float(ref.max()) if len(ref) else 0.0
    return max(style.inset_min_radius_m, float(np.ceil(far * 1.15 * 2) / 2))


def draw_ego_inset(ax: Any, snapshot: Any, ego: EgoFrame, targets: Sequence[str], palette: ClassPalette,
                   question: Optional[QuestionView], style: ReportStyle) -> EgoInset:
    """Draw the heading-up ego view of ``snapshot`` at ``ego`` into ``ax`` (see the module docstring)."""
    objs = [(nid, o) for nid, o in snapshot.objects.items() if o.present or nid in targets]
    xy = ego_xy(ego, np.stack([o.position_w for _, o in objs])) if objs else np.zeros((0, 2))
    dist = np.linalg.norm(xy, axis=1)
    is_target = np.array([nid in targets for nid, _ in objs], dtype=bool)
    radius = _radius(dist, dist[is_target] if len(objs) else dist, style)
    order = np.argsort(dist, kind="stable")  # the answer's objects always, then the nearest others up to the cap
    shown = [i for i in order if is_target[i]] + \
        [i for i in order if not is_target[i] and dist[i] <= radius][:style.inset_max_objects]
    _clock_face(ax, radius)
    points: dict[str, np.ndarray] = {}
    labels: list = []
    lines: list = []
    for i in shown:
        nid, o = objs[i]
        p = xy[i]
        points[nid] = p
        tgt = bool(is_target[i])
        ax.scatter([p[0]], [p[1]], s=60 if tgt else 28, c=[palette.color(o.label) / 255.0], zorder=4,
                   edgecolors="black" if tgt else "none", linewidths=1.3)
        if tgt:
            lines.append(np.stack([np.zeros(2), p]))
            ax.annotate("", xy=p, xytext=(0, 0), zorder=3,
                        arrowprops=dict(arrowstyle="-|>", color=ANSWER_RGB, lw=1.6, shrinkA=5, shrinkB=5))
            hour = clock_hour(azimuth_deg(np.array([p[1], -p[0]])))
            labels.append((f"{o.label}\n{hour} o'clock, {dist[i]:.1f} m", p, {}))
    imagined = None
    if question is not None and question.facing_id is not None and question.facing_id in snapshot.objects:
        start = ego_xy(ego, snapshot.objects[question.at_id].position_w)[0] if question.at_id else np.zeros(2)
        end = ego_xy(ego, snapshot.objects[question.facing_id].position_w)[0]
        imagined = np.stack([start, end])
        lines.append(imagined)
        ax.annotate("", xy=end, xytext=start, zorder=5, arrowprops=dict(
            arrowstyle="-|>", color=IMAGINED_RGB, lw=2.0, ls="--", shrinkA=0, shrinkB=6))
        labels.insert(0, (f"imagined heading:\nfacing the {snapshot.objects[question.facing_id].label}",
                          (start + end) / 2, {"color": (0.7, 0.35, 0.0)}))
    ax.plot([0], [0], marker=(3, 0, 0), ms=11, color="black", zorder=7)  # the wearer, pointing ahead
    lim = radius * 1.25
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_color("0.8")
    ax.set_title("you at the question time, heading up", fontsize=8.5)
    return EgoInset(ax, radius, points, imagined, labels, lines)
