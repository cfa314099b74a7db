"""The memory's vertical (pose.vertical.VerticalEstimator) and the drift correction an object's last sighting was
lifted with (PoseCorrector.since_seen)."""
import math

import numpy as np
import pytest

from directme._atomic import StateError
from directme.errors import InvalidInputError
from directme.geometry import rotation_about_axis
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.pose import PoseCorrector
from directme.memory.pose.vertical import VerticalEstimator, estimate_up, surface_normals_w

sim = pytest.importorskip("directme.sim")
from directme.sim.oracle import OraclePerception  # noqa: E402

UP = np.array([0.0, 0.0, 1.0])


def _deg(a, b) -> float:
    return math.degrees(math.acos(min(1.0, abs(float(np.dot(a, b)) / np.linalg.norm(a) / np.linalg.norm(b)))))


def _frames(seed: int, n: int, noise: str = "none", minutes: float = 0.5):
    ep = sim.generate_episode(seed=seed, minutes=minutes, width=160, height=120, with_questions=False)
    oracle = OraclePerception(ep, noise=noise, seed=seed)
    return [oracle.perceive(f) for f in list(ep.frames())[:n]]


def test_estimate_up_finds_the_vertical_from_a_tilted_hint():
    ep = sim.generate_episode(seed=3, minutes=0.2, width=160, height=120, with_questions=False)
    normals = np.concatenate([surface_normals_w(f.depth_m, f.intrinsics, f.T_world_cam.R) for f in list(ep.frames())[:5]])
    hint = rotation_about_axis(np.array([1.0, 0.0, 0.0]), math.radians(15)) @ UP
    assert _deg(estimate_up(normals, hint), UP) < 1.0
    # too few horizontal surfaces (walls only): the hint is kept, not tipped about a wall's normal
    walls = normals[np.abs(normals @ UP) < 0.2]
    assert np.allclose(estimate_up(walls, hint), hint)


@pytest.mark.parametrize("seed", [0, 2, 5])
def test_the_vertical_is_pooled_over_the_first_seconds_and_heading_and_scan_wait_for_it(seed):
    """Seeds whose first view shows too little floor to refine the first camera's -y (tilted 10-15 degrees by the
    wearer's pitch): the estimate waits for ``vertical.window_s`` and then lies within 1.5 degrees of the truth;
    before it, neither the heading filter nor the scan registration has done anything."""
    fps = _frames(seed, 12)
    cfg = MemoryConfig()
    mem = SpatialMemory(cfg)
    first_tilt = _deg(-fps[0].frame.T_world_cam.R[:, 1], UP)
    assert first_tilt > 5.0
    for fp in fps:
        mem.update(fp)
        v = mem.pose.vertical
        if fp.t_s < cfg.vertical.window_s:
            assert v.up is None and mem.pose.heading.ref_samples == [] and len(mem.pose.scan.grid) == 0
    up = mem.pose.vertical.up
    assert up is not None and _deg(up, UP) < 1.5, (_deg(up, UP), first_tilt)
    assert len(mem.pose.scan.grid) > 0


def test_the_memory_has_one_vertical_known_causally():
    """Answers, ground distances and lifting read the estimator: the snapshot's up at t is the first camera's -y
    before the estimate settles and the estimate from then on (``as_of``: what was known at t, never later)."""
    fps = _frames(0, 12)
    mem = SpatialMemory()
    for fp in fps:
        mem.update(fp)
    v = mem.pose.vertical
    assert v.settled_s is not None and fps[0].t_s < v.settled_s <= fps[-1].t_s
    first_up = -fps[0].frame.T_world_cam.R[:, 1]
    before, after = mem.as_of(v.settled_s - 1e-6).up_world, mem.as_of(v.settled_s).up_world
    assert np.allclose(before, first_up) and _deg(before, UP) > 5.0  # the wearer's pitch
    assert np.array_equal(after, v.up) and _deg(after, UP) < 1.5
    assert np.array_equal(mem.up_world, v.up) and np.array_equal(mem.as_of(fps[-1].t_s).up_world, v.up)
    assert mem.pose.vertical.as_of(fps[0].t_s - 1.0) is None  # nothing known before the first frame


def test_the_vertical_settings_are_one_section_and_the_old_keys_still_load():
    with pytest.warns(DeprecationWarning, match=r"heading\.up_window_s -> vertical\.window_s"):
        cfg = MemoryConfig.from_dict({"heading": {"up_window_s": 2.0, "up_min_normals": 10, "min_deg": 2.0}})
    assert (cfg.vertical.window_s, cfg.vertical.min_normals, cfg.heading.min_deg) == (2.0, 10, 2.0)
    assert MemoryConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(InvalidInputError, match="refine_cones_deg"):
        MemoryConfig().replace(vertical__refine_cones_deg=[15.0, -1.0])


def test_a_given_vertical_is_used_at_once():
    fps = _frames(0, 2)
    mem = SpatialMemory(MemoryConfig().replace(up_world=(0.0, 0.0, 1.0)))
    mem.update(fps[0])
    assert np.allclose(mem.pose.vertical.up, UP) and np.allclose(mem.up_world, UP)


def test_a_save_while_the_vertical_is_estimated_goes_on_as_if_never_saved():
    fps = _frames(2, 9)
    a = SpatialMemory()
    for fp in fps[:3]:
        a.update(fp)
    assert a.pose.vertical.up is None and len(a.pose.vertical.normals) == 3
    b_vertical = VerticalEstimator.from_state(a.cfg, a.pose.vertical.to_state(), {})
    assert np.array_equal(b_vertical.to_array(), a.pose.vertical.to_array())
    assert b_vertical.times_s == a.pose.vertical.times_s
    for fp in fps[3:]:
        a.update(fp)
    b = SpatialMemory()
    for fp in fps:
        b.update(fp)
    assert a.pose.vertical.up is not None
    assert np.allclose(a.pose.vertical.up, b.pose.vertical.up)
    assert a.pose.heading.ref_samples == b.pose.heading.ref_samples


def test_a_damaged_vertical_state_is_refused():
    fps = _frames(2, 3)
    a = SpatialMemory()
    for fp in fps:
        a.update(fp)
    meta, arrays = a.pose.vertical.to_state()
    with pytest.raises(StateError, match="vertical"):
        VerticalEstimator.from_state(a.cfg, (meta, {**arrays, "up_normals": arrays["up_normals"][:5]}), {})
    with pytest.raises(StateError, match="vertical"):
        VerticalEstimator.from_state(a.cfg, ({**meta, "hint": [0, 0, 0]}, arrays), {})


def test_since_seen_is_the_correction_change_since_a_recent_sighting():
    cfg = MemoryConfig()
    d = PoseCorrector(cfg)
    d.frame_done(0.0)
    C0 = d.T_mem_input.copy()
    d.T_mem_input = np.eye(4)
    d.T_mem_input[:3, 3] = (0.15, -0.05, 0.0)  # a registration jump
    d.frame_done(1.0)
    D = d.since_seen(0.5, 1.0)  # last seen between the two frames: lifted with the first correction
    assert np.allclose(D, d.T_mem_input @ np.linalg.inv(C0))
    assert d.since_seen(1.0, 1.0) is None  # seen under the current correction
    w = cfg.gone.odometry_window_s
    assert d.since_seen(0.0, w + 0.5) is None  # too long ago: the correction is the better guess
    for t in np.arange(2.0, 3 * w, 1.0):
        d.frame_done(float(t))
    assert len(d.recent) == 1  # nothing older is kept once no object can need it
    off = PoseCorrector(MemoryConfig().replace(gone__odometry_window_s=0.0))
    off.frame_done(0.0)
    off.T_mem_input = d.T_mem_input.copy()
    off.frame_done(1.0)
    assert off.since_seen(0.5, 1.0) is None
