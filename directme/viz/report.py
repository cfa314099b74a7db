"""Static report for people without rerun: top-down PNGs of the memory and an HTML index.

Each PNG shows the map as of one time (trajectory, places, the short graph edges, objects with labels,
the wearer's pose and heading, sized to the map); a question's PNG also draws an arrow from the wearer to
each object the answer used, and the answer text, wrapped to fit the image (the image grows with it).
matplotlib (extra ``viz``) is imported only when rendering.
"""
from __future__ import annotations

import html
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, Union

import numpy as np

from .._lazy import require
from ..errors import InvalidInputError
from ..geometry import ground_basis
from .common import (answer_line, answer_targets, class_color, ego_frame_at, graph_edges, labels_of, to_ground,
                     trajectory_w)

_TRAJ_RGB = (0.35, 0.35, 0.35)
_ANSWER_RGB = (0.85, 0.1, 0.1)
_EDGE_RGB = (0.86, 0.86, 0.86)
MAX_EDGE_M = 2.5  # longer graph edges (across rooms) would only clutter the map
_CAPTION_PT = 8.5  # caption font size; DejaVu Sans Mono advances 0.602 em per character
_CAPTION_MAX_LINES = 12


@dataclass(frozen=True)
class ReportItem:
    """One PNG of the report: the memory as of ``snapshot.t_s`` and optionally a question's answer."""

    snapshot: Any  # directme.memory.snapshot.MemorySnapshot
    answer: Any = None  # directme.answerers.base.Answer


@dataclass(frozen=True, eq=False)
class TopDownView:
    """A rendered PNG and where it put the world (for tests and overlays)."""

    path: Path
    basis: np.ndarray  # (2, 3) ground-plane axes (see common.ground_basis)
    data_to_display: np.ndarray  # (3, 3) affine of matplotlib's transData, display origin bottom-left
    height_px: int

    def pixel_of(self, points_w: np.ndarray) -> np.ndarray:
        """(N, 2) pixel (column, row) in the PNG of (N, 3) world points."""
        g = to_ground(points_w, self.basis)
        d = np.c_[g, np.ones(len(g))] @ self.data_to_display.T
        return np.stack([d[:, 0], self.height_px - d[:, 1]], axis=1)


def _axis_names(basis: np.ndarray) -> tuple[str, str]:
    names = []
    for row in basis:
        i = int(np.argmax(np.abs(row)))
        names.append(f"world {'-' if row[i] < 0 else ''}{'xyz'[i]} (m)" if abs(row[i]) > 0.999 else "ground (m)")
    return names[0], names[1]


def _draw_map(ax: Any, snapshot: Any, basis: np.ndarray, highlight: Sequence[str]) -> list[np.ndarray]:
    """Draw trajectory, places, edges and objects; return the ground points drawn (for the limits)."""
    patches = require("matplotlib.patches", "viz", "matplotlib")
    collections = require("matplotlib.collections", "viz", "matplotlib")
    drawn: list[np.ndarray] = []
    traj = to_ground(trajectory_w(snapshot), basis)
    if len(traj):
        ax.plot(traj[:, 0], traj[:, 1], "-", color=_TRAJ_RGB, lw=1.5, zorder=2, label="trajectory")
        ax.plot(traj[0, 0], traj[0, 1], "s", color=_TRAJ_RGB, ms=6, zorder=2)
        drawn.append(traj)
    for place in snapshot.places.values():
        c = to_ground(place.center_w, basis)[0]
        r = max(float(place.spread_m), 0.2)
        ax.add_patch(patches.Circle(c, r, fill=True, alpha=0.08, color="tab:green", zorder=1))
        ax.add_patch(patches.Circle(c, r, fill=False, ls="--", color="tab:green", lw=1.0, zorder=1))
        ax.text(c[0], c[1] + r, place.tag, color="darkgreen", fontsize=8, ha="center", va="bottom", zorder=6)
        drawn.append(np.array([c - r, c + r]))
    segs = [to_ground(np.stack([pu, pv]), basis) for _, _, pu, pv in graph_edges(snapshot)
            if np.linalg.norm(pu - pv) <= MAX_EDGE_M]
    if segs:
        ax.add_collection(collections.LineCollection(segs, colors=[_EDGE_RGB], linewidths=0.5, zorder=1))
    for gone in (False, True):
        objs = [(nid, o) for nid, o in snapshot.objects.items() if o.present != gone]
        if not objs:
            continue
        xy = to_ground(np.stack([o.position_w for _, o in objs]), basis)
        colors = [(0.6, 0.6, 0.6) if gone else class_color(o.label) / 255.0 for _, o in objs]
        ax.scatter(xy[:, 0], xy[:, 1], s=70, c=colors, marker="X" if gone else "o", linewidths=1.5, zorder=4,
                   edgecolors=["black" if nid in highlight else "none" for nid, _ in objs])
        for (_, o), p in zip(objs, xy):
            ax.annotate(o.label + (" (gone)" if gone else ""), p, xytext=(5, 4), textcoords="offset points",
                        fontsize=7, color="0.4" if gone else "black", zorder=6)
        drawn.append(xy)
    return drawn


def _ego_and_targets(snapshot: Any, basis: np.ndarray, targets: Sequence[str]) -> tuple[Any, list[np.ndarray]]:
    """The wearer's ego frame (None before the first pose) and the ground points of it and the targets."""
    ego = ego_frame_at(snapshot)
    if ego is None:
        return None, []
    pts = [to_ground(ego.T_world_ego.t, basis)]
    for nid in targets:
        node = snapshot.objects.get(nid)
        pts.append(to_ground(node.position_w if node is not None else snapshot.places[nid].center_w, basis))
    return ego, pts


def _draw_ego(ax: Any, ego: Any, basis: np.ndarray, target_pts: Sequence[np.ndarray], arrow_m: float) -> None:
    """The wearer (dot) with a heading arrow ``arrow_m`` long, and a red arrow to each target."""
    pos = to_ground(ego.T_world_ego.t, basis)[0]
    fwd = to_ground(ego.T_world_ego.R[:, 0], basis)[0]
    ax.arrow(pos[0], pos[1], arrow_m * fwd[0], arrow_m * fwd[1], width=arrow_m / 12, head_width=arrow_m / 2.5,
             head_length=arrow_m / 2.5, color="black", length_includes_head=True, zorder=7)
    ax.plot(pos[0], pos[1], "o", color="black", ms=6, zorder=7, label="you (heading)")
    for p in target_pts:
        ax.annotate("", xy=p[0], xytext=pos, zorder=5,
                    arrowprops=dict(arrowstyle="-|>", color=_ANSWER_RGB, lw=1.8, shrinkA=4, shrinkB=6))


def _limits(drawn: list[np.ndarray]) -> tuple[np.ndarray, float]:
    """Centre and half side of a square view around the drawn points, with a margin of 10 % + 0.2 m."""
    pts = np.concatenate(drawn) if drawn else np.zeros((1, 2))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = max(float((hi - lo).max()), 1.0)
    return (lo + hi) / 2, 0.6 * span + 0.2


def _answer_caption(answer: Any, snapshot: Any, targets: Sequence[str], width: int) -> list[str]:
    """The question, the answer and its evidence wrapped to ``width`` characters (long answers are cut
    after ``_CAPTION_MAX_LINES`` lines, with an ellipsis)."""
    ev = ", ".join(labels_of(snapshot, targets)) or "none"
    parts = [f"Q @ {answer.t_s:.1f}s: {answer.question}", f"A: {answer_line(answer)}",
             f"confidence {answer.confidence:.2f}; evidence: {ev}"]
    lines = [ln for part in parts for ln in textwrap.wrap(part, width, subsequent_indent="   ",
                                                          break_long_words=True)]
    if len(lines) > _CAPTION_MAX_LINES:
        cut = lines[_CAPTION_MAX_LINES - 2]
        lines = lines[:_CAPTION_MAX_LINES - 2] + [cut[:width - 4].rstrip() + " ...", lines[-1]]
    return lines


def render_topdown(snapshot: Any, path: Union[str, Path], answer: Any = None, dpi: int = 100,
                   size_in: float = 7.0) -> TopDownView:
    """Draw the memory as of ``snapshot.t_s`` seen from above (and the answer's relation) into a PNG."""
    require("matplotlib", "viz")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    basis = ground_basis(np.asarray(snapshot.up_world, dtype=np.float64))
    targets = answer_targets(snapshot, answer) if answer is not None else []
    width_chars = int((size_in - 0.3) * 72 / (0.602 * _CAPTION_PT))
    caption = _answer_caption(answer, snapshot, targets, width_chars) if answer is not None else []
    caption_in = (len(caption) * 1.2 * _CAPTION_PT + 12) / 72 if caption else 0.0  # grows with the text
    height_in = size_in + caption_in
    fig = Figure(figsize=(size_in, height_in), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.1, (caption_in + 0.56) / height_in, 0.85, (size_in - 0.95) / height_in))
    drawn = _draw_map(ax, snapshot, basis, targets)
    ego, ego_pts = _ego_and_targets(snapshot, basis, targets)
    centre, half = _limits(drawn + ego_pts)
    if ego is not None:  # heading arrow: 7 % of the view, whatever the size of the map
        _draw_ego(ax, ego, basis, ego_pts[1:], arrow_m=0.14 * half)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_aspect("equal", adjustable="box")
    xlabel, ylabel = _axis_names(basis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, lw=0.3, color="0.9")
    n_obj = len(snapshot.objects)
    ax.set_title(f"memory as of t = {snapshot.t_s:.1f} s   ({n_obj} objects, {len(snapshot.places)} places)",
                 fontsize=10)
    if caption:
        fig.text(0.1 / size_in, 6 / 72 / height_in, "\n".join(caption), fontsize=_CAPTION_PT, va="bottom",
                 family="DejaVu Sans Mono", color=(0.5, 0, 0), linespacing=1.2)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi)  # draws once; the axes transform is final afterwards
    height = int(round(fig.get_figheight() * dpi))
    return TopDownView(out, basis, np.array(ax.transData.get_matrix()), height)


def _html_row(name: str, item: ReportItem) -> str:
    snap, ans = item.snapshot, item.answer
    if ans is None:
        caption = f"<h3>memory at t = {snap.t_s:.1f} s</h3>"
    else:
        ev = ", ".join(labels_of(snap, answer_targets(snap, ans))) or "none"
        caption = (f"<h3>t = {ans.t_s:.1f} s: {html.escape(ans.question)}</h3>"
                   f"<p><b>{html.escape(answer_line(ans))}</b> - confidence {ans.confidence:.2f}; "
                   f"evidence: {html.escape(ev)}</p>")
    return f'<div class="item">{caption}<a href="{name}"><img src="{name}" width="560"></a></div>'


def write_report(out_dir: Union[str, Path], items: Sequence[ReportItem], title: str = "directme report") -> Path:
    """Render one PNG per item into ``out_dir``, an ``index.html`` linking them and ``index.json`` (each
    PNG's time and world-to-pixel projection, see ``load_views``); returns the HTML index path."""
    if not items:
        raise InvalidInputError("write_report needs at least one snapshot (no frames were observed?)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, views = [], []
    for i, item in enumerate(items):
        kind = "question" if item.answer is not None else "map"
        name = f"{i:03d}_{kind}_t{item.snapshot.t_s:08.1f}s.png".replace(" ", "0")
        view = render_topdown(item.snapshot, out / name, answer=item.answer)
        rows.append(_html_row(name, item))
        views.append({"png": name, "t_s": float(item.snapshot.t_s), "kind": kind,
                      "question": getattr(item.answer, "question", None), "basis": view.basis.tolist(),
                      "data_to_display": view.data_to_display.tolist(), "height_px": view.height_px})
    page = ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;max-width:1200px}}"
            ".item{display:inline-block;vertical-align:top;margin:8px;width:580px}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>Top-down views (seen from above, up = world up). Grey line: your "
            "path (square = start); black arrow: you and your heading; dots: objects coloured by class "
            "(X = gone); green circles: places; red arrows: the objects an answer used.</p>"
            + "".join(rows) + "</body></html>")
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    (out / "index.json").write_text(json.dumps(views, indent=1), encoding="utf-8")
    return index


def load_views(out_dir: Union[str, Path]) -> list[TopDownView]:
    """The projections of a written report (index.json): map world points onto its PNGs' pixels."""
    out = Path(out_dir)
    try:
        views = json.loads((out / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{out} is not a directme report (index.json: {exc})") from exc
    return [TopDownView(out / v["png"], np.array(v["basis"]), np.array(v["data_to_display"]), int(v["height_px"]))
            for v in views]


def report_times(t_first_s: float, t_last_s: float, n: int = 4) -> list[float]:
    """``n`` evenly spaced snapshot times from the first to the last observed frame (inclusive)."""
    if n < 1 or t_last_s <= t_first_s:
        return [float(t_last_s)]
    return [float(t) for t in np.linspace(t_first_s, t_last_s, n + 1)[1:]]

