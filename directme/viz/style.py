"""Tuning constants of the report pictures, in one place (sizes in inches, points or pixels as named)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportStyle:
    """How the report draws; the defaults make 100 dpi PNGs about 1000 x 700 px."""

    map_in: float = 7.0  # side of the square top-down map panel
    panel_in: float = 3.2  # width of the side panel (ego inset, legend) right of the map
    dpi: int = 100  # PNG resolution
    max_edge_m: float = 2.5  # longer graph edges (across rooms) would only clutter the map
    caption_pt: float = 8.5  # caption font size; DejaVu Sans Mono advances 0.602 em per character
    caption_max_lines: int = 12  # longer captions are cut with an ellipsis
    label_pt: float = 7.0  # object, place and time-tick labels
    marker_px: float = 6.0  # radius of an object's dot (obstacle for labels)
    label_gap_px: float = 3.0  # space between a dot and its label
    label_rings: int = 6  # widening rings searched for a free label position before a label is left out
    time_ticks: int = 6  # time ticks along the path on path answers
    inset_min_radius_m: float = 1.5  # smallest ring of the ego inset
    inset_max_objects: int = 12  # objects besides the answer's shown in the ego inset (nearest first)
    legend_max_classes: int = 26  # classes listed in the legend (the rest summed up as "+N more")


DEFAULT_STYLE = ReportStyle()
