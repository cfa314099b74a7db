"""Simulator episodes: determinism, lazy frames, save/load round trip, UCS-Bench export, bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.sim import SUBTASKS, generate_episode, load_episode, save_episode, to_ucsbench
from directme.sim.catalog import objects365_labels, CATALOG
from directme.types import Frame


@pytest.fixture(scope="module")
def ep():
    return generate_episode(seed=5, minutes=1.5, width=128, height=96)


def test_deterministic_for_a_seed(ep):
    again = generate_episode(seed=5, minutes=1.5, width=128, height=96)
    assert [g.T_world_cam for g in again.frames_gt] == [g.T_world_cam for g in ep.frames_gt]
    assert [(o.label, o.positions_w) for o in again.objects] == [(o.label, o.positions_w) for o in ep.objects]
    assert again.events == ep.events
    assert [(q.text, q.options, q.answer, q.t_s) for q in again.questions] == \
           [(q.text, q.options, q.answer, q.t_s) for q in ep.questions]
    a, b = again.render(17), ep.render(17)
    assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.depth_m, b.depth_m)
    other = generate_episode(seed=6, minutes=0.5, width=64, height=48, with_questions=False)
    assert other.frames_gt[3].T_world_cam != ep.frames_gt[3].T_world_cam


def test_frames_are_lazy_and_complete(ep):
    it = ep.frames()
    assert not isinstance(it, (list, tuple))
    frames = list(ep.frames(0, 4))
    assert len(frames) == 4 and all(isinstance(f, Frame) for f in frames)
    f = frames[2]
    assert f.index == 2 and f.t_s == pytest.approx(2.0)
    assert f.rgb.shape == (96, 128, 3) and f.depth_m.shape == (96, 128)
    assert f.intrinsics.shape_hw == (96, 128) and f.T_world_cam is not None
    assert np.all(f.depth_m > 0) and f.meta["instance_ids"].shape == (96, 128)
    assert ep.n_frames == 90 and ep.duration_s == pytest.approx(90.0)
    # the camera stays at eye height, pitched slightly down on average
    z = np.array([g.T_world_cam.t[2] for g in ep.frames_gt])
    assert np.all((z > 1.5) & (z < 1.7))
    pitch = np.degrees(np.arcsin(np.array([g.T_world_cam.R[2, 2] for g in ep.frames_gt])))
    assert -40 < np.median(pitch) < 0


def test_walking_speed_and_rooms(ep):
    xy = np.array([g.T_world_cam.t[:2] for g in ep.frames_gt])
    speed = np.linalg.norm(np.diff(xy, axis=0), axis=1) * ep.fps
    assert speed.max() <= 1.45  # never faster than a brisk walk
    for g in ep.frames_gt:
        room = ep.layout.room_at(*g.T_world_cam.t[:2])
        assert room is not None and room.room_type == g.room
    assert len({g.room for g in ep.frames_gt}) >= 2


def test_objects_use_objects365_labels(ep):
    vocab = set(objects365_labels())
    assert len(objects365_labels()) == 365 and set(CATALOG) <= vocab
    assert all(o.label in vocab for o in ep.objects)
    labels = [o.label for o in ep.objects]
    assert any(labels.count(lb) >= 2 for lb in labels)  # several of one class (counting)
    ids = [o.object_id for o in ep.objects]
    assert ids == list(range(1, len(ids) + 1))


def test_save_load_round_trip(ep, tmp_path):
    save_episode(ep, tmp_path / "with_frames")
    save_episode(ep, tmp_path / "scene_only", write_frames=False)
    for name in ("with_frames", "scene_only"):
        back = load_episode(tmp_path / name)
        assert back.video_uid == ep.video_uid and back.n_frames == ep.n_frames
        assert back.intrinsics == ep.intrinsics and back.events == ep.events
        assert [g.T_world_cam for g in back.frames_gt] == [g.T_world_cam for g in ep.frames_gt]
        assert [g.visible_ids for g in back.frames_gt] == [g.visible_ids for g in ep.frames_gt]
        assert [(o.label, o.size_m, o.positions_w, o.present) for o in back.objects] == \
               [(o.label, o.size_m, o.positions_w, o.present) for o in ep.objects]
        assert [(q.qid, q.text, q.options, q.answer, q.subtask, q.category, q.qtype) for q in back.questions] == \
               [(q.qid, q.text, q.options, q.answer, q.subtask, q.category, q.qtype) for q in ep.questions]
        a, b = back.render(11), ep.render(11)
        assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.instance_ids, b.instance_ids)
        assert np.allclose(a.depth_m, b.depth_m, atol=5e-4 if name == "with_frames" else 0)


def test_ucsbench_export_schema(ep, tmp_path):
    save_episode(ep, tmp_path, write_frames=False)
    items = json.loads((tmp_path / "ucsbench.json").read_text())
    assert items == json.loads(json.dumps(to_ucsbench(ep)))
    assert len(items) == len(ep.questions) > 0
    for it in items:
        assert {"qid", "video_uid", "question", "question_timestamps", "options", "answer_label", "category",
                "subcategory", "qtype"} <= set(it)
        h, m, s = (int(x) for x in it["question_timestamps"].split(":"))
        assert h * 3600 + m * 60 + s == round(it["timestamp_s"])
        assert it["answer_label"] in it["options"] and it["subcategory"] in SUBTASKS
        assert it["qtype"] in ("COUNT", "BINARY", "OTHER")
        assert len(it["options"]) == (2 if it["qtype"] == "BINARY" else 5)


def test_bad_input_is_rejected(ep, tmp_path):
    with pytest.raises(InvalidInputError):
        generate_episode(minutes=0)
    with pytest.raises(InvalidInputError):
        generate_episode(minutes=1, width=8)
    with pytest.raises(InvalidInputError):
        ep.render(ep.n_frames)
    with pytest.raises(InvalidInputError, match="episode.json"):
        load_episode(tmp_path / "nothing_here")
    (tmp_path / "episode.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(InvalidInputError, match="unsupported"):
        load_episode(tmp_path)


def test_deterministic_across_processes():
    """Same seed, different Python hash seeds: identical questions (no set-order dependence)."""
    import os
    import subprocess
    import sys

    code = ("import json; from directme.sim import generate_episode, to_ucsbench; "
            "print(json.dumps(to_ucsbench(generate_episode(seed=9, minutes=1.5, width=64, height=48))))")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": s}).stdout for s in ("1", "2")]
    assert outs[0] == outs[1] and len(json.loads(outs[0])) > 0
