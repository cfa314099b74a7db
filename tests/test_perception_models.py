"""Every model backend built with random weights from its packaged config, run through the full
perception step on tiny CPU frames: shapes, units, frames and timestamps of what reaches memory."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from directme.geometry import Intrinsics, Pose, rotation_about_axis
from directme.perception import build_perception
from directme.perception.base import Detection
from directme.types import Frame

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _frames(n: int, hw=(60, 80), with_geometry: bool = False) -> list[Frame]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        kw = {}
        if with_geometry:
            kw = dict(depth_m=np.full(hw, 1.5, np.float32), T_world_cam=Pose.from_Rt(np.eye(3), [0.05 * i, 0, 0]),
                      intrinsics=Intrinsics(70.0, 70.0, hw[1] / 2, hw[0] / 2, hw[1], hw[0]))
        out.append(Frame(t_s=1.0 * i + 0.25, rgb=rng.integers(0, 255, (*hw, 3), dtype=np.uint8), index=i,
                         source="tiny", **kw))
    return out


@pytest.fixture(scope="module")
def sam2_tracker():
    pytest.importorskip("sam2")
    from directme.perception.sam2_tracker import Sam2StreamTracker

    tr = Sam2StreamTracker(weights="random", image_size=128, max_lost=2)
    head = tr.model.sam_mask_decoder.pred_obj_score_head
    last = head.layers[-1] if hasattr(head, "layers") else head
    torch.nn.init.constant_(last.bias, 10.0)  # random weights: make every object "present"
    return tr


@pytest.mark.slow
def test_da3_streaming_chunks_resized_to_input() -> None:
    pytest.importorskip("depth_anything_3")
    p = build_perception({"depth_pose": {"name": "da3", "preset": "da3-small", "weights": "random",
                                         "chunk_size": 3, "overlap": 1, "process_res": 56}})
    frames = _frames(6)
    out = []
    for f in frames:
        out += p.process(f)
    assert len(out) == 5  # chunks [0, 1, 2] and [2, 3, 4] emitted; frame 5 waits for the next chunk
    out += p.flush()
    assert [fp.t_s for fp in out] == [f.t_s for f in frames]
    for fp in out:
        fp.validate()
        assert fp.frame.depth_m.shape == (60, 80) and fp.frame.intrinsics.shape_hw == (60, 80)
        assert np.all(np.isfinite(fp.frame.depth_m))
    assert np.allclose(out[0].frame.T_world_cam.matrix, np.eye(4), atol=1e-6)


def test_da3_chunk_alignment_recovers_sim3() -> None:
    from directme.geometry import rotation_about_axis
    from directme.perception.da3 import apply_sim3, fit_chunk_to_world

    rng = np.random.default_rng(2)
    world = [Pose.from_Rt(rotation_about_axis(rng.normal(size=3), 0.3), rng.normal(size=3)).matrix for _ in range(4)]
    s, R, t = 0.5, rotation_about_axis(np.array([0, 0, 1.0]), 0.4), np.array([1.0, -2.0, 0.5])
    S_true_inv = np.eye(4)
    S_true_inv[:3, :3], S_true_inv[:3, 3] = R.T / s, -R.T @ t / s
    chunk = []
    for T in world:  # the same cameras seen in a chunk frame with another scale
        c = np.eye(4)
        c[:3, :3] = R.T @ T[:3, :3]
        c[:3, 3] = S_true_inv[:3, :3] @ T[:3, 3] + S_true_inv[:3, 3]
        chunk.append(c)
    depth_world = [np.full((4, 4), 2.0)] * 4
    S = fit_chunk_to_world(world, chunk, depth_world, [d / s for d in depth_world])
    for Tw, Tc in zip(world, chunk):
        T, scale = apply_sim3(S, Tc)
        assert np.allclose(T, Tw, atol=1e-6) and np.isclose(scale, s)


def _posed_frames(n: int, hw=(60, 80), with_K: bool = True) -> list[Frame]:
    """RGB + device pose (no depth): e.g. a video with a TUM / Aria MPS trajectory."""
    K = Intrinsics(70.0, 70.0, hw[1] / 2, hw[0] / 2, hw[1], hw[0]) if with_K else None
    return [dataclasses.replace(f, T_world_cam=Pose.from_Rt(rotation_about_axis(np.array([0, 1.0, 0]), 0.1 * f.index),
                                                            [0.05 * f.index, 0.01 * f.index, 0]), intrinsics=K)
            for f in _frames(n, hw)]


def _spy_inference(backend) -> list:
    """Record each raw DA3 Prediction (the real network still runs)."""
    seen, real = [], backend.model.inference

    def spy(*args, **kwargs):
        pred = real(*args, **kwargs)
        seen.append((np.array(pred.depth, np.float32), None if pred.extrinsics is None else np.array(pred.extrinsics)))
        return pred
    backend.model.inference = spy
    return seen


@pytest.fixture(scope="module")
def da3_metric():
    pytest.importorskip("depth_anything_3")
    from directme.perception.da3 import DepthAnything3Backend

    return DepthAnything3Backend("da3metric-large", weights="random", chunk_size=3, overlap=1, process_res=56)


def test_da3_metric_preset_uses_given_poses_and_metric_conversion(da3_metric) -> None:
    from directme.perception.da3 import _resize

    be = da3_metric
    be.reset()
    raw = _spy_inference(be)
    frames = _posed_frames(4)
    out = [r for f in frames for r in be.push(f)] + be.flush()
    assert [f.index for f, _ in out] == [0, 1, 2, 3] and len(raw) == 2
    d_raw = [raw[0][0][0], raw[0][0][1], raw[0][0][2], raw[1][0][1]]  # chunk [0,1,2], then [2,3]
    assert d_raw[0].shape == (42, 56)  # DA3's processed resolution for 60x80 at process_res 56
    focal_p = 70.0 * 56 / 80  # = 70 * 42 / 60: the frame focal at the processed resolution
    for (f, dp), r in zip(out, d_raw):
        assert np.allclose(dp.T_world_cam.matrix, f.T_world_cam.matrix)  # the given pose, not DA3's
        assert np.allclose(dp.intrinsics.K, f.intrinsics.K)
        assert dp.depth_m.shape == (60, 80)
        assert np.allclose(dp.depth_m, _resize(r * focal_p / 300.0, (60, 80)), rtol=1e-5, atol=1e-7)


def test_da3_depth_only_preset_intrinsics_from_fov_and_needs_poses(da3_metric) -> None:
    from directme.errors import InvalidInputError

    be = da3_metric
    be.reset()
    out = [r for f in _posed_frames(2, with_K=False) for r in be.push(f)] + be.flush()
    expected = Intrinsics.from_fov(80, 60, be.hfov_deg)
    assert len(out) == 2 and all(np.allclose(dp.intrinsics.K, expected.K) for _, dp in out)
    be.reset()
    with pytest.raises(InvalidInputError, match="depth only"):
        [r for f in _frames(3) for r in be.push(f)]  # no poses anywhere: must say a pose source is needed
    be.reset()


def test_da3_pose_source_model_rejected_for_depth_only_preset() -> None:
    pytest.importorskip("depth_anything_3")
    from directme.errors import InvalidInputError
    from directme.perception.da3 import DepthAnything3Backend

    with pytest.raises(InvalidInputError, match="depth only"):
        DepthAnything3Backend("da3mono-large", weights="random", pose_source="model")


def test_centre_spread_scale_recovers_similarity_scale() -> None:
    from directme.perception.da3 import centre_spread_scale

    rng = np.random.default_rng(4)
    c_pred = rng.normal(size=(5, 3))
    R = rotation_about_axis(np.array([0.2, 1.0, 0.3]), 0.7)
    c_given = 2.5 * c_pred @ R.T + np.array([3.0, -1.0, 2.0])
    assert np.isclose(centre_spread_scale(c_pred, c_given, 0.05), 2.5)
    still = np.tile([1.0, 2.0, 3.0], (4, 1)) + rng.normal(scale=1e-3, size=(4, 3))
    assert centre_spread_scale(c_pred[:4], still, 0.05) is None  # no baseline: scale unknown


@pytest.mark.slow
def test_da3_multiview_preset_with_given_poses_in_pipeline() -> None:
    pytest.importorskip("depth_anything_3")
    p = build_perception({"depth_pose": {"name": "da3", "preset": "da3-small", "weights": "random",
                                         "chunk_size": 3, "overlap": 1, "process_res": 56}})
    raw = _spy_inference(p.depth_pose)
    frames = _posed_frames(5)
    out = [fp for f in frames for fp in p.process(f)] + p.flush()
    assert [fp.t_s for fp in out] == [f.t_s for f in frames]
    for fp, f in zip(out, frames):
        fp.validate()  # depth was estimated, pose and intrinsics are the given ones
        assert np.allclose(fp.frame.T_world_cam.matrix, f.T_world_cam.matrix)
        assert np.allclose(fp.frame.intrinsics.K, f.intrinsics.K)
        assert np.all(np.isfinite(fp.frame.depth_m)) and np.all(fp.frame.depth_m > 0)
    from directme.perception.da3 import _resize

    depth0, ext0 = raw[0]
    c_pred = np.array([-e[:3, :3].T @ e[:3, 3] for e in ext0])  # DA3 camera centres of chunk [0, 1, 2]
    c_given = np.array([f.T_world_cam.matrix[:3, 3] for f in frames[:3]])
    s = float(np.median(out[0].frame.depth_m / _resize(depth0[0], (60, 80))))
    spread = lambda c: np.sqrt(((c - c.mean(0)) ** 2).sum())  # noqa: E731
    assert np.isclose(s * spread(c_pred), spread(c_given), rtol=1e-4)  # depth in the given poses' metres


def test_grounding_dino_random_detects_in_pixels() -> None:
    pytest.importorskip("transformers")
    from directme.perception.grounding_dino import GroundingDinoDetector

    det = GroundingDinoDetector(weights="random", image_size=96, box_threshold=0.0, max_detections=5)
    det.set_vocabulary(["cup", "dining table", "tv"])
    out = det.detect(_frames(1)[0].rgb)
    assert 0 < len(out) <= 5
    for d in out:
        x0, y0, x1, y1 = d.box_xyxy
        assert 0 <= x0 < x1 <= 80 and 0 <= y0 < y1 <= 60 and d.label in {"cup", "dining table", "tv"}
        assert 0 <= d.score <= 1


def test_sam2_stream_bounded_memory_and_refresh(sam2_tracker) -> None:
    tr = sam2_tracker
    tr.reset()
    frames = _frames(20)
    held, pointers, born = [], [], {}
    for f in frames:
        dets = [Detection((5, 5, 40, 30), "cup", 0.9), Detection((45, 20, 75, 55), "chair", 0.6)] \
            if f.index % 4 == 0 else None
        obs = tr.update(f, dets)
        held.append(tr.memory_frames())
        pointers.append(tr.pointer_frames())
        born.update({tid: f.index for tid in tr._tracks if tid not in born})
        assert all(o.mask.shape == (60, 80) and o.mask.dtype == bool for o in obs)
    m = tr.model
    assert max(held) <= len(tr._tracks) * (m.num_maskmem * m.memory_temporal_stride_for_eval + 1 + tr.max_cond_frames)
    assert max(pointers) <= len(tr._tracks) * (m.max_obj_ptrs_in_encoder + tr.max_cond_frames)
    assert {o.label for o in obs} <= {"cup", "chair"}
    for tid, track in tr._tracks.items():  # SAM2 reads pointers up to max_obj_ptrs_in_encoder - 1 frames back
        frames_held = set(track["out"]["non_cond_frame_outputs"]) | set(track["out"]["cond_frame_outputs"])
        assert set(range(max(born[tid], tr._t - m.max_obj_ptrs_in_encoder + 2), tr._t + 1)) <= frames_held
        for t, entry in track["out"]["non_cond_frame_outputs"].items():
            assert ("maskmem_features" in entry) == (t >= tr._t - m.num_maskmem * m.memory_temporal_stride_for_eval)
            assert entry["obj_ptr"].shape == (1, m.hidden_dim)


def test_sam2_reprompt_is_a_new_conditioning_frame(sam2_tracker, monkeypatch) -> None:
    """A box on an already tracked object is segmented without memory (SAM2's ``is_init_cond_frame``),
    as the official video predictor does for a frame it has not tracked yet."""
    tr = sam2_tracker
    tr.reset()
    calls = []
    real = tr.model.track_step
    monkeypatch.setattr(tr.model, "track_step", lambda **kw: calls.append(kw) or real(**kw))
    f = _frames(4)
    tr.update(f[0], [Detection((5, 5, 40, 30), "cup", 0.9)])
    tr.update(f[1], None)
    calls.clear()
    tr.update(f[2], [Detection(tr._tracks[1]["box"], "cup", 0.9)])
    assert list(tr._tracks) == [1]
    assert [(c["point_inputs"] is not None, c["is_init_cond_frame"]) for c in calls] == [(False, False), (True, True)]
    # a stream is longer than SAM2's pointer window: every frame reads max_obj_ptrs_in_encoder pointers
    assert all(c["num_frames"] >= tr.model.max_obj_ptrs_in_encoder for c in calls)
    assert 2 in tr._tracks[1]["out"]["cond_frame_outputs"] and 2 not in tr._tracks[1]["out"]["non_cond_frame_outputs"]


def _seen_only_when_prompted(tr, monkeypatch) -> None:
    """Random weights with a controlled object score: the object is visible on prompted steps only."""
    real = tr.model._forward_sam_heads

    def heads(backbone_features, point_inputs=None, **kw):
        out = list(real(backbone_features, point_inputs=point_inputs, **kw))
        out[-1] = torch.full_like(out[-1], 10.0 if point_inputs is not None else -10.0)
        return tuple(out)

    monkeypatch.setattr(tr.model, "_forward_sam_heads", heads)


def test_sam2_lost_track_revived_by_redetection_keeps_id(sam2_tracker, monkeypatch) -> None:
    tr = sam2_tracker
    tr.reset()
    _seen_only_when_prompted(tr, monkeypatch)
    f = _frames(4)
    obs = tr.update(f[0], [Detection((5, 5, 40, 30), "cup", 0.9)])
    assert [o.track_id for o in obs] == [1]
    last_box = tr._tracks[1]["box"]
    assert tr.update(f[1], None) == [] and tr._tracks[1]["mask"] is None and tr._tracks[1]["lost"] == 1
    obs = tr.update(f[2], [Detection(last_box, "cup", 0.8)])  # seen again where it was last seen
    assert [o.track_id for o in obs] == [1] and tr._tracks[1]["lost"] == 0 and len(tr._tracks) == 1
    tr.update(f[3], None)
    obs = tr.update(f[0], [Detection(tr._tracks[1]["box"], "chair", 0.9)])  # other label: not the lost cup
    assert [o.track_id for o in obs] == [2] and tr._tracks[2]["votes"].label == "chair"
    assert tr._tracks[1]["votes"].label == "cup" and tr._tracks[1]["lost"] == 2


@pytest.mark.slow
def test_full_pipeline_given_gdino_sam2_clip(sam2_tracker) -> None:
    pytest.importorskip("transformers")
    sam2_tracker.reset()
    p = build_perception({"depth_pose": {"name": "given"},
                          "detector": {"name": "grounding_dino", "weights": "random", "image_size": 96,
                                       "box_threshold": 0.0, "max_detections": 3},
                          "tracker": {"name": "box"}, "scene_tagger": {"name": "clip", "weights": "random"},
                          "redetect_every": 2, "vocabulary": ["cup", "chair", "tv"]})
    p.tracker = sam2_tracker  # reuse the module's SAM2 (building it twice costs ~20 s here)
    frames = _frames(4, with_geometry=True)
    out = [fp for f in frames for fp in p.process(f)] + p.flush()
    assert [fp.t_s for fp in out] == [0.25, 1.25, 2.25, 3.25]
    seen = 0
    for fp in out:
        fp.validate()
        assert fp.scene_tag is not None and 0 <= fp.scene_tag_score <= 1
        seen += len(fp.instances)
        for inst in fp.instances:
            assert inst.label in {"cup", "chair", "tv"} and inst.mask.shape == (60, 80)
    assert seen > 0


@pytest.mark.parametrize("name", ["yolo_world", "yoloe"])
def test_yolo_open_vocab_random_offline(name: str) -> None:
    pytest.importorskip("ultralytics")
    from directme.perception.pipeline import build_stage

    det = build_stage("detector", {"name": name, "weights": "random", "imgsz": 96, "conf": 0.0,
                                   "max_detections": 4})
    det.set_vocabulary(["cup", "chair", "tv"])
    out = det.detect(_frames(1, hw=(48, 64))[0].rgb)
    assert 0 < len(out) <= 4
    for d in out:
        assert 0 <= d.box_xyxy[0] < d.box_xyxy[2] <= 64 and 0 <= d.box_xyxy[1] < d.box_xyxy[3] <= 48
        assert d.label in {"cup", "chair", "tv"}
