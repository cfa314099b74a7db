"""Truth-fed perception end to end: the production pipeline (DA3 chunks and scale, Grounding DINO
post-processing, SAM2 track bookkeeping, CLIP tags) with each network replaced by a ground-truth
stand-in must hand the memory metric geometry and stable identities, and the agent must answer from it."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("depth_anything_3")
pytest.importorskip("sam2")

from directme.errors import InvalidInputError  # noqa: E402
from directme.sim import generate_episode  # noqa: E402


@pytest.fixture(scope="module")
def episode():
    return generate_episode(seed=11, minutes=0.75)


def _stream(perception, episode, n):
    out = []
    for frame in episode.frames(0, n):
        out.extend(perception.process(frame))
    return out + perception.flush()


@pytest.mark.slow
@pytest.mark.parametrize("options", [{"depth_pose": "da3-small"}, {"depth_pose": "da3-small", "poses": "given"}],
                         ids=["plain-video", "given-poses"])
def test_truth_fed_pipeline_gives_metric_geometry_and_ground_truth_objects(episode, options):
    perception = episode.truthfed_perception(options, seed=3)
    n = 24
    fps = _stream(perception, episode, n)
    assert [fp.frame.index for fp in fps] == list(range(n))
    T0_gt_inv = episode.frames_gt[0].T_world_cam.inverse().matrix
    T0_est_inv = fps[0].frame.T_world_cam.inverse().matrix
    centre_err, depth_err, label_ok, labels = [], [], 0, 0
    for fp in fps:
        gt = episode.frames_gt[fp.frame.index]
        c_gt = (T0_gt_inv @ gt.T_world_cam.matrix)[:3, 3]  # positions in the first camera's frame
        c_est = (T0_est_inv @ fp.frame.T_world_cam.matrix)[:3, 3]
        centre_err.append(np.linalg.norm(c_gt - c_est))
        d_gt = episode.render(fp.frame.index).depth_m
        ok = (d_gt > 0.3) & (fp.frame.depth_m > 0)
        depth_err.append(np.median(np.abs(fp.frame.depth_m[ok] / d_gt[ok] - 1)))
        ids = episode.render(fp.frame.index).instance_ids
        for inst in fp.instances:
            under = ids[inst.mask]
            if under.size and np.bincount(under).argmax() > 0:
                labels += 1
                label_ok += inst.label == episode.object(int(np.bincount(under).argmax())).label
    assert np.median(depth_err) < 0.05, f"median relative depth error {np.median(depth_err):.3f}"
    assert np.max(centre_err) < 0.15, f"camera centre error up to {np.max(centre_err):.3f} m"
    assert labels > 10 and label_ok / labels > 0.9, f"{label_ok}/{labels} instance labels right"
    tags = [fp.scene_tag == episode.frames_gt[fp.frame.index].room for fp in fps]
    assert np.mean(tags) > 0.9


def test_truth_fed_needs_a_simulator_episode():
    from directme import Agent

    with pytest.raises(InvalidInputError, match="truth-fed"):
        Agent({"perception": {"backend": "truth-fed"}}).perception


def test_truth_fed_options_are_checked(episode):
    with pytest.raises(InvalidInputError, match="unknown options"):
        episode.truthfed_perception({"depthpose": "da3-small"})
    with pytest.raises(InvalidInputError, match="poses"):
        episode.truthfed_perception({"poses": "sometimes"})


def test_truth_fed_refuses_a_network_without_stand_in(episode):
    with pytest.raises(InvalidInputError, match="no ground-truth stand-in"):
        episode.truthfed_perception({"pipeline": {"detector": {"name": "yolo_world", "weights": "random"}}})
