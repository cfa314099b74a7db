"""One report picture: the memory as of one time seen from above, with a legend, and for a question an ego
inset (``ego_inset``) and the answer text.

The map shows the trajectory (square = start), places (dashed circles), the short graph edges, objects
coloured by class (X = gone) and the wearer's pose and heading; labels are moved apart (``labels``). A
question's picture draws a red arrow to each object the answer used, the imagined heading of a perspective
question, and on path answers time ticks along the path and the rooms numbered in visit order.
matplotlib (extra ``viz``) is imported only when drawing.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from .._lazy import require
from ..geometry import ground_basis
from .common import answer_line, answer_targets, ego_frame_at, graph_edges, labels_of, to_ground, trajectory_w
from .ego_inset import ANSWER_RGB, IMAGINED_RGB, EgoInset, draw_ego_inset
from .labels import place_labels, place_required, point_box, polyline_boxes
from .palette import ClassPalette, class_key
from .question import QuestionView, read_question
from .style import DEFAULT_STYLE, ReportStyle

_TRAJ_RGB = (0.35, 0.35, 0.35)
_EDGE_RGB = (0.86, 0.86, 0.86)
_PLACE_RGB = (0.1, 0.45, 0.1)
_NO_TAG = ("", "unknown", "none")  # scene tags that name no room


@dataclass(eq=False)
class TopDownFigure:
    """A drawn (not yet saved) picture and what is where in it, for saving, overlays and tests."""

    fig: Any  # matplotlib Figure
    ax: Any  # the top-down map Axes
    basis: np.ndarray  # (2, 3) ground-plane axes of the map
    palette: ClassPalette
    legend_classes: list[str]  # the classes the legend lists, in order
    inset: Optional[EgoInset] = None  # question pictures with a pose only
    question: Optional[QuestionView] = None
    labels: list = field(default_factory=list)  # every placed label Text (map and inset)
    dropped: list[str] = field(default_factory=list)  # labels left out for want of room
    obstacles: list[np.ndarray] = field(default_factory=list)  # display boxes no label may cover (the wearer)


def axis_names(basis: np.ndarray) -> tuple[str, str, str]:
    """Names of the two map axes and of the up axis: "world x (m)" when the axis is a world axis,
    "≈ world x (m)" when within 30 degrees of one, with the tilt of up from its nearest world axis."""
    up = np.cross(basis[0], basis[1])
    names = []
    for row in (basis[0], basis[1], up):
        i = int(np.argmax(np.abs(row)))
        sign = "-" if row[i] < 0 else ("+" if row is up else "")
        axis = f"world {sign}{'xyz'[i]}"
        names.append(axis if abs(row[i]) > 0.999 else (f"≈ {axis}" if abs(row[i]) > 0.866 else "ground axis"))
    i = int(np.argmax(np.abs(up)))
    tilt = float(np.degrees(np.arccos(min(1.0, abs(up[i])))))
    up_name = names[2] if tilt < 0.1 else f"{names[2].replace('≈ ', '')} ({tilt:.0f}° off)"
    if names[0] == names[1] == "ground axis":
        names[0], names[1] = "ground axis 1", "ground axis 2"
    return f"{names[0]} (m)", f"{names[1]} (m)", up_name


def place_names(snapshot: Any) -> dict[str, str]:
    """Place id -> its scene tag, or "place N" (N in visit order) for places with no room name."""
    order = sorted(snapshot.places.values(), key=lambda p: (min(p.times_s) if p.times_s else np.inf, p.place_id))
    untagged = [p.place_id for p in order if str(p.tag).strip().lower() in _NO_TAG]
    return {p.place_id: (f"place {untagged.index(p.place_id) + 1}" if p.place_id in untagged else str(p.tag))
            for p in order}


def room_order(snapshot: Any) -> list[tuple[float, str]]:
    """(start time, place id) of every visit up to the snapshot time, in time order."""
    visits = [(float(t), p.place_id) for p in snapshot.places.values() for t in p.times_s if t <= snapshot.t_s]
    return sorted(visits)


def _ordinal_tags(snapshot: Any) -> dict[str, str]:
    """Place id -> " #1, #3" (the numbers of its visits in the room order)."""
    nums: dict[str, list[int]] = {}
    for k, (_, pid) in enumerate(room_order(snapshot)):
        nums.setdefault(pid, []).append(k + 1)
    return {pid: " " + ", ".join(f"#{n}" for n in ns) for pid, ns in nums.items()}


class _Labels:
    """Label requests gathered while drawing, placed apart at the end (``place``)."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, str, np.ndarray, dict]] = []
        self.required: set[int] = set()  # items always drawn (an answer's objects), placed first
        self.obstacles: list[np.ndarray] = []  # (ax, xy data, radius px)
        self.lines: list[tuple[Any, np.ndarray]] = []  # (ax, polyline in data coordinates)

    def add(self, ax: Any, text: str, xy: np.ndarray, required: bool = False, **kw: Any) -> None:
        """A label request; a ``required`` one is placed before the others and never left out."""
        if required:
            self.required.add(len(self.items))
        self.items.append((ax, text, np.asarray(xy, dtype=np.float64), kw))

    def block(self, ax: Any, xy: np.ndarray, radius_px: float) -> None:
        self.obstacles.append((ax, np.asarray(xy, dtype=np.float64).reshape(-1, 2), radius_px))

    def block_line(self, ax: Any, xy: np.ndarray) -> None:
        self.lines.append((ax, np.asarray(xy, dtype=np.float64).reshape(-1, 2)))

    def place(self, fig: Any, style: ReportStyle) -> tuple[list, list[str]]:
        renderer = fig.canvas.get_renderer()
        obstacles = [point_box(p, r) for ax, xy, r in self.obstacles for p in ax.transData.transform(xy)]
        obstacles += [b for ax, xy in self.lines for b in polyline_boxes(ax.transData.transform(xy), 1.5)]
        by_ax: dict[int, list[int]] = {}
        for k, (ax, *_rest) in enumerate(self.items):
            by_ax.setdefault(id(ax), []).append(k)
        placed, dropped = [], []
        for ks in by_ax.values():
            ks = sorted(ks, key=lambda k: k not in self.required)  # the answer's labels first
            n_req = sum(k in self.required for k in ks)
            ax = self.items[ks[0]][0]
            anchors = ax.transData.transform(np.stack([self.items[k][2] for k in ks]))
            sizes = []
            for k in ks:
                probe = ax.text(0, 0, self.items[k][1], fontsize=style.label_pt, **self.items[k][3])
                ext = probe.get_window_extent(renderer)
                sizes.append((ext.width, ext.height))
                probe.remove()
            bounds = np.asarray(ax.get_window_extent(renderer).extents)
            gap, sizes = style.marker_px + style.label_gap_px, np.array(sizes)
            boxes: list = place_required(anchors[:n_req], sizes[:n_req], obstacles, bounds, gap, style.label_rings)
            boxes += place_labels(anchors[n_req:], sizes[n_req:], obstacles + boxes, bounds, gap, style.label_rings)
            for k, anchor, box in zip(ks, anchors, boxes):
                _, text, xy, kw = self.items[k]
                if box is None:
                    dropped.append(text)
                    continue
                far = np.linalg.norm((box[:2] + box[2:]) / 2 - anchor) > 2.5 * (box[3] - box[1]) + style.marker_px
                placed.append(ax.annotate(
                    text, xy, xytext=tuple(box[:2] - anchor), textcoords="offset pixels", ha="left", va="bottom",
                    fontsize=style.label_pt, zorder=6, annotation_clip=False, **kw,
                    arrowprops=dict(arrowstyle="-", color="0.6", lw=0.5, shrinkA=0, shrinkB=3) if far else None))
                obstacles.append(box)
        return placed, dropped


def _draw_map(ax: Any, snapshot: Any, basis: np.ndarray, palette: ClassPalette, targets: Sequence[str],
              question: Optional[QuestionView], labels: _Labels, style: ReportStyle) -> list[np.ndarray]:
    """Draw trajectory, places, edges and objects; return the ground points drawn (for the limits)."""
    patches = require("matplotlib.patches", "viz", "matplotlib")
    collections = require("matplotlib.collections", "viz", "matplotlib")
    drawn: list[np.ndarray] = []
    traj = to_ground(trajectory_w(snapshot), basis)
    if len(traj):
        ax.plot(traj[:, 0], traj[:, 1], "-", color=_TRAJ_RGB, lw=1.5, zorder=2)
        ax.plot(traj[0, 0], traj[0, 1], "s", color=_TRAJ_RGB, ms=6, zorder=2)
        labels.block_line(ax, traj)
        drawn.append(traj)
    names = place_names(snapshot)
    order = _ordinal_tags(snapshot) if question is not None and question.is_path else {}
    for place in snapshot.places.values():
        c = to_ground(place.center_w, basis)[0]
        r = max(float(place.spread_m), 0.2)
        ax.add_patch(patches.Circle(c, r, fill=True, alpha=0.07, color=_PLACE_RGB, zorder=1))
        ax.add_patch(patches.Circle(c, r, fill=False, ls="--", color=_PLACE_RGB, lw=1.0, zorder=1))
        labels.add(ax, names[place.place_id] + order.get(place.place_id, ""), c + np.array([0.0, r]),
                   color=_PLACE_RGB, weight="bold" if order else "normal")
        drawn.append(np.array([c - r, c + r]))
    segs = [to_ground(np.stack([pu, pv]), basis) for _, _, pu, pv in graph_edges(snapshot)
            if np.linalg.norm(pu - pv) <= style.max_edge_m]
    if segs:
        ax.add_collection(collections.LineCollection(segs, colors=[_EDGE_RGB], linewidths=0.5, zorder=1))
    for gone in (False, True):
        objs = [(nid, o) for nid, o in snapshot.objects.items() if o.present != gone]
        if not objs:
            continue
        xy = to_ground(np.stack([o.position_w for _, o in objs]), basis)
        colors = [(0.6, 0.6, 0.6) if gone else palette.color(o.label) / 255.0 for _, o in objs]
        ax.scatter(xy[:, 0], xy[:, 1], s=70, c=colors, marker="X" if gone else "o", linewidths=1.5, zorder=4,
                   edgecolors=["black" if nid in targets else "none" for nid, _ in objs])
        labels.block(ax, xy, style.marker_px)
        drawn.append(xy)
    ranked = sorted(snapshot.objects.items(), key=lambda kv: (kv[0] not in targets, not kv[1].present))
    for nid, o in ranked:
        labels.add(ax, o.label + ("" if o.present else " (gone)"), to_ground(o.position_w, basis)[0],
                   required=nid in targets, color="black" if o.present else "0.45")
    if question is not None and question.is_path and len(traj) > 1:
        _time_ticks(ax, snapshot, traj, labels, style)
    return drawn


def _time_ticks(ax: Any, snapshot: Any, traj: np.ndarray, labels: _Labels, style: ReportStyle) -> None:
    """Dots and "12 s" labels at evenly spaced stream times along the path."""
    times = np.asarray(snapshot.ego.times_s)[np.asarray(snapshot.ego.times_s) <= snapshot.t_s]
    picks = np.unique(np.linspace(0, len(times) - 1, min(style.time_ticks, len(times))).round().astype(int))
    ax.scatter(traj[picks, 0], traj[picks, 1], s=14, c=[_TRAJ_RGB], zorder=3, marker="o")
    for i in picks:
        labels.add(ax, f"{times[i]:.0f} s", traj[i], color="0.3", style="italic")


def _draw_ego(ax: Any, ego: Any, basis: np.ndarray, target_pts: Sequence[np.ndarray], arrow_m: float,
              labels: _Labels, style: ReportStyle) -> None:
    """The wearer (dot) with a heading arrow ``arrow_m`` long, and a red arrow to each target."""
    pos = to_ground(ego.T_world_ego.t, basis)[0]
    fwd = to_ground(ego.T_world_ego.R[:, 0], basis)[0]
    ax.arrow(pos[0], pos[1], arrow_m * fwd[0], arrow_m * fwd[1], width=arrow_m / 12, head_width=arrow_m / 2.5,
             head_length=arrow_m / 2.5, color="black", length_includes_head=True, zorder=7)
    ax.plot(pos[0], pos[1], "o", color="black", ms=6, zorder=7)
    labels.block(ax, np.stack([pos, pos + 0.5 * arrow_m * fwd, pos + arrow_m * fwd]), 2 * style.marker_px)
    for p in target_pts:
        ax.annotate("", xy=p[0], xytext=pos, zorder=5,
                    arrowprops=dict(arrowstyle="-|>", color=ANSWER_RGB, lw=1.8, shrinkA=4, shrinkB=6))
        labels.block_line(ax, np.stack([pos, p[0]]))


def _draw_imagined(ax: Any, snapshot: Any, ego: Any, basis: np.ndarray, question: QuestionView,
                   labels: _Labels) -> None:
    """A perspective question's imagined heading: a dashed arrow from the observer to the object faced."""
    start = (snapshot.objects[question.at_id].position_w if question.at_id else ego.T_world_ego.t)
    a, b = to_ground(start, basis)[0], to_ground(snapshot.objects[question.facing_id].position_w, basis)[0]
    ax.annotate("", xy=b, xytext=a, zorder=5, arrowprops=dict(arrowstyle="-|>", color=IMAGINED_RGB, lw=2.0,
                                                              ls="--", shrinkA=4, shrinkB=7))
    labels.block_line(ax, np.stack([a, b]))


def _limits(drawn: list[np.ndarray]) -> tuple[np.ndarray, float]:
    """Centre and half side of a square view around the drawn points, with a margin of 10 % + 0.2 m."""
    pts = np.concatenate(drawn) if drawn else np.zeros((1, 2))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = max(float((hi - lo).max()), 1.0)
    return (lo + hi) / 2, 0.6 * span + 0.2


def _caption(answer: Any, snapshot: Any, targets: Sequence[str], question: Optional[QuestionView], width: int,
             style: ReportStyle) -> list[str]:
    """The question, the answer, its evidence (and the room order of a path answer) wrapped to ``width``
    characters; long answers are cut after ``style.caption_max_lines`` lines with an ellipsis."""
    ev = ", ".join(labels_of(snapshot, targets)) or "none"
    parts = [f"Q @ {answer.t_s:.1f}s: {answer.question}", f"A: {answer_line(answer)}",
             f"confidence {answer.confidence:.2f}; evidence: {ev}"]
    if question is not None and question.is_path and snapshot.places:
        names = place_names(snapshot)
        parts.append("rooms in order: " + " -> ".join(f"#{k + 1} {names[pid]}"
                                                      for k, (_, pid) in enumerate(room_order(snapshot))))
    lines = [ln for part in parts for ln in textwrap.wrap(part, width, subsequent_indent="   ",
                                                          break_long_words=True)]
    if len(lines) > style.caption_max_lines:
        cut = lines[style.caption_max_lines - 2]
        lines = lines[:style.caption_max_lines - 2] + [cut[:width - 4].rstrip() + " ...", lines[-1]]
    return lines


def _legend(fig: Any, rect: tuple, snapshot: Any, palette: ClassPalette, symbols: list[tuple[str, dict]],
            style: ReportStyle) -> list[str]:
    """Symbols, then one entry per class present (in the palette's colour), inside the ``rect`` axes."""
    lines = require("matplotlib.lines", "viz", "matplotlib")
    ax = fig.add_axes(rect)
    ax.set_axis_off()
    shown: dict[str, str] = {}
    for o in snapshot.objects.values():
        if o.present:  # gone objects are drawn grey
            shown.setdefault(class_key(o.label), o.label)
    keys = sorted(shown)
    more = len(keys) - style.legend_max_classes
    keys = keys[:style.legend_max_classes]
    sym = ax.legend([lines.Line2D([], [], **kw) for _, kw in symbols], [n for n, _ in symbols], loc="upper left",
                    fontsize=7, frameon=False, title="map", title_fontsize=8, alignment="left")
    ax.add_artist(sym)
    handles = [lines.Line2D([], [], ls="", marker="o", ms=7, color=palette.color(k) / 255.0) for k in keys]
    names = [shown[k] for k in keys] + ([f"+{more} more classes"] if more > 0 else [] if keys else ["none in memory"])
    if more > 0 or not keys:
        handles.append(lines.Line2D([], [], ls=""))
    fig.canvas.draw_idle()
    top = sym.get_window_extent(fig.canvas.get_renderer()).transformed(ax.transAxes.inverted()).y0
    ax.legend(handles, names, loc="upper left", bbox_to_anchor=(0.0, top), fontsize=7, frameon=False,
              title="object classes", title_fontsize=8, alignment="left", ncol=2 if len(keys) > 12 else 1,
              columnspacing=0.8, handletextpad=0.3)
    return keys


def _symbols(question: Optional[QuestionView], targets: Sequence[str]) -> list[tuple[str, dict]]:
    out = [("your path (square = start)", dict(color=_TRAJ_RGB, lw=1.5)),
           ("you, heading", dict(ls="", marker=">", color="black", ms=7)),
           ("place (room)", dict(ls="--", color=_PLACE_RGB, lw=1.0)),
           ("gone object", dict(ls="", marker="X", color="0.6", ms=7))]
    if targets:
        out.append(("object the answer used", dict(color=ANSWER_RGB, lw=1.8)))
    if question is not None and question.facing_id is not None:
        out.append(("imagined heading", dict(color=IMAGINED_RGB, lw=2.0, ls="--")))
    if question is not None and question.is_path:
        out.append(("time along the path", dict(ls="", marker="o", color=_TRAJ_RGB, ms=4)))
    return out


def build_topdown(snapshot: Any, answer: Any = None, palette: Optional[ClassPalette] = None,
                  style: ReportStyle = DEFAULT_STYLE) -> TopDownFigure:
    """Draw one report picture of ``snapshot`` (and ``answer``); ``palette`` defaults to the classes present."""
    require("matplotlib", "viz")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    palette = palette or ClassPalette.of(o.label for o in snapshot.objects.values())
    basis = ground_basis(np.asarray(snapshot.up_world, dtype=np.float64))
    targets = answer_targets(snapshot, answer) if answer is not None else []
    question = read_question(answer.intent, snapshot, targets) if answer is not None else None
    size, panel = style.map_in, style.panel_in
    width_in = size + panel
    caption = (_caption(answer, snapshot, targets, question, int((width_in - 0.3) * 72 / (0.602 * style.caption_pt)),
                        style) if answer is not None else [])
    caption_in = (len(caption) * 1.2 * style.caption_pt + 12) / 72 if caption else 0.0  # grows with the text
    height_in = size + caption_in
    fig = Figure(figsize=(width_in, height_in), dpi=style.dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.7 / width_in, (caption_in + 0.56) / height_in, 0.85 * size / width_in,
                       (size - 0.95) / height_in))
    labels = _Labels()
    drawn = _draw_map(ax, snapshot, basis, palette, targets, question, labels, style)
    ego = ego_frame_at(snapshot)
    target_pts = [to_ground(snapshot.objects[n].position_w if n in snapshot.objects else snapshot.places[n].center_w,
                            basis) for n in targets] if ego is not None else []
    ego_pts = [to_ground(ego.T_world_ego.t, basis)] if ego is not None else []
    centre, half = _limits(drawn + ego_pts + target_pts)
    if ego is not None:  # heading arrow: 7 % of the view, whatever the size of the map
        _draw_ego(ax, ego, basis, target_pts, 0.14 * half, labels, style)
        if question is not None and question.facing_id in snapshot.objects:
            _draw_imagined(ax, snapshot, ego, basis, question, labels)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_aspect("equal", adjustable="box")
    xlabel, ylabel, up = axis_names(basis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, lw=0.3, color="0.9")
    ax.set_title(f"memory as of t = {snapshot.t_s:.1f} s, seen from above (up = {up})\n"
                 f"{len(snapshot.objects)} objects, {len(snapshot.places)} places", fontsize=9.5)
    panel_x = (size + 0.05) / width_in
    panel_w = (panel - 0.2) / width_in
    top = (height_in - 0.3) / height_in
    inset = None
    if answer is not None and ego is not None:
        side = (panel - 0.2) / height_in
        iax = fig.add_axes((panel_x, top - side, panel_w, side))
        inset = draw_ego_inset(iax, snapshot, ego, targets, palette, question, style)
        for text, xy, kw in inset.labels:  # the answer's objects (and the imagined heading): always labelled
            labels.add(iax, text, xy, required=True, **kw)
        for line in inset.lines:
            labels.block_line(iax, line)
        if inset.points:
            labels.block(iax, np.stack(list(inset.points.values())), style.marker_px - 1)
        labels.block(iax, np.zeros((1, 2)), 2 * style.marker_px)
        top -= side + 0.45 / height_in
    legend_rect = (panel_x, (caption_in + 0.3) / height_in, panel_w, max(top - (caption_in + 0.3) / height_in, 0.05))
    keys = _legend(fig, legend_rect, snapshot, palette, _symbols(question, targets), style)
    ax.apply_aspect()
    placed, dropped = labels.place(fig, style)
    if caption:
        fig.text(0.1 / width_in, 6 / 72 / height_in, "\n".join(caption), fontsize=style.caption_pt, va="bottom",
                 family="DejaVu Sans Mono", color=(0.5, 0, 0), linespacing=1.2)
    wearer = [point_box(p, r) for a, xy, r in labels.obstacles if r > style.marker_px
              for p in a.transData.transform(xy)]
    return TopDownFigure(fig, ax, basis, palette, keys, inset, question, placed, dropped, wearer)


@dataclass(frozen=True, eq=False)
class TopDownView:
    """A rendered PNG and where it put the world (for tests and overlays)."""

    path: Path
    basis: np.ndarray  # (2, 3) ground-plane axes (see geometry.ground_basis)
    data_to_display: np.ndarray  # (3, 3) affine of matplotlib's transData, display origin bottom-left
    height_px: int

    def pixel_of(self, points_w: np.ndarray) -> np.ndarray:
        """(N, 2) pixel (column, row) in the PNG of (N, 3) world points."""
        g = to_ground(points_w, self.basis)
        d = np.c_[g, np.ones(len(g))] @ self.data_to_display.T
        return np.stack([d[:, 0], self.height_px - d[:, 1]], axis=1)


def render_topdown(snapshot: Any, path: Union[str, Path], answer: Any = None, palette: Optional[ClassPalette] = None,
                   style: ReportStyle = DEFAULT_STYLE) -> TopDownView:
    """Draw the picture of ``snapshot`` (and ``answer``, see ``build_topdown``) into the PNG ``path``."""
    pic = build_topdown(snapshot, answer, palette, style)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    pic.fig.savefig(out, dpi=style.dpi)
    height = int(round(pic.fig.get_figheight() * style.dpi))
    return TopDownView(out, pic.basis, np.array(pic.ax.transData.get_matrix()), height)
