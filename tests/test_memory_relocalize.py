"""Landmark relocalisation: a room revisited with drifted input poses joins its old nodes."""
import numpy as np
import pytest

from directme.geometry import Intrinsics, Pose, rotation_about_axis
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.pose import with_pose
from directme.memory.testing import Box, look_at, orbit, perceive

SCENE = [Box(1, "mug", (0.6, 0.2, 0.1), (0.15, 0.15, 0.2)), Box(2, "lamp", (-0.5, 0.6, 0.25), (0.3, 0.3, 0.5)),
         Box(3, "plant", (-0.4, -0.7, 0.2), (0.35, 0.35, 0.4)), Box(4, "box", (0.5, -0.6, 0.15), (0.4, 0.3, 0.3))]
DRIFT = np.array([0.9, -0.6, 0.0])  # input world frame error accumulated while away


def _stream(drift: np.ndarray, boxes=SCENE):
    """Orbit the room, walk 12 m down an empty corridor, come back and orbit again with drifted poses."""
    first = list(orbit(boxes, 10, radius=2.5, scene_tag="kitchen"))
    K = Intrinsics.from_fov(128, 96, 70.0)
    corridor = [perceive([], look_at((4.0 + k, 0.0, 1.6), (4.0 + k, 5.0, 1.4)), K, 10.0 + k, 10 + k, "corridor")
                for k in range(12)]
    D = Pose.from_Rt(np.eye(3), drift)
    back = [with_pose(fp, Pose(D.matrix @ fp.frame.T_world_cam.matrix))
            for fp in orbit(boxes, 10, radius=2.5, t0=22.0, index0=22, scene_tag="kitchen", turns=0.9)]
    truth = [fp.frame.T_world_cam.t for fp in orbit(boxes, 10, radius=2.5, t0=22.0, index0=22, turns=0.9)]
    return first + corridor + back, truth


def _run(drift, boxes=SCENE, **cfg):
    stream, truth = _stream(np.asarray(drift, dtype=np.float64), boxes)
    mem = SpatialMemory(MemoryConfig().replace(up_world=(0.0, 0.0, 1.0), **cfg))
    mem.update_many(stream)
    return mem, truth


def test_revisit_with_drift_joins_old_nodes_and_corrects_the_pose():
    mem, truth = _run(DRIFT)
    snap = mem.as_of(mem.latest_t_s)
    assert sorted(o.label for o in snap.objects.values()) == ["box", "lamp", "mug", "plant"]
    assert mem.pose.relocalisation.corrections, "the drift was never corrected"
    assert np.allclose(mem.T_mem_input[:3, 3], -DRIFT, atol=0.12), mem.T_mem_input[:3, 3]
    ego_now = snap.ego.T_world_cam[-1][:3, 3]
    assert np.linalg.norm(ego_now - truth[-1]) < 0.15
    assert max(_map_errors_m(mem)) < 0.15  # nodes stay where the first visit mapped them


def _map_errors_m(mem):
    """Distance of each node from the box it stands for."""
    return [float(np.linalg.norm(o.position_w - np.array(next(b for b in SCENE if b.label == o.label).centre_w)))
            for o in mem.as_of(mem.latest_t_s).objects.values()]


def test_without_relocalisation_the_same_drift_corrupts_the_map():
    mem, _ = _run(DRIFT, relocalisation__enabled=False)
    errs = _map_errors_m(mem)
    assert not mem.pose.relocalisation.corrections
    assert len(errs) > 4 or max(errs) > 0.3, errs  # duplicates, or nodes dragged to the drifted positions


def test_exact_poses_are_never_corrected():
    mem, _ = _run((0.0, 0.0, 0.0))
    assert not mem.pose.relocalisation.corrections and np.array_equal(mem.T_mem_input, np.eye(4))
    assert len(mem.as_of(mem.latest_t_s).objects) == 4


def test_walked_distance_follows_the_input_poses_not_the_correction_jump():
    mem, _ = _run(DRIFT)
    stream, _ = _stream(DRIFT)
    p = np.array([fp.frame.T_world_cam.t for fp in stream])
    assert mem.ego.path_m[-1] == pytest.approx(float(np.linalg.norm(np.diff(p, axis=0), axis=1).sum()), abs=1e-3)


def test_correction_survives_save_and_load(tmp_path):
    mem, _ = _run(DRIFT)
    loaded = SpatialMemory.load(mem.save(tmp_path / "m"))
    assert np.array_equal(loaded.T_mem_input, mem.T_mem_input)
    assert loaded.pose.relocalisation.corrections == mem.pose.relocalisation.corrections
    assert len(loaded.pose.relocalisation.pairs) == len(mem.pose.relocalisation.pairs)


def test_heading_drift_is_corrected_when_rotations_are_enabled():
    """A revisit turned by 8 degrees about the room (plus an offset): the rotation is estimated too."""
    yaw = np.radians(8.0)
    stream, truth = _stream(np.zeros(3))
    D = np.eye(4)
    D[:3, :3] = rotation_about_axis(np.array([0.0, 0.0, 1.0]), yaw)
    D[:3, 3] = (0.5, -0.3, 0.0)
    stream = [fp if fp.t_s < 22.0 else with_pose(fp, Pose(D @ fp.frame.T_world_cam.matrix)) for fp in stream]
    mem = SpatialMemory(MemoryConfig().replace(up_world=(0.0, 0.0, 1.0), relocalisation__max_yaw_deg=15.0, relocalisation__min_baseline_m=1.0))
    mem.update_many(stream)
    assert mem.pose.relocalisation.corrections and abs(sum(r[2] for r in mem.pose.relocalisation.corrections) + 8.0) < 1.5, mem.pose.relocalisation.corrections
    assert np.allclose(mem.T_mem_input @ D, np.eye(4), atol=0.1), mem.T_mem_input @ D
    assert sorted(o.label for o in mem.as_of(mem.latest_t_s).objects.values()) == ["box", "lamp", "mug", "plant"]
    assert np.linalg.norm(mem.as_of(mem.latest_t_s).ego.T_world_cam[-1][:3, 3] - truth[-1]) < 0.15


def test_vertical_offset_is_not_taken_for_drift():
    """Odometry drifts along the floor: landmarks that would need a 0.5 m vertical shift are wrong pairs."""
    mem, _ = _run((0.5, -0.3, 0.5))
    assert not mem.pose.relocalisation.corrections
    assert np.array_equal(mem.T_mem_input, np.eye(4))
    mem, _ = _run((0.5, -0.3, 0.5), relocalisation__max_vertical_m=1.0)  # the same revisit without the guard
    assert mem.pose.relocalisation.corrections


def test_big_correction_needs_one_more_landmark():
    """A 2.2 m jump is applied on four agreeing landmarks, not on two (reloc_big_shift_m = 1.5)."""
    big = (1.8, -1.3, 0.0)
    mem, _ = _run(big, relocalisation__base_m=3.0)
    assert mem.pose.relocalisation.corrections and np.allclose(mem.T_mem_input[:3, 3], -np.asarray(big), atol=0.15)
    two = [b for b in SCENE if b.label in ("lamp", "plant")]
    for cfg in ({}, {"relocalisation__big_shift_m": 5.0}):
        mem, _ = _run(big, two, relocalisation__base_m=3.0, **cfg)
        assert bool(mem.pose.relocalisation.corrections) == bool(cfg), (cfg, mem.pose.relocalisation.corrections)


def test_a_landmark_seen_again_keeps_pairing_for_the_window_against_its_place_before_the_visit():
    """Each frame of the first seconds back in the room pairs every landmark in view - not only the frame
    that saw it first - with where it was before this visit (its node already mixes in the drifted
    points); after ``reloc_window_s`` seconds of the visit it stops."""
    stream, _ = _stream(DRIFT)
    mem = SpatialMemory(MemoryConfig().replace(up_world=(0.0, 0.0, 1.0), relocalisation__min_support=5))  # pairs only: never applied
    mem.update_many(stream[:22])
    before = {r.index: np.array(r.position) for r in mem.objects.records}
    per_frame = []
    for fp in stream[22:]:
        mem.update(fp)
        new = [p for p in mem.pose.relocalisation.pairs if p.t_s == fp.t_s]
        per_frame.append({p.record for p in new})
        for p in new:
            assert np.allclose(p.r_w, before[p.record]), p.record
    assert not mem.pose.relocalisation.corrections
    again = [s & set().union(*per_frame[:k]) for k, s in enumerate(per_frame) if k]
    assert any(again[: int(mem.cfg.relocalisation.window_s)]), per_frame  # landmarks paired in a later frame too
    assert not any(per_frame[int(mem.cfg.relocalisation.window_s) + 2:]), per_frame  # the visit is no longer new
