"""Static report for people without rerun: one PNG per map time and per question (``topdown``) and an
HTML index rendered from the jinja2 template ``templates/report.html.j2`` (autoescaped).

The class palette is built once from the classes of every picture, so a class has the same colour in all
of them; ``index.json`` keeps each PNG's time, world-to-pixel projection and that palette. matplotlib and
jinja2 (extra ``viz``) are imported only when writing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Sequence, Union

import numpy as np

from .._lazy import require
from ..errors import InvalidInputError
from .common import answer_line, answer_targets, labels_of
from .palette import ClassPalette
from .style import DEFAULT_STYLE, ReportStyle
from .topdown import TopDownView, build_topdown, render_topdown

__all__ = ["ReportItem", "TopDownView", "build_topdown", "load_palette", "load_views", "render_topdown",
           "report_times", "write_report"]


@dataclass(frozen=True)
class ReportItem:
    """One PNG of the report: the memory as of ``snapshot.t_s`` and optionally a question's answer."""

    snapshot: Any  # directme.memory.snapshot.MemorySnapshot
    answer: Any = None  # directme.answerers.base.Answer


def _entry(name: str, item: ReportItem) -> dict:
    """What the template shows of one picture (plain strings: the template escapes them)."""
    snap, ans = item.snapshot, item.answer
    if ans is None:
        return {"png": name, "t_s": f"{snap.t_s:.1f}", "question": None}
    return {"png": name, "t_s": f"{ans.t_s:.1f}", "question": ans.question, "answer": answer_line(ans),
            "confidence": f"{ans.confidence:.2f}", "flags": ", ".join(map(str, ans.flags)),
            "evidence": ", ".join(labels_of(snap, answer_targets(snap, ans))) or "none"}


def render_html(title: str, entries: Sequence[dict], palette: ClassPalette) -> str:
    """The report's index page from the package's template (autoescape on)."""
    jinja2 = require("jinja2", "viz")
    source = resources.files("directme.viz").joinpath("templates/report.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    colours = [{"name": k, "rgb": "#%02x%02x%02x" % rgb} for k, rgb in palette.colors().items()]
    return env.from_string(source).render(title=title, items=list(entries), classes=colours)


def write_report(out_dir: Union[str, Path], items: Sequence[ReportItem], title: str = "directme report",
                 style: ReportStyle = DEFAULT_STYLE) -> Path:
    """Render one PNG per item into ``out_dir``, an ``index.html`` linking them and ``index.json`` (each
    PNG's time and world-to-pixel projection, see ``load_views``); returns the HTML index path."""
    if not items:
        raise InvalidInputError("write_report needs at least one snapshot (no frames were observed?)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    palette = ClassPalette.of(o.label for it in items for o in it.snapshot.objects.values())
    entries, views = [], []
    for i, item in enumerate(items):
        kind = "question" if item.answer is not None else "map"
        name = f"{i:03d}_{kind}_t{item.snapshot.t_s:08.1f}s.png".replace(" ", "0")
        view = render_topdown(item.snapshot, out / name, answer=item.answer, palette=palette, style=style)
        entries.append(_entry(name, item))
        views.append({"png": name, "t_s": float(item.snapshot.t_s), "kind": kind,
                      "question": getattr(item.answer, "question", None), "basis": view.basis.tolist(),
                      "data_to_display": view.data_to_display.tolist(), "height_px": view.height_px,
                      "palette": palette.colors()})
    index = out / "index.html"
    index.write_text(render_html(title, entries, palette), encoding="utf-8")
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


def load_palette(out_dir: Union[str, Path]) -> ClassPalette:
    """The class palette a written report drew with (the same colours in every PNG of it)."""
    views = json.loads((Path(out_dir) / "index.json").read_text(encoding="utf-8"))
    return ClassPalette(tuple(views[0].get("palette", {}))) if views else ClassPalette()


def report_times(t_first_s: float, t_last_s: float, n: int = 4) -> list[float]:
    """``n`` evenly spaced snapshot times from the first to the last observed frame (inclusive)."""
    if n < 1 or t_last_s <= t_first_s:
        return [float(t_last_s)]
    return [float(t) for t in np.linspace(t_first_s, t_last_s, n + 1)[1:]]

