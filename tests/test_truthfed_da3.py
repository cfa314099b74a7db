"""Our DA3 backend with the truth-fed network stand-in on simulator episodes: the depth and poses it
returns must be the ground truth, in metres wherever the preset (or the metric evidence) allows it,
and flagged ``metric=False`` where it does not."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("depth_anything_3")

from directme.sim import generate_episode  # noqa: E402
from directme.sim.truthfed import TruthSource  # noqa: E402
from directme.sim.truthfed.da3 import install, processed_intrinsics  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def episode():
    return generate_episode(seed=0, minutes=0.5)


@pytest.fixture(scope="module")
def metric_model():
    """One random da3metric-large, shared by the backends below (its forward is replaced anyway)."""
    from directme.perception.da3 import import_da3, load_da3

    return load_da3(import_da3(), "da3metric-large", "random", "cpu", True)


def _backend(preset: str, truth: TruthSource, metric_model=None, seed: int = 0, **kw):
    from directme.perception.da3 import DepthAnything3Backend

    be = DepthAnything3Backend(preset, weights="random", device="cpu", process_res=kw.pop("process_res", 280), **kw)
    be.metric_model = metric_model
    install(be, truth, seed=seed)
    return be


def _stream(be, truth: TruthSource, frames) -> list:
    out = []
    for f in frames:
        truth.register(f)
        out += be.push(f)
    return out + be.flush()


def _errors(out, episode, world_is_first_camera: bool = True) -> tuple[float, float]:
    """Median relative depth error and max camera-centre error (m) against the ground truth, in the first
    output camera's frame (DA3's own poses) or in the episode's world (given poses)."""
    T0 = episode.frames_gt[out[0][0].index].T_world_cam.matrix if world_is_first_camera else np.eye(4)
    dep, cen = [], []
    for f, dp in out:
        gt = episode.frame(f.index)
        m = gt.depth_m > 0
        dep.append(np.abs(dp.depth_m[m] - gt.depth_m[m]) / gt.depth_m[m])
        c_gt = (np.linalg.inv(T0) @ gt.T_world_cam.matrix)[:3, 3]
        cen.append(np.linalg.norm(dp.T_world_cam.matrix[:3, 3] - c_gt))
    return float(np.median(np.concatenate(dep))), float(np.max(cen))


def test_processed_intrinsics_follow_da3_preprocessing() -> None:
    from directme.geometry import Intrinsics

    K = Intrinsics(228.5, 228.5, 159.5, 119.5, 320, 240)
    assert processed_intrinsics(K, 280, "upper_bound_resize").shape_hw == (210, 280)
    assert processed_intrinsics(K, 140, "upper_bound_resize").shape_hw == (112, 140)  # 105 -> nearest 14k
    assert processed_intrinsics(K, 140, "upper_bound_crop").shape_hw == (98, 140)  # 105 -> floor 14k, crop
    assert processed_intrinsics(K, 140, "upper_bound_crop").cy == pytest.approx((119.5 + 0.5) * 140 / 320 - 0.5 - 3)


def test_truthfed_da3_metric_scale_gives_metres(episode, metric_model) -> None:
    """Up-to-scale DA3 (arbitrary scale per chunk, reference view anywhere) + the metric model's evidence
    on keyframes: depth and poses in metres."""
    truth = TruthSource(episode)
    be = _backend("da3-small", truth, metric_model, chunk_size=8, overlap=2, pose_source="model")
    out = _stream(be, truth, episode.frames())
    assert [f.index for f, _ in out] == list(range(episode.n_frames))
    depth_err, centre_err = _errors(out, episode)
    print(f"da3-small + da3metric-large evidence, {len(out)} frames: median depth error {depth_err:.2e}, "
          f"max camera-centre error {centre_err:.2e} m")
    assert depth_err < 5e-3 and centre_err < 1e-3
    assert all(dp.metric for _, dp in out)


def test_truthfed_da3_without_metric_evidence_is_flagged_and_consistent(episode) -> None:
    """No evidence: one unknown scale for the whole stream (chained through the overlaps), flagged."""
    truth = TruthSource(episode)
    be = _backend("da3-small", truth, chunk_size=8, overlap=2, pose_source="model", seed=3)
    out = _stream(be, truth, [episode.frame(i) for i in range(20)])
    assert not any(dp.metric for _, dp in out)
    ratios = [np.median(episode.frame(f.index).depth_m / dp.depth_m) for f, dp in out]
    assert np.ptp(ratios) / np.mean(ratios) < 5e-3 and abs(np.mean(ratios) - 1) > 0.05  # consistent, not metres


def test_truthfed_da3_given_poses_first_chunk_without_baseline(episode, metric_model) -> None:
    """A still first chunk has no baseline: its scale comes from the metric model, later chunks from the
    given poses, reconciled; without a metric model the still chunk is flagged, the rest in metres."""
    still = [dataclasses.replace(episode.frame(0), t_s=0.1 * k) for k in range(3)]
    frames = still + [episode.frame(i) for i in range(1, 16)]
    frames = [dataclasses.replace(f, depth_m=None) for f in frames]  # RGB + device poses
    for mm, flags in ((metric_model, [True] * 3), (None, [False] * 3)):
        truth = TruthSource(episode)
        be = _backend("da3-small", truth, mm, chunk_size=4, overlap=1, pose_source="given", seed=5)
        out = _stream(be, truth, frames)
        assert [dp.metric for _, dp in out][:3] == flags and all(dp.metric for _, dp in out[4:])
        tail = out[4:] if mm is None else out
        errs = [np.median(np.abs(dp.depth_m / episode.frame(f.index).depth_m - 1)) for f, dp in tail]
        assert max(errs) < 5e-3, errs


def test_truthfed_da3metric_with_given_poses_gives_metres(episode, metric_model) -> None:
    truth = TruthSource(episode)
    be = _backend_around("da3metric-large", metric_model, truth)
    out = _stream(be, truth, [dataclasses.replace(episode.frame(i), depth_m=None) for i in range(6)])
    depth_err, centre_err = _errors(out, episode, world_is_first_camera=False)
    assert depth_err < 5e-3 and centre_err < 1e-9 and all(dp.metric for _, dp in out)


def test_truthfed_da3mono_scaled_per_frame_to_given_depth(episode, metric_model) -> None:
    """Relative depth with its own scale per image, scaled to each frame's (noisy, holed) metric depth."""
    from directme.errors import InvalidInputError

    rng = np.random.default_rng(0)
    truth = TruthSource(episode)
    be = _backend_around("da3mono-large", metric_model, truth)  # same architecture as da3metric-large
    frames = []
    for i in range(6):
        f = episode.frame(i)
        noisy = f.depth_m * rng.normal(1.0, 0.02, f.depth_m.shape) * (rng.random(f.depth_m.shape) > 0.3)
        frames.append(dataclasses.replace(f, depth_m=noisy.astype(np.float32)))
    out = _stream(be, truth, frames)
    depth_err, _ = _errors(out, episode, world_is_first_camera=False)
    assert depth_err < 5e-3 and all(dp.metric for _, dp in out)
    be.reset()
    with pytest.raises(InvalidInputError, match="relative depth per image.*metric_scale"):
        _stream(be, truth, [dataclasses.replace(episode.frame(0), depth_m=None)])


def _backend_around(preset: str, model, truth, chunk_size: int = 3, overlap: int = 1, **kw):
    """A ``preset`` backend around an already built model (building another costs seconds; the stand-in
    replaces its network's forward, so only the preset's output conventions matter)."""
    from directme.perception import da3

    real = da3.load_da3
    da3.load_da3 = lambda *a, **k: model
    try:
        be = da3.DepthAnything3Backend(preset, weights="random", device="cpu", chunk_size=chunk_size,
                                       overlap=overlap, process_res=280, **kw)
    finally:
        da3.load_da3 = real
    install(be, truth)
    return be


def test_truthfed_da3nested_gives_metres_on_a_plain_video(episode) -> None:
    """The nested preset gives each chunk in metres (its own reference view): no other evidence needed."""
    from directme.perception.da3 import import_da3, load_da3

    truth = TruthSource(episode)
    small = load_da3(import_da3(), "da3-small", "random", "cpu", True)  # stands for the giant network
    be = _backend_around("da3nested-giant-large", small, truth, chunk_size=8, overlap=2, pose_source="model")
    out = _stream(be, truth, [dataclasses.replace(f, depth_m=None, T_world_cam=None) for f in episode.frames()])
    depth_err, centre_err = _errors(out, episode)
    assert depth_err < 5e-3 and centre_err < 1e-3 and all(dp.metric for _, dp in out)


@pytest.mark.slow
def test_truthfed_default_pipeline_gives_metres_over_two_minutes() -> None:
    """The default pipeline's depth+pose stage (a small network for speed; arbitrary scale per chunk) on a
    plain 2-minute video: positions and depth in metres."""
    from directme.perception import build_perception

    episode = generate_episode(seed=1, minutes=2.0)
    p = build_perception({"preset": "default", "detector": None, "tracker": None, "scene_tagger": None,
                          "depth_pose": {"preset": "da3-small", "weights": "random", "metric_weights": "random",
                                         "process_res": 280, "device": "cpu"}})
    truth = TruthSource(episode)
    install(p.depth_pose, truth, seed=7)
    out = []
    for f in episode.frames():
        f = dataclasses.replace(f, depth_m=None, T_world_cam=None, intrinsics=None)  # a plain video
        truth.register(f)
        out += p.process(f)
    out += p.flush()
    pairs = [(fp.frame, fp) for fp in out]
    depth_err, centre_err = _errors([(f, _as_depth_pose(fp)) for f, fp in pairs], episode)
    print(f"default pipeline, {len(out)} frames (2 min): median depth error {depth_err:.2e}, "
          f"max camera-centre error {centre_err:.2e} m")
    assert len(out) == episode.n_frames and depth_err < 5e-3 and centre_err < 1e-2


def _as_depth_pose(fp):
    from directme.perception.base import DepthPose

    return DepthPose(fp.frame.depth_m, fp.frame.T_world_cam, fp.frame.intrinsics)


def test_truthfed_da3_given_pose_scales_reconciled_across_chunks(episode) -> None:
    """Noisy device poses (5 cm per frame) make each chunk's camera-spread evidence noisy: blended with
    the scale chained through the overlap, consecutive chunks jump less than with each chunk's own
    evidence alone (``scale_gain`` 1, independent chunks), and stay near metres."""
    rng = np.random.default_rng(1)
    frames = []
    for i in range(episode.n_frames):
        f = episode.frame(i)
        T = f.T_world_cam.matrix.copy()
        T[:3, 3] += rng.normal(0.0, 0.05, 3)
        frames.append(dataclasses.replace(f, depth_m=None, T_world_cam=type(f.T_world_cam)(T)))
    jumps, errors = {}, {}
    for gain in (1.0, 0.5):
        truth = TruthSource(episode)
        be = _backend("da3-small", truth, chunk_size=4, overlap=1, pose_source="given", seed=2, scale_gain=gain)
        out = _stream(be, truth, frames)
        log_err = np.log([np.median(dp.depth_m / episode.frame(f.index).depth_m) for f, dp in out])
        chunk_err = log_err[1::3]  # one emitted frame per chunk (chunks emit 3 new frames each after the first)
        jumps[gain], errors[gain] = np.abs(np.diff(chunk_err)).mean(), np.abs(log_err).max()
    print(f"mean scale jump between chunks: independent {jumps[1.0]:.4f}, reconciled {jumps[0.5]:.4f}; "
          f"max |log scale error| {errors[1.0]:.3f} / {errors[0.5]:.3f}")
    assert jumps[0.5] < 0.7 * jumps[1.0] and errors[0.5] < 0.1
