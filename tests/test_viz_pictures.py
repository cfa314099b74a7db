"""Report pictures: the ego inset, the legend and its palette, label de-overlap, path answers, axis and
place names, and the HTML template (checked on the matplotlib artists the builder returns)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from directme.memory.snapshot import ObjectNode, PlaceNode
from test_viz_report import make_answer, make_snapshot

pytest.importorskip("matplotlib")

# labels that the old hashed palette coloured alike (issue 21), among others
CLASSES = ["Desk", "Potted Plant", "Picture/Frame", "chair", "dining table", "Lamp", "Sofa", "Bed", "Sink",
           "Toilet", "Oven", "Mirror", "Shelf", "Backpack"]


def _crowded(n_per_class: int = 1, spread_m: float = 4.0):
    """The test snapshot plus one object of each class of CLASSES around the wearer (who stands at (3, 0))."""
    rng = np.random.default_rng(0)
    objects = dict(make_snapshot().objects)
    for i, label in enumerate(CLASSES * n_per_class):
        pos = np.r_[3.0 + rng.uniform(-spread_m, spread_m, 2), 0.5]
        objects[f"x{i}"] = ObjectNode(f"x{i}", label, {label: 1.0}, pos, 0.0, 3.0, 3)
    return replace(make_snapshot(), objects=objects)


def _legend_entries(pic):
    """(text, RGB) of the legend titled "object classes"."""
    from matplotlib.colors import to_rgb

    legends = [leg for a in pic.fig.axes for leg in [a.get_legend(), *[c for c in a.artists]]
               if leg is not None and hasattr(leg, "get_title") and leg.get_title().get_text() == "object classes"]
    (leg,) = legends
    return [(t.get_text(), to_rgb(h.get_color())) for t, h in zip(leg.get_texts(), leg.legend_handles)]


def test_legend_lists_every_class_present_in_a_distinct_colour():
    from directme.viz.report import build_topdown

    snap = _crowded()
    pic = build_topdown(snap, make_answer())
    entries = _legend_entries(pic)
    present = {o.label for o in snap.objects.values() if o.present}
    assert sorted(t for t, _ in entries) == sorted(present)
    colours = [tuple(np.round(np.array(c) * 255).astype(int)) for _, c in entries]
    assert len(set(colours)) == len(colours)  # Desk, Potted Plant and Picture/Frame no longer share a green
    for text, colour in entries:  # the legend shows the palette's colour, the one the map's dots use
        assert np.allclose(np.array(colour) * 255, pic.palette.color(text), atol=1)
    dots = np.concatenate([c.get_facecolors()[:, :3] for c in pic.ax.collections if hasattr(c, "get_offsets")
                           and len(c.get_offsets()) > 5])
    assert {tuple(np.round(d * 255).astype(int)) for d in dots} >= set(colours)


def test_ego_inset_is_heading_up_with_clock_ticks_and_the_wearer_at_the_centre():
    from directme.viz.report import build_topdown

    snap = make_snapshot()
    pic = build_topdown(snap, make_answer())
    inset = pic.inset
    assert inset is not None and "heading up" in inset.ax.get_title()
    hours = {t.get_text(): np.array(t.get_position()) for t in inset.ax.texts if t.get_text() in ("12", "3", "6", "9")}
    assert set(hours) == {"12", "3", "6", "9"}
    r = inset.radius_m
    assert hours["12"][1] > r and abs(hours["12"][0]) < 1e-9  # 12 o'clock at the top
    assert hours["3"][0] > r and hours["9"][0] < -r and hours["6"][1] < -r
    (wearer,) = [ln for ln in inset.ax.lines if ln.get_marker() == (3, 0, 0)]
    assert np.allclose(wearer.get_xydata(), [[0, 0]])
    # the wearer at (3, 0) faces +x: the chair at (4.5, 2) is 1.5 m ahead and 2 m to the left
    assert np.allclose(inset.points["o1"], [-2.0, 1.5])
    texts = [t.get_text() for t in pic.labels if t.axes is inset.ax]
    assert any(t.startswith("chair\n10 o'clock, 2.5 m") for t in texts)
    assert r >= 2.5 and inset.imagined is None


def test_perspective_question_draws_the_imagined_heading():
    from directme.viz.report import build_topdown

    snap = make_snapshot()
    answer = make_answer(question="Suppose I face the dining table: where is the chair then?")
    answer = replace(answer, evidence=answer.evidence + (replace(answer.evidence[0], node_id="o2",
                                                                 label="dining table"),))
    pic = build_topdown(snap, answer)
    assert pic.question.facing_id == "o2" and pic.question.at_id is None
    start, end = pic.inset.imagined
    assert np.allclose(start, 0) and np.allclose(end, pic.inset.points["o2"])
    assert any("imagined heading" in t.get_text() for t in pic.labels)
    legend_texts = [t.get_text() for a in pic.fig.axes for leg in a.artists if hasattr(leg, "get_texts")
                    for t in leg.get_texts()]
    assert "imagined heading" in legend_texts


def test_path_answer_has_time_ticks_and_the_room_order():
    from directme.viz.report import build_topdown

    snap = make_snapshot()
    hall = PlaceNode("p2", "hallway", np.array([3.0, 0.0, 1.6]), 0.5, (3.0,))
    snap = replace(snap, places={"p1": replace(snap.places["p1"], times_s=(0.0,)), "p2": hall})
    pic = build_topdown(snap, replace(make_answer(question="What path did I take?"), evidence=()))
    assert pic.question.is_path
    texts = [t.get_text() for t in pic.labels]
    assert {"0 s", "4 s"} <= set(texts) and "kitchen #1" in texts and "hallway #2" in texts
    caption = "\n".join(t.get_text() for t in pic.fig.texts)
    assert "rooms in order: #1 kitchen -> #2 hallway" in caption
    no_path = build_topdown(snap, make_answer())
    assert not any(t.get_text().endswith(" s") for t in no_path.labels)


def test_labels_never_overlap_each_other_nor_the_wearer():
    from directme.viz.labels import overlaps
    from directme.viz.report import build_topdown

    snap = _crowded(n_per_class=2, spread_m=1.5)  # 31 objects within 1.5 m of the wearer
    pic = build_topdown(snap, make_answer())
    from matplotlib.text import Text

    renderer = pic.fig.canvas.get_renderer()
    pic.fig.canvas.draw()  # as saved
    boxes = [np.asarray(Text.get_window_extent(t, renderer).extents) for t in pic.labels]  # the text, not its leader
    assert len(boxes) + len(pic.dropped) == len(snap.objects) + len(snap.places) + 1  # + the inset's chair
    assert len(boxes) >= 0.6 * (len(boxes) + len(pic.dropped))
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not overlaps(boxes[i], boxes[j]), (pic.labels[i].get_text(), pic.labels[j].get_text())
        assert not any(overlaps(boxes[i], w) for w in pic.obstacles), pic.labels[i].get_text()
    assert pic.obstacles  # the wearer was one


def test_place_labels_is_greedy_and_keeps_inside_bounds():
    from directme.viz.labels import overlaps, place_labels

    anchors = np.array([[50.0, 50.0]] * 6)
    boxes = place_labels(anchors, np.array([[30.0, 10.0]] * 6), obstacles=[np.array([40, 40, 60, 60])],
                         bounds=np.array([0, 0, 100, 100]), gap=12.0, rings=3)
    kept = [b for b in boxes if b is not None]
    assert len(kept) == 6
    assert all(b[0] >= 0 and b[1] >= 0 and b[2] <= 100 and b[3] <= 100 for b in kept)
    assert not any(overlaps(a, b) for i, a in enumerate(kept) for b in kept[i + 1:])
    assert place_labels(np.array([[5.0, 5.0]]), np.array([[200.0, 10.0]]), bounds=np.array([0, 0, 100, 100])) == [None]


def test_axis_and_place_names_on_real_data():
    from directme.geometry import ground_basis
    from directme.viz.topdown import axis_names, place_names

    assert axis_names(ground_basis(np.array([0, 0, 1.0]))) == ("world x (m)", "world y (m)", "world +z")
    up = np.array([-0.27, -0.96, -0.05])  # 7-Scenes redkitchen: up is the first camera's -y, tilted
    x, y, name = axis_names(ground_basis(up / np.linalg.norm(up)))
    assert x == "≈ world x (m)" and y == "≈ world z (m)" and name.startswith("world -y (16")
    snap = make_snapshot()
    places = {"a": PlaceNode("a", "unknown", np.zeros(3), 1.0, (5.0,)),
              "b": PlaceNode("b", "", np.ones(3), 1.0, (1.0,)), "c": PlaceNode("c", "kitchen", np.ones(3), 1.0, (3.0,))}
    assert place_names(replace(snap, places=places)) == {"b": "place 1", "c": "kitchen", "a": "place 2"}


def test_palette_ids_are_stable_and_colours_distinct():
    from directme.viz.palette import QUALITATIVE, ClassPalette

    assert len({tuple(c) for c in QUALITATIVE}) == len(QUALITATIVE)
    pal = ClassPalette.of(["Sofa", "chair", "Chair ", "desk"])
    assert pal.classes == ("chair", "desk", "sofa") and pal.class_id("CHAIR") == 1
    grown = pal.with_labels(["bed", "chair"])
    assert grown.classes[:3] == pal.classes and grown.class_id("bed") == 4
    assert len({tuple(grown.color(c)) for c in grown.classes}) == 4


def test_report_html_comes_from_the_template_and_is_escaped(tmp_path):
    from directme.viz.report import ReportItem, load_palette, write_report

    answer = replace(make_answer(), question="Where is the <script>alert(1)</script> chair?")
    index = write_report(tmp_path / "rep", [ReportItem(make_snapshot()), ReportItem(make_snapshot(), answer)],
                         title="a & b")
    page = index.read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page and "<title>a &amp; b</title>" in page
    assert "ego inset" in page and page.count('<div class="item">') == 2
    assert load_palette(tmp_path / "rep").classes == ("chair", "cup", "dining table")


def test_a_picture_draws_the_answers_parse_not_its_text():
    """The picture follows the answer's Intent: the text is never parsed again (so it cannot disagree)."""
    from directme.viz.report import build_topdown

    snap = make_snapshot()
    path_parse = make_answer(question="What path did I take?").intent
    pic = build_topdown(snap, replace(make_answer(), intent=path_parse))  # asked "where is the chair", read as a path
    assert pic.question.is_path and pic.question.primitive == "my_trajectory"
    unparsed = build_topdown(snap, replace(make_answer(question="What path did I take?"), intent=None))
    assert unparsed.question is None  # no parse (an answer built by hand): no path ticks, no imagined heading
    assert not any(t.get_text().endswith(" s") for t in unparsed.labels)
