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
        "/world/camera/image/detections": "Boxes2D:labels", "/world/trajectory": "LineStrips3D:strips",
        "/world/objects": "Points3D:labels", "/world/places": "Ellipsoids3D:labels",
        "/world/graph/edges": "LineStrips3D:strips", "/world/question/ego": "Arrows3D:vectors",
        "/world/question/subgraph": "Points3D:positions", "/world/question/relation": "Arrows3D:vectors",
        "/question/answer": "TextDocument:text", "/answers": "TextLog:text",
    }
    for entity, column in expected.items():
        assert column in ents.get(entity, set()), (entity, sorted(ents.get(entity, ())))
    assert "stream_time" in ents["/world/objects"]
    assert "ViewCoordinates:xyz" in ents["/world"]  # z-up world told to the viewer


def test_recording_carries_a_default_layout(recording):
    from rerun.experimental import RrdReader

    reader = RrdReader(str(recording))
    assert len(reader.recordings()) == 1 and len(reader.blueprints()) == 1


def test_recording_values_on_the_stream_time_timeline(recording):
    from directme.viz.rerun_log import read_rrd_column

    objects = read_rrd_column(recording, "/world/objects", "Points3D:labels")
    assert [t for t, _ in objects] == pytest.approx([0.0, 1.0, 2.0, 4.0])
    assert objects[-1][1] == ["chair", "dining table", "cup (gone)"]
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
