"""Oracle perception: exact replay with `none`, and the `realistic` preset's rates measured."""
from __future__ import annotations

import math

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.perception.base import Perception
from directme.sim.oracle import (FALSE_POSITIVE_ID_BASE, NOISE_PRESETS, NoisePreset, OraclePerception,
                                 get_preset)
from directme.sim import generate_episode
from directme.sim.catalog import similar_labels
from directme.types import Frame


@pytest.fixture(scope="module")
def ep():
    return generate_episode(seed=4, minutes=4.0, width=128, height=96, with_questions=False)


@pytest.fixture(scope="module")
def frames(ep):
    return list(ep.frames())


@pytest.fixture(scope="module")
def realistic(ep, frames):
    oracle = OraclePerception(ep, noise="realistic", seed=1)
    return oracle, [oracle.process(f)[0] for f in frames]


def test_none_replays_ground_truth_exactly(ep, frames):
    oracle = OraclePerception(ep, noise="none")
    assert isinstance(oracle, Perception)
    for f in frames[::7]:
        (fp,) = oracle.process(f)
        fp.validate()
        gt = ep.frames_gt[f.index]
        ids = f.meta["instance_ids"]
        assert np.array_equal(fp.frame.depth_m, f.depth_m) and fp.frame.T_world_cam == gt.T_world_cam
        assert fp.scene_tag == gt.room and "instance_ids" not in fp.frame.meta
        expected = {int(i) for i in np.unique(ids) if i > 0 and (ids == i).sum() >= NOISE_PRESETS["none"].min_mask_pixels}
        assert {inst.track_id for inst in fp.instances} == expected
        for inst in fp.instances:
            assert np.array_equal(inst.mask, ids == inst.track_id)
            assert inst.label == ep.object(inst.track_id).label and 0.3 <= inst.score <= 0.95
    assert oracle.flush() == []


def test_deterministic_and_order_independent(ep, frames):
    a = OraclePerception(ep, noise="realistic", seed=3)
    b = OraclePerception(ep, noise="realistic", seed=3)
    fa = a.process(frames[20])[0]
    b.process(frames[50])
    fb = b.process(frames[20])[0]
    assert np.array_equal(fa.frame.depth_m, fb.frame.depth_m) and fa.frame.T_world_cam == fb.frame.T_world_cam
    assert [(i.track_id, i.label, i.score) for i in fa.instances] == [(i.track_id, i.label, i.score) for i in fb.instances]


def _gt_visible(ep, f, min_px):
    ids = f.meta["instance_ids"]
    return {int(i) for i in np.unique(ids) if i > 0 and (ids == i).sum() >= min_px}


def _gt_object(track_id):
    return track_id if track_id < FALSE_POSITIVE_ID_BASE else (track_id - 2_000_000) // 1000


def test_realistic_detection_rates(ep, frames, realistic):
    oracle, outs = realistic
    p = oracle.preset
    n_gt = n_found = n_fp = n_confusable = n_confused = 0
    for f, fp in zip(frames, outs):
        found = {_gt_object(i.track_id) for i in fp.instances if not _is_fp(i)}
        big = _gt_visible(ep, f, 200)  # large enough to survive mask erosion
        n_gt += len(big)
        n_found += len(big & found)
        for inst in fp.instances:
            assert 0.3 <= inst.score <= 0.95
            if _is_fp(inst):
                n_fp += 1
                assert p.false_positive_score_range[0] <= inst.score <= p.false_positive_score_range[1]
                continue
            true_label = ep.object(_gt_object(inst.track_id)).label
            if similar_labels(true_label):
                n_confusable += 1
                n_confused += inst.label != true_label
    assert n_gt > 200
    assert n_found / n_gt == pytest.approx(1 - p.miss_rate, abs=0.05)
    assert n_fp / len(frames) == pytest.approx(p.false_positives_per_frame, abs=0.15)
    assert n_confused / n_confusable == pytest.approx(p.label_confusion_rate, abs=0.04)


def _is_fp(inst):
    return FALSE_POSITIVE_ID_BASE <= inst.track_id < 2 * FALSE_POSITIVE_ID_BASE


def test_realistic_identity_switches(ep, realistic):
    oracle, _ = realistic
    exposures = sum(len(g.visible_ids) for g in ep.frames_gt)
    switches = [sum(len(v) for v in OraclePerception(ep, "realistic", seed=s)._switches.values()) for s in range(6)]
    assert np.mean(switches) / exposures == pytest.approx(oracle.preset.id_switch_rate, abs=0.005)
    oid, frames_sw = next(iter(oracle._switches.items()))
    k = frames_sw[0]
    assert oracle.track_id(oid, k - 1) == oid != oracle.track_id(oid, k) == oracle.track_id(oid, k)
    assert len({oracle.track_id(o, ep.n_frames) for o in oracle._switches}) == len(oracle._switches)


def test_realistic_depth_noise(frames, realistic):
    _, outs = realistic
    ratios, scales = [], []
    for f, fp in zip(frames, outs):
        r = fp.frame.depth_m / f.depth_m
        ratios.append(r.ravel())
        scales.append(np.median(r))
    scales = np.array(scales)
    pixel = np.concatenate([r / s for r, s in zip(ratios, scales)])
    assert np.std(scales) == pytest.approx(0.03, rel=0.35)
    assert np.std(pixel) == pytest.approx(0.05, rel=0.15)
    assert np.all(np.concatenate(ratios) >= 0)


def test_realistic_pose_drift(ep, realistic):
    oracle, outs = realistic
    first = outs[0].frame.T_world_cam
    assert first == ep.frames_gt[0].T_world_cam  # drift starts at zero
    walked = sum(np.linalg.norm(b.T_world_cam.t[:2] - a.T_world_cam.t[:2])
                 for a, b in zip(ep.frames_gt, ep.frames_gt[1:]))
    errs, heads = [], []
    for seed in range(8):
        poses = OraclePerception(ep, noise="realistic", seed=seed)._poses
        errs.append(np.linalg.norm(poses[-1].t - ep.frames_gt[-1].T_world_cam.t))
        r = poses[-1].R @ ep.frames_gt[-1].T_world_cam.R.T
        heads.append(math.degrees(math.atan2(r[1, 0], r[0, 0])))
    minutes = ep.duration_s / 60
    assert np.sqrt(np.mean(np.square(heads))) == pytest.approx(1.0 * math.sqrt(minutes), rel=0.6)
    assert np.median(errs) >= 0.01 * walked  # no easier than ~2% of distance walked
    assert all(abs(p.t[2] - g.T_world_cam.t[2]) < 1e-9 for p, g in zip(oracle._poses, ep.frames_gt))


def test_realistic_masks_are_jittered(ep, frames, realistic):
    oracle, outs = realistic
    grown = shrunk = 0
    for f, fp in zip(frames[::5], outs[::5]):
        for inst in fp.instances:
            if inst.track_id >= FALSE_POSITIVE_ID_BASE:
                continue
            gt = f.meta["instance_ids"] == inst.track_id
            grown += inst.mask.sum() > gt.sum()
            shrunk += inst.mask.sum() < gt.sum()
    assert grown > 5 and shrunk > 5


def test_presets_and_bad_input(ep):
    assert get_preset("realistic") is NOISE_PRESETS["realistic"]
    custom = NoisePreset("custom", miss_rate=1.0)
    assert OraclePerception(ep, noise=custom).perceive(ep.frame(3)).instances == ()
    r = NOISE_PRESETS["realistic"]
    assert (r.depth_pixel_sigma, r.depth_scale_sigma, r.heading_drift_deg_per_min, r.translation_drift_frac,
            r.miss_rate, r.false_positives_per_frame, r.label_confusion_rate, r.id_switch_rate, r.mask_jitter_px) \
        == (0.05, 0.03, 1.0, 0.02, 0.25, 0.5, 0.10, 0.02, 2)
    with pytest.raises(InvalidInputError, match="preset"):
        OraclePerception(ep, noise="heavy")
    stranger = Frame(t_s=12345.0, rgb=np.zeros((96, 128, 3), np.uint8), index=3)
    with pytest.raises(InvalidInputError, match="not a frame"):
        OraclePerception(ep).process(stranger)
