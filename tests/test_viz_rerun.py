"""rerun logging: write a recording to a file, read it back with rerun, check entities and values."""
from __future__ import annotations

import numpy as np
import pytest

from directme.geometry import Intrinsics, Pose
from directme.types import Frame, FramePerception, InstanceObservation
from test_viz_report import make_answer, make_snapshot

pytest.importorskip("rerun")


def _frame(i: int, size=(48, 64)) -> FramePerception:
    h, w = size
    mask = np.zeros(size, bool)
    mask[10:20, 5:30] = True
    frame = Frame(float(i), np.full((h, w, 3), 40 * i, np.uint8), np.full(size, 2.0, np.float32),
                  Pose(np.eye(4)), Intrinsics.from_fov(w, h, 90), index=i)
    return FramePerception(frame, (InstanceObservation(3, "chair", 0.9, mask),), scene_tag="kitchen")


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    from directme.viz.rerun_log import RerunLogger

    path = tmp_path_factory.mktemp("rr") / "run.rrd"
    log = RerunLogger(path, image_max_side=32)
    for i in range(3):
        log.log_frame(_frame(i))
        log.log_memory(make_snapshot(float(i)))
    log.log_answer(make_answer(), make_snapshot())
    log.close()
    return path


def test_recording_reads_back_with_expected_entities(recording):
    from directme.viz.rerun_log import read_rrd_entities

    ents = read_rrd_entities(recording)
    expected = {
        "/world/camera": "Transform3D:translation", "/world/camera/image": "Pinhole:image_from_camera",
        "/world/camera/image/depth": "DepthImage:buffer", "/world/camera/image/instances": "SegmentationImage:buffer",
        "/world/camera/image/detections": "Boxes2D:class_ids", "/world/trajectory": "LineStrips3D:strips",
        "/world/objects/chair/o1": "Points3D:class_ids", "/world/objects/dining_table/o2": "Points3D:labels",
        "/world/places": "Ellipsoids3D:labels", "/world/graph/edges": "LineStrips3D:strips",
        "/world/ego": "Transform3D:mat3x3", "/world/ego/clock": "LineStrips3D:strips",
        "/world/question/subgraph": "Points3D:positions", "/world/ego/relation": "Arrows3D:vectors",
        "/question/answer": "TextDocument:text", "/answers": "TextLog:text",
        "/world": "AnnotationContext:context",
    }
    for entity, column in expected.items():
        assert column in ents.get(entity, set()), (entity, sorted(ents.get(entity, ())))
    assert "stream_time" in ents["/world/objects/chair/o1"]
    assert "TransformAxes3D:axis_length" in ents["/world/ego"]
    assert "ViewCoordinates:xyz" in ents["/world"]  # z-up world told to the viewer


def test_recording_carries_a_default_layout(recording):
    from rerun.experimental import RrdReader

    reader = RrdReader(str(recording))
    assert len(reader.recordings()) == 1 and len(reader.blueprints()) == 1


def test_recording_values_on_the_stream_time_timeline(recording):
    from directme.viz.rerun_log import read_rrd_column

    # an object is logged when it changes: the snapshots at 0, 1, 2 and 4 s differ only in the ego track
    chair = read_rrd_column(recording, "/world/objects/chair/o1", "Points3D:labels")
    assert [t for t, _ in chair] == pytest.approx([0.0]) and chair[0][1] == ["chair"]
    (_, cup), = read_rrd_column(recording, "/world/objects/cup/o3", "Points3D:labels")
    assert cup == ["cup (gone)"]
    (t, (text,)), = read_rrd_column(recording, "/answers", "TextLog:text")
    assert t == pytest.approx(4.0) and "front-left" in text and "chair" in text
    (_, highlighted), = read_rrd_column(recording, "/world/question/subgraph", "Points3D:positions")
    assert np.allclose(highlighted, [[4.5, 2.0, 0.5]])
    boxes = read_rrd_column(recording, "/world/camera/image/detections", "Boxes2D:labels")
    assert len(boxes) == 3 and boxes[0][1][0].startswith("chair #3")
    # the trajectory grows with time: 1, 2, 3 then 5 poses
    strips = read_rrd_column(recording, "/world/trajectory", "LineStrips3D:strips")
    assert [len(s[0]) if s else 0 for _, s in strips] == [0, 2, 3, 5]


def test_pinhole_matches_the_subsampled_image(recording):
    from directme.viz.rerun_log import read_rrd_column

    (_, (res,)), *_ = read_rrd_column(recording, "/world/camera/image", "Pinhole:resolution")
    assert res == [32, 24]  # 64x48 logged with image_max_side=32 -> stride 2


def test_serve_mode_gives_a_local_address():
    """In a child process: rerun's gRPC server threads must not outlive or block the test process."""
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, 'tests')\n"
            "from directme.viz.rerun_log import RerunLogger\n"
            "from test_viz_rerun import make_snapshot\n"
            "log = RerunLogger(serve=True)\n"
            "print(log.url, log.path)\n"
            "log.log_memory(make_snapshot())\n"
            "log.close()\n"
            "print('closed', flush=True)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    lines = out.stdout.split("\n")
    assert "127.0.0.1" in lines[0] and lines[0].endswith(" None"), out.stdout + out.stderr
    assert "closed" in lines


def test_logged_images_decode_to_the_frames(recording):
    import io

    from PIL import Image

    from directme.viz.rerun_log import read_rrd_column

    blobs = read_rrd_column(recording, "/world/camera/image", "EncodedImage:blob")
    assert [t for t, _ in blobs] == pytest.approx([0.0, 1.0, 2.0])
    for i, (_, (blob,)) in enumerate(blobs):
        img = np.asarray(Image.open(io.BytesIO(bytes(blob))).convert("RGB"))
        assert img.shape == (24, 32, 3) and abs(img.mean() - 40 * i) < 3
    (_, (depth,)), *_ = read_rrd_column(recording, "/world/camera/image/depth", "DepthImage:buffer")
    assert np.all(np.frombuffer(bytes(depth), np.uint16) == 2000)  # 2 m in millimetres


def _context_classes(rrd) -> dict[int, tuple[str, int]]:
    from directme.viz.rerun_log import read_rrd_column

    _, (ctx,) = read_rrd_column(rrd, "/world", "AnnotationContext:context")[-1]  # static: the last one holds
    return {c["class_id"]: (c["class_description"]["info"]["label"], c["class_description"]["info"]["color"])
            for c in ctx}


def test_memory_recording_one_entity_per_object_and_a_class_legend():
    """A memory-only recording: per-object entities under their class, their history, the annotation context."""
    from dataclasses import replace

    from directme.memory.snapshot import ObjectNode
    from directme.viz.rerun_log import RerunLogger, read_rrd_column, read_rrd_entities, read_rrd_objects

    log = RerunLogger(memory=True)
    first = make_snapshot(2.0)
    log.log_memory(first)
    moved = ObjectNode("o1", "chair", {"chair": 1.0}, np.array([1.0, 3.0, 0.5]), 0.0, 4.0, 4,
                       position_history=((0.0, np.array([4.5, 2.0, 0.5])), (4.0, np.array([1.0, 3.0, 0.5]))))
    relabelled = replace(first.objects["o2"], label="desk")  # votes changed the table's label
    later = replace(make_snapshot(4.0), objects={"o1": moved, "o2": relabelled})  # the cup merged away
    log.log_memory(later)
    rrd = log.rrd_bytes()
    log.close()

    classes = _context_classes(rrd)
    labels = {label for label, _ in classes.values()}
    assert labels == {"chair", "cup", "dining table", "desk"}
    assert len({colour for _, colour in classes.values()}) == len(classes)  # a colour per class
    ents = read_rrd_entities(rrd)
    assert {"/world/objects/chair/o1", "/world/objects/cup/o3", "/world/objects/dining_table/o2",
            "/world/objects/desk/o2", "/world/objects/chair/o1/history"} <= set(ents)
    (_, ids), = read_rrd_column(rrd, "/world/objects/desk/o2", "Points3D:class_ids")
    assert classes[ids[0]][0] == "desk"
    # the chair's history: where it was at 2 s, where it is at 4 s, and the path between its placements
    (t0, p0), (t1, p1) = read_rrd_column(rrd, "/world/objects/chair/o1", "Points3D:positions")
    assert (t0, t1) == pytest.approx((2.0, 4.0))
    assert np.allclose(p0, [[4.5, 2.0, 0.5]]) and np.allclose(p1, [[1.0, 3.0, 0.5]])
    (_, strips), = read_rrd_column(rrd, "/world/objects/chair/o1/history", "LineStrips3D:strips")
    assert np.allclose(strips[0], [[4.5, 2.0, 0.5], [1.0, 3.0, 0.5]])
    # at the end: the merged cup and the old label's entity are cleared
    assert set(read_rrd_objects(rrd)) == {"/world/objects/chair/o1", "/world/objects/desk/o2"}
    assert set(read_rrd_objects(rrd, t_s=2.0)) == {"/world/objects/chair/o1", "/world/objects/cup/o3",
                                                   "/world/objects/dining_table/o2"}


def test_ego_frame_is_a_transform_and_relations_live_in_it():
    from directme.geometry import EgoFrame, Pose
    from directme.viz.rerun_log import RerunLogger, read_rrd_column

    log = RerunLogger(memory=True)
    snap = make_snapshot()
    log.log_answer(make_answer(), snap)
    rrd = log.rrd_bytes()
    _, (t,) = read_rrd_column(rrd, "/world/ego", "Transform3D:translation")[-1]
    _, (m,) = read_rrd_column(rrd, "/world/ego", "Transform3D:mat3x3")[-1]
    ego = EgoFrame.from_camera(Pose(snap.ego.T_world_cam[-1]), snap.up_world)
    assert np.allclose(t, ego.T_world_ego.t)
    assert np.allclose(np.reshape(m, (3, 3), order="F"), ego.T_world_ego.R)  # rerun stores 3x3 column-major
    # the arrow to the chair is in the ego frame: 1.5 m ahead and 2 m to the left of the wearer at (3, 0)
    (_, vectors), = read_rrd_column(rrd, "/world/ego/relation", "Arrows3D:vectors")
    assert np.allclose(vectors, [[1.5, 2.0, -1.1]], atol=1e-5)
    (_, hours), = read_rrd_column(rrd, "/world/ego/clock/hours", "Points3D:labels")
    assert hours == ["12", "3", "6", "9"]
    log.close()
