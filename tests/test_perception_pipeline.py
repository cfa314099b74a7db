"""Pipeline composition, config resolution, given poses, box tracker, RGB-D odometry, weights lookup."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from directme.errors import InvalidInputError, MissingWeightsError
from directme.geometry import Intrinsics, Pose, rotation_about_axis
from directme.perception import build_perception
from directme.perception.alignment import ate_rmse, umeyama
from directme.perception.base import Detection
from directme.perception.pipeline import PerceptionPipeline, resolve_config
from directme.perception.tracks import BoxTracker, LabelVotes
from directme.perception.weights import WeightSpec, find_weights
from directme.types import Frame

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
K = Intrinsics(60.0, 60.0, 31.5, 23.5, 64, 48)


def _frame(i: int, depth: bool = True, pose: bool = True) -> Frame:
    rgb = np.zeros((48, 64, 3), np.uint8)
    rgb[10:30, 10 + i:30 + i] = 200
    T = Pose.from_Rt(np.eye(3), [0.1 * i, 0, 0]) if pose else None
    return Frame(t_s=0.5 * i, rgb=rgb, depth_m=np.full((48, 64), 2.0, np.float32) if depth else None,
                 T_world_cam=T, intrinsics=K, index=i, source="synthetic")


class _FakeDetector:
    name = "fake"

    def __init__(self) -> None:
        self.calls = 0

    def set_vocabulary(self, labels):
        self.labels = list(labels)

    def detect(self, rgb):
        self.calls += 1
        return [Detection((10.0, 10.0, 30.0, 30.0), "cup", 0.8), Detection((40.0, 5.0, 60.0, 20.0), "mug", 0.4)]


def test_given_pipeline_with_box_tracker_and_redetection() -> None:
    det = _FakeDetector()
    p = build_perception({"depth_pose": {"name": "given"}, "scene_tagger": {"name": "fallback"}})
    p = PerceptionPipeline(p.depth_pose, det, None, p.scene_tagger, redetect_every=3, vocabulary=["cup", "mug"],
                           redetect_every_s=None)
    out = [fp for i in range(7) for fp in p.process(_frame(i))] + p.flush()
    assert [fp.t_s for fp in out] == [0.5 * i for i in range(7)]
    assert det.calls == 3  # frames 0, 3, 6
    for fp in out:
        fp.validate()
        assert fp.scene_tag is None and fp.frame.depth_m.dtype == np.float32
        assert {i.label for i in fp.instances} == {"cup", "mug"}
        assert all(i.mask.shape == (48, 64) for i in fp.instances)
    assert np.allclose(out[4].frame.T_world_cam.t, [0.4, 0, 0])


def test_detector_runs_at_least_once_per_second_of_stream() -> None:
    """At 2 fps the detector runs on every second frame by default (redetect_every_s = 1 s); with a frame
    rule as well, on whichever comes first; at 1 fps (sparse frames) on every frame."""
    for kwargs, calls in (({}, 4), ({"redetect_every": 3, "redetect_every_s": None}, 3),
                          ({"redetect_every": 3}, 4), ({"redetect_every_s": 0.0}, 7)):
        det = _FakeDetector()
        base = build_perception({"depth_pose": {"name": "given"}})
        p = PerceptionPipeline(base.depth_pose, det, None, None, vocabulary=["cup", "mug"], **kwargs)
        for i in range(7):  # frames 0.5 s apart
            p.process(_frame(i))
        assert det.calls == calls, kwargs
    with pytest.raises(InvalidInputError, match="redetect_every_s"):
        PerceptionPipeline(base.depth_pose, _FakeDetector(), None, None, redetect_every_s=float("nan"))


def test_given_errors_name_the_fix(tmp_path: Path) -> None:
    p = build_perception({"depth_pose": "given"})
    with pytest.raises(InvalidInputError, match="da3"):
        p.process(_frame(0, depth=False))
    with pytest.raises(InvalidInputError, match="trajectory"):
        p.process(_frame(1, pose=False))
    traj = tmp_path / "traj.txt"
    traj.write_text("0.0 1 0 0 0 0 0 1\n0.5 2 0 0 0 0 0 1\n")
    p = build_perception({"depth_pose": {"name": "given", "trajectory": str(traj), "relative_to_first": True}})
    out = p.process(_frame(0, pose=False)) + p.process(_frame(1, pose=False))
    assert np.allclose(out[0].frame.T_world_cam.t, 0) and np.allclose(out[1].frame.T_world_cam.t, [1, 0, 0])


def test_config_resolution_and_errors() -> None:
    class Cfg:  # like directme.config.PerceptionConfig
        backend = "rgbd"
        options = {"detector": None, "tracker": None, "scene_tagger": {"name": "fallback"}}

    d = resolve_config(Cfg())
    assert d["depth_pose"]["name"] == "rgbd_odometry" and d["detector"] is None
    assert resolve_config({"preset": "default"})["tracker"]["name"] == "sam2"
    with pytest.raises(InvalidInputError, match="unknown depth_pose backend 'nope'"):
        build_perception({"depth_pose": {"name": "nope"}})
    with pytest.raises(InvalidInputError, match="unknown perception config keys"):
        resolve_config({"depth_pose": "given", "detektor": {}})
    with pytest.raises(InvalidInputError, match="unknown perception preset"):
        resolve_config({"preset": "fast"})


def test_box_tracker_and_label_votes() -> None:
    v = LabelVotes()
    for lab, s in [("cup", 0.5), ("mug", 0.9), ("cup", 0.6)]:
        v.add(lab, s)
    assert v.label == "cup" and np.isclose(v.confidence, 1.1 / 2.0)
    tr = BoxTracker(hold_frames=1)
    a = tr.update(_frame(0), [Detection((0, 0, 10, 10), "cup", 0.9)])
    b = tr.update(_frame(1), [Detection((1, 0, 11, 10), "cup", 0.8), Detection((30, 30, 40, 40), "tv", 0.7)])
    assert a[0].track_id == b[0].track_id and len(b) == 2 and b[0].mask.sum() == 100
    assert len(tr.update(_frame(2), None)) == 2 and tr.update(_frame(3), None) == []


def test_weights_missing_names_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIRECTME_WEIGHTS_DIR", str(tmp_path))
    spec = WeightSpec("sam2.1_hiera_tiny.pt", "facebook/sam2.1-hiera-tiny")
    with pytest.raises(MissingWeightsError, match="sam2.1_hiera_tiny.pt.*hf download"):
        find_weights(spec, tmp_path / "nowhere")
    (tmp_path / "sam2.1_hiera_tiny.pt").write_bytes(b"x")
    assert find_weights(spec) == tmp_path / "sam2.1_hiera_tiny.pt"


def test_umeyama_recovers_similarity() -> None:
    rng = np.random.default_rng(0)
    src = rng.normal(size=(20, 3))
    R = rotation_about_axis(np.array([0.2, 1.0, 0.1]), 0.7)
    dst = 1.7 * src @ R.T + [1, 2, 3]
    s, R2, t = umeyama(src, dst)
    assert np.isclose(s, 1.7) and np.allclose(R2, R) and np.allclose(t, [1, 2, 3])
    assert ate_rmse(src @ R.T + 5, src) < 1e-9


def test_rgbd_odometry_recovers_synthetic_motion() -> None:
    pytest.importorskip("open3d")
    rng = np.random.default_rng(1)
    tex = (rng.random((24, 32)) * 255).astype(np.uint8)
    big = np.kron(tex, np.ones((4, 4), np.uint8))  # 96 x 128 texture
    Kb = Intrinsics(100.0, 100.0, 63.5, 47.5, 128, 96)
    odo = build_perception({"depth_pose": {"name": "rgbd_odometry", "downsample": 1}}).depth_pose
    poses = []
    for i in range(4):
        shift = 2 * i  # a fronto-parallel wall at 2 m, camera moving right by 2 px = 0.04 m per frame
        img = np.roll(big, -shift, axis=1)
        f = Frame(t_s=i, rgb=np.repeat(img[:, :, None], 3, 2), depth_m=np.full((96, 128), 2.0, np.float32),
                  intrinsics=Kb, index=i)
        poses.append(odo.push(f)[0][1].T_world_cam.t)
    assert np.allclose(poses[0], 0)
    assert abs(poses[3][0] - 0.12) < 0.03, poses


def test_real_seven_scenes_odometry_short() -> None:
    folder = DATA / "sevenscenes-redkitchen"
    if not folder.exists():
        pytest.skip(f"shared data not available at {folder}")
    pytest.importorskip("open3d")
    from directme.readers.rgbd import SevenScenesReader

    p = build_perception({"depth_pose": {"name": "rgbd_odometry"}})
    est, gt = [], []
    for frame in SevenScenesReader(folder, fps=None, max_frames=20):
        for fp in p.process(frame):
            fp.validate()
            est.append(fp.frame.T_world_cam.t)
            gt.append(frame.T_world_cam.t)
    assert len(est) == 20 and ate_rmse(np.array(est), np.array(gt)) < 0.02
