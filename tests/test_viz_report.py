"""Static top-down report: what the PNG shows where, and the HTML index."""
from __future__ import annotations

import numpy as np
import pytest

from directme.answerers.base import Answer, Evidence
from directme.memory.snapshot import EgoTrack, MemorySnapshot, ObjectNode, PlaceNode
from directme.query.intent import parse_question

pytest.importorskip("matplotlib")

# OpenCV camera looking along world +x in a z-up world: columns = camera x, y, z axes in the world.
R_LOOK_X = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def make_snapshot(t_s: float = 4.0) -> MemorySnapshot:
    """A hand-built memory: the wearer walks along +x, a chair ahead-left, a table behind-right."""
    import networkx as nx

    times = np.arange(0.0, 5.0)
    poses = np.repeat(np.eye(4)[None], len(times), axis=0)
    poses[:, :3, :3] = R_LOOK_X
    poses[:, :3, 3] = np.c_[times * 0.75, np.zeros_like(times), np.full_like(times, 1.6)]

    def obj(nid, label, pos, present=True):
        return ObjectNode(nid, label, {label: 1.0}, np.array(pos, float), 0.0, 3.0, 3, present=present)

    objects = {"o1": obj("o1", "chair", [4.5, 2.0, 0.5]), "o2": obj("o2", "dining table", [0.5, -2.5, 0.7]),
               "o3": obj("o3", "cup", [2.0, 1.5, 1.0], present=False)}
    places = {"p1": PlaceNode("p1", "kitchen", np.array([1.5, 0.0, 1.6]), 1.2, (0.0, 1.0, 2.0))}
    graph = nx.Graph()
    graph.add_nodes_from(objects, kind="object")
    graph.add_node("p1", kind="place")
    graph.add_edges_from([("o1", "o3"), ("o2", "p1")])
    keep = times <= t_s
    return MemorySnapshot(t_s, objects, places, EgoTrack(times[keep], poses[keep]), graph)


def make_answer(t_s: float = 4.0, question: str = "Where is the chair now?") -> Answer:
    """An answer carrying its parse, as the Agent's do (a picture reads the parse, never the text)."""
    return Answer(question, t_s, "front-left", letter="B", confidence=0.9,
                  evidence=(Evidence("o1", "chair", (3.0,)),), answerer="geometric",
                  intent=parse_question(question, use_model=False))


def _pixel(img: np.ndarray, px: np.ndarray) -> np.ndarray:
    c, r = np.round(px).astype(int)
    return img[r - 2:r + 3, c - 2:c + 3, :3].reshape(-1, 3).astype(float)


def test_topdown_png_draws_objects_trajectory_and_answer_where_they_are(tmp_path):
    from PIL import Image

    from directme.viz.palette import ClassPalette
    from directme.viz.report import render_topdown

    snap = make_snapshot()
    class_color = ClassPalette.of(o.label for o in snap.objects.values()).color
    view = render_topdown(snap, tmp_path / "q.png", answer=make_answer())
    img = np.asarray(Image.open(view.path).convert("RGB"))
    assert img.shape[0] == view.height_px
    # the chair's and table's dots carry their class colours at their projected pixels
    for nid in ("o1", "o2"):
        patch = _pixel(img, view.pixel_of(snap.objects[nid].position_w)[0])
        want = class_color(snap.objects[nid].label).astype(float)
        assert np.min(np.abs(patch - want).sum(axis=1)) < 40, nid
    # the trajectory (grey) passes through the middle of the walk
    mid = _pixel(img, view.pixel_of(np.array([1.1, 0.0, 1.6]))[0])
    assert np.any(np.all(np.abs(mid - 0.35 * 255) < 30, axis=1))
    # the answer arrow (red) crosses the point halfway from the wearer (3, 0) to the chair (4.5, 2)
    half = _pixel(img, view.pixel_of(np.array([3.75, 1.0, 0.0]))[0])
    assert np.any((half[:, 0] > 180) & (half[:, 1] < 80) & (half[:, 2] < 80))
    # an empty corner of the map stays white
    corner = _pixel(img, view.pixel_of(np.array([4.5, -2.5, 0.0]))[0])
    assert np.all(corner > 240)


def test_topdown_without_answer_has_no_red_arrow(tmp_path):
    from PIL import Image

    from directme.viz.report import render_topdown

    view = render_topdown(make_snapshot(), tmp_path / "m.png")
    img = np.asarray(Image.open(view.path).convert("RGB"))
    half = _pixel(img, view.pixel_of(np.array([3.75, 1.0, 0.0]))[0])
    assert not np.any((half[:, 0] > 180) & (half[:, 1] < 80) & (half[:, 2] < 80))


def test_ground_basis_is_right_handed_for_tilted_up():
    from directme.geometry import ground_basis

    for up in ([0, 0, 1], [0, -1, 0], [1, 0, 0], [0.3, -0.9, 0.1]):
        u = np.asarray(up, float) / np.linalg.norm(up)
        b = ground_basis(u)
        assert np.allclose(b @ b.T, np.eye(2)) and np.allclose(np.cross(b[0], b[1]), u)
    assert np.allclose(ground_basis(np.array([0, 0, 1.0])), [[1, 0, 0], [0, 1, 0]])


def test_write_report_links_every_png(tmp_path):
    from directme.viz.report import ReportItem, load_views, render_topdown, report_times, write_report

    items = [ReportItem(make_snapshot(t)) for t in report_times(0.0, 4.0, n=2)]
    items.append(ReportItem(make_snapshot(), make_answer()))
    index = write_report(tmp_path / "rep", items)
    page = index.read_text()
    pngs = sorted(p.name for p in (tmp_path / "rep").glob("*.png"))
    assert len(pngs) == 3 and all(f'src="{n}"' in page for n in pngs)
    assert "Where is the chair now?" in page and "front-left" in page and "chair" in page
    views = load_views(tmp_path / "rep")
    assert [v.path.name for v in views] == sorted(pngs)
    again = render_topdown(items[-1].snapshot, tmp_path / "again.png", answer=items[-1].answer)
    chair = items[-1].snapshot.objects["o1"].position_w
    assert np.allclose(views[-1].pixel_of(chair), again.pixel_of(chair))


def test_write_report_rejects_nothing_to_draw(tmp_path):
    from directme.errors import InvalidInputError
    from directme.viz.report import write_report

    with pytest.raises(InvalidInputError, match="at least one snapshot"):
        write_report(tmp_path, [])


def _with_edges(snap: MemorySnapshot) -> MemorySnapshot:
    """``snap`` plus a 1 m edge (two boxes at x = -1) and a 4 m edge (two lamps at y = -3)."""
    from dataclasses import replace

    def obj(nid, pos):
        return ObjectNode(nid, "box" if nid in ("b1", "b2") else "lamp", {"x": 1.0}, np.array(pos, float), 0.0, 3.0, 3)

    extra = {"b1": obj("b1", [-1.0, 1.5, 0.5]), "b2": obj("b2", [-1.0, 2.5, 0.5]),
             "l1": obj("l1", [0.0, -3.0, 0.5]), "l2": obj("l2", [4.0, -3.0, 0.5])}
    graph = snap.graph.copy()
    graph.add_edges_from([("b1", "b2"), ("l1", "l2")])
    return replace(snap, objects={**snap.objects, **extra}, graph=graph)


def test_only_short_graph_edges_are_drawn_and_light(tmp_path):
    from PIL import Image

    from directme.viz.report import render_topdown
    from directme.viz.style import DEFAULT_STYLE

    MAX_EDGE_M = DEFAULT_STYLE.max_edge_m
    snap = _with_edges(make_snapshot())
    view = render_topdown(snap, tmp_path / "edges.png")
    img = np.asarray(Image.open(view.path).convert("RGB")).astype(int)
    short = _pixel(img, view.pixel_of(np.array([-1.0, 2.0, 0.5]))[0])
    long_ = _pixel(img, view.pixel_of(np.array([2.0, -3.0, 0.5]))[0])
    assert MAX_EDGE_M < 4.0
    assert 180 < short.min() < 235  # drawn, light grey
    assert long_.min() > 240  # a long edge across the map is not drawn (faint grid lines only)


def _arrow_length_px(img: np.ndarray, centre: np.ndarray) -> int:
    """Length in pixels of the black run from the wearer's dot to the right (the heading arrow along +x)."""
    c, r = np.round(centre).astype(int)
    black = (img[r - 3:r + 4, :, :3].max(axis=2) < 40).any(axis=0)
    n = 0
    while black[c + n + 1]:
        n += 1
    return n


@pytest.mark.parametrize("scale", [0.3, 8.0])
def test_heading_arrow_scales_with_the_map(tmp_path, scale):
    """The heading arrow is the same share of the picture on a 1 m and a 30 m map."""
    from dataclasses import replace

    from PIL import Image

    from directme.memory.snapshot import EgoTrack
    from directme.viz.report import render_topdown

    snap = make_snapshot()
    poses = snap.ego.T_world_cam.copy()
    poses[:, :3, 3] *= scale
    small = replace(snap, objects={}, places={}, ego=EgoTrack(snap.ego.times_s, poses))
    view = render_topdown(small, tmp_path / f"s{scale}.png")
    img = np.asarray(Image.open(view.path).convert("RGB"))
    length = _arrow_length_px(img, view.pixel_of(poses[-1, :3, 3])[0])
    assert 30 < length < 55, length  # about 7 % of the 600 px wide view (dot radius included)


def test_long_answer_text_stays_inside_the_picture(tmp_path):
    from dataclasses import replace

    from PIL import Image

    from directme.viz.report import render_topdown

    short = render_topdown(make_snapshot(), tmp_path / "short.png", answer=make_answer())
    long_answer = replace(make_answer(), text=" ".join(f"word{i} is here" for i in range(60)) + " " + "x" * 150,
                          evidence=())  # no red arrow: every red pixel is caption text
    view = render_topdown(make_snapshot(), tmp_path / "long.png", answer=long_answer)
    img = np.asarray(Image.open(view.path).convert("RGB")).astype(int)
    red = (img[:, :, 0] > 90) & (img[:, :, 1] < 60) & (img[:, :, 2] < 60)  # caption colour (0.5, 0, 0)
    rows = np.flatnonzero(red.any(axis=1))
    assert view.height_px > short.height_px  # the picture grows with the text
    assert rows.max() < img.shape[0] - 3 and not red[:, -3:].any()  # nothing reaches the bottom or right edge
    lines = np.count_nonzero(np.diff(np.r_[-9, rows]) > 3)
    assert 8 <= lines <= 12  # wrapped on many lines, cut with an ellipsis before it grows without bound
    # the map keeps its size: the wearer is drawn where the short version draws it
    assert np.allclose(np.diff(view.pixel_of(np.eye(3)[:2]), axis=0), np.diff(short.pixel_of(np.eye(3)[:2]), axis=0))
