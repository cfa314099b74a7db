"""Scan-to-map registration (memory/scan.py): a frame's structure laid back on the grid of earlier frames."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from directme.errors import InvalidInputError, InvalidSaveError
from directme.geometry import Intrinsics
from directme.memory import SpatialMemory
from directme.memory.config import MemoryConfig, ScanConfig
from directme.memory.pose.scan import ScanMatcher, StructureGrid, camera_points

UP = np.array([0.0, 0.0, 1.0])
CFG = ScanConfig()


def _pose(x: float, y: float, yaw_deg: float, z: float = 1.6) -> np.ndarray:
    """Camera looking horizontally along ``yaw_deg`` (z forward, y down), at (x, y, z)."""
    a = math.radians(yaw_deg)
    fwd = np.array([math.cos(a), math.sin(a), 0.0])
    down = -UP
    right = np.cross(down, fwd)
    T = np.eye(4)
    T[:3, :3] = np.stack([right, down, fwd], axis=1)
    T[:3, 3] = (x, y, z)
    return T


def _room_points(rng: np.random.Generator, walls=((0, 6), (0, 5)), n: int = 3000, only=None) -> np.ndarray:
    """World points on the walls of a box room (heights 0.5-2.0 m); ``only``: indices of the walls kept."""
    (x0, x1), (y0, y1) = walls
    segs = [((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)), ((x0, y1), (x0, y0))]
    segs = [segs[i] for i in (only if only is not None else range(4))]
    out = []
    for k in range(n):
        (ax, ay), (bx, by) = segs[k % len(segs)]
        s = rng.random()
        out.append((ax + s * (bx - ax), ay + s * (by - ay), 0.5 + 1.5 * rng.random()))
    return np.array(out)


def _cam(pts_w: np.ndarray, T: np.ndarray) -> np.ndarray:
    return (pts_w - T[:3, 3]) @ T[:3, :3]


def _mapped(rng, **kw) -> ScanMatcher:
    m = ScanMatcher(CFG)
    T = _pose(3.0, 2.5, 0.0)
    m.add(_cam(_room_points(rng, **kw), T), T, UP, 0.0, CFG)
    return m


@pytest.mark.parametrize("dx,dy", [(0.12, -0.08), (-0.3, 0.2), (0.0, 0.14)])
def test_a_drifted_frame_is_laid_back_on_the_room(dx, dy):
    rng = np.random.default_rng(0)
    m = _mapped(rng)
    T_true = _pose(2.0, 2.0, 30.0)
    p_cam = _cam(_room_points(rng), T_true)
    T_drift = T_true.copy()
    T_drift[:3, 3] += (dx, dy, 0.0)
    found = m.register(p_cam, T_drift, UP, 60.0, CFG)
    assert found is not None, m.last
    yaw, shift = found
    assert yaw == 0.0  # translation only by default
    assert np.linalg.norm(shift[:2] + np.array([dx, dy])) < 0.03
    assert abs(shift[2]) < 1e-9


def test_a_drift_the_steps_cannot_bring_within_search_m_is_refused_early():
    """Steps move the estimate at most a field cell each: once it is farther beyond ``search_m`` than the steps left
    reach, the frame is refused without them, as it would be after them."""
    rng = np.random.default_rng(0)
    m = _mapped(rng)
    T_true = _pose(2.0, 2.5, 0.0)
    T_drift = T_true.copy()
    T_drift[:3, 3] += (0.9, 0.0, 0.0)
    assert m.register(_cam(_room_points(rng), T_true), T_drift, UP, 60.0, CFG) is None
    assert m.last.startswith("too far") and m.last.endswith("(early)"), m.last


def test_an_aligned_frame_stays_within_a_cell():
    rng = np.random.default_rng(1)
    m = _mapped(rng)
    T = _pose(4.0, 3.0, -60.0)
    found = m.register(_cam(_room_points(rng), T), T, UP, 60.0, CFG)
    assert found is None or np.linalg.norm(found[1]) < CFG.cell_m


def test_a_drift_below_min_shift_is_left_to_the_input_poses():
    """Shifts of a cell or two are within the grid's own error (cell quantisation): not applied."""
    rng = np.random.default_rng(6)
    m = _mapped(rng)
    T = _pose(2.0, 2.0, 30.0)
    T_drift = T.copy()
    T_drift[:3, 3] += (0.0, 0.04, 0.0)
    assert m.register(_cam(_room_points(rng), T), T_drift, UP, 60.0, CFG) is None
    assert m.last.startswith("small")


def test_one_wall_cannot_fix_both_directions():
    """A long wall seen in part fixes the distance to it, not the position along it."""
    rng = np.random.default_rng(2)
    m = ScanMatcher(CFG)
    T = _pose(3.0, 2.0, -90.0)
    m.add(_cam(_room_points(rng, walls=((-20, 26), (0, 5)), n=40000, only=(0,)), T), T, UP, 0.0, CFG)
    T_drift = T.copy()
    T_drift[:3, 3] += (0.1, 0.1, 0.0)
    assert m.register(_cam(_room_points(rng, walls=((1, 5), (0, 5)), only=(0,)), T), T_drift, UP, 60.0, CFG) is None
    assert m.last.startswith("constraint")


def test_a_new_room_says_nothing():
    rng = np.random.default_rng(3)
    m = _mapped(rng)
    T = _pose(23.0, 2.0, 0.0)  # far from everything mapped
    assert m.register(_cam(_room_points(rng, walls=((20, 26), (0, 5))), T), T, UP, 60.0, CFG) is None
    assert m.grid.field(np.array([20.0, 0.0]), np.array([26.0, 5.0]), 0, CFG) is None


def test_points_off_the_band_are_not_structure():
    """Floor and ceiling (outside below_cam_m / above_cam_m of the camera) are left out."""
    K = Intrinsics(fx=100.0, fy=100.0, cx=40.0, cy=30.0, width=80, height=60)
    depth = np.full((60, 80), 3.0, np.float32)
    depth[:5] = np.nan
    p = camera_points(depth, K, CFG)
    assert len(p) == len(range(CFG.pixel_stride // 2, 80, CFG.pixel_stride)) * len(
        [v for v in range(CFG.pixel_stride // 2, 60, CFG.pixel_stride) if v >= 5])
    m = ScanMatcher(CFG)
    T = _pose(0.0, 0.0, 0.0)
    m.add(p, T, UP, 0.0, CFG)
    assert len(m.grid) > 0
    m2 = ScanMatcher(CFG)
    tall = dataclasses.replace(CFG, below_cam_m=0.0, above_cam_m=0.0)
    m2.add(np.array([[0.0, 1.0, 3.0], [0.0, -1.0, 3.0]]), T, UP, 0.0, tall)  # 1 m below and above the camera
    assert len(m2.grid) == 0


def test_grid_grows_and_counts_one_hit_per_frame():
    g = StructureGrid(0.05)
    g.add(np.array([[0.01, 0.01], [0.02, 0.02]]), max_hits=3, t_s=1.0)
    assert g.hits.max() == 1 and len(g) == 1
    for k in range(5):
        g.add(np.array([[0.01, 0.01], [-4.0, 7.0]]), max_hits=3, t_s=2.0 + k)
    assert g.hits.max() == 3 and len(g) == 2
    origin, hits, first_s = g.dense()
    assert tuple(hits.shape) == (80 + 17, 140 + 17)  # the box around the hits (cells -80..0, 0..140), 8 cells past them
    c = g.cells(np.array([[0.01, 0.01], [-4.0, 7.0]])) - origin
    assert hits[c[0, 0], c[0, 1]] == 3 and hits[c[1, 0], c[1, 1]] == 3
    assert first_s[c[0, 0], c[0, 1]] == 1.0 and first_s[c[1, 0], c[1, 1]] == 2.0  # grown: first hits kept
    assert np.isinf(first_s[hits == 0]).all()
    assert len(g.slot) == 2  # two tiles stored, not the box between them


def test_a_full_grid_forgets_the_oldest_tiles_and_keeps_mapping():
    """At max_cells a new area takes the place of the area hit longest ago: mapping never stops."""
    g = StructureGrid(0.05, tile_cells=8, max_cells=3 * 64)  # three tiles of 0.4 m
    for k in range(5):  # five places 10 m apart, one after the other
        g.add(np.array([[10.0 * k + 0.1, 0.1]]), max_hits=3, t_s=float(k))
    assert len(g.slot) == 3 and g.dropped_tiles == 2 and len(g) == 3
    at = lambda x: g.window(g.cells(np.array([[x, 0.1]]))[0], g.cells(np.array([[x, 0.1]]))[0] + 1)[0, 0]
    assert [at(10.0 * k + 0.1) for k in range(5)] == [0, 0, 1, 1, 1]
    one = StructureGrid(0.05, tile_cells=8, max_cells=64)  # one tile: a frame spanning two keeps what fits
    assert one.add(np.array([[0.12, 0.12], [5.0, 0.12], [0.32, 0.12]]), max_hits=3, t_s=0.0) == 1 and len(one) == 2


def test_dense_grid_of_an_older_save_loads_into_tiles():
    g = StructureGrid(0.05)
    xy = np.random.default_rng(0).uniform(-3.0, 5.0, (500, 2))
    for t in range(3):
        g.add(xy[t::3], max_hits=20, t_s=float(t))
    origin, hits, first_s = g.dense()
    meta = {"cell_m": 0.05, "origin": origin.tolist()}  # a save of the dense grid (no shape, no tiles)
    old = StructureGrid.from_state(meta, {"scan_hits": hits, "scan_first_s": first_s}, tile_cells=16)
    o2, h2, f2 = old.dense()
    assert np.array_equal(o2, origin) and np.array_equal(h2, hits) and np.array_equal(f2, first_s)
    lo, hi = np.array([-1.0, -2.0]), np.array([2.0, 3.0])
    assert np.array_equal(old.occupancy(lo, hi, CFG, 1.0)[0], g.occupancy(lo, hi, CFG, 1.0)[0])
    meta, arrays = old.to_state()
    again = StructureGrid.from_state(meta, arrays)
    assert all(np.array_equal(a, b) for a, b in zip(again.dense(), old.dense()))


def test_structure_seen_a_moment_ago_is_not_a_reference():
    """Over seconds the input poses are better than a registration: only structure first seen
    ``established_s`` before counts."""
    rng = np.random.default_rng(5)
    m = _mapped(rng)  # mapped at t = 0
    T_true = _pose(2.0, 2.0, 30.0)
    T_drift = T_true.copy()
    T_drift[:3, 3] += (0.2, 0.0, 0.0)
    p_cam = _cam(_room_points(rng), T_true)
    assert m.register(p_cam, T_drift, UP, CFG.established_s - 1.0, CFG) is None
    assert m.last == "nothing mapped"
    assert m.register(p_cam, T_drift, UP, CFG.established_s + 1.0, CFG) is not None


def test_config_is_checked():
    with pytest.raises(InvalidInputError, match="memory.scan.max_hits"):
        ScanConfig(max_hits=300)
    with pytest.raises(InvalidInputError, match="memory.scan.max_depth_m"):
        ScanConfig(min_depth_m=7.0, max_depth_m=6.0)
    with pytest.raises(InvalidInputError, match="memory.scan.search_m"):
        MemoryConfig.from_dict({"scan": {"search_m": 0}})
    assert MemoryConfig.from_dict({"scan": {"enabled": False}}).scan.enabled is False
    with pytest.raises(InvalidInputError, match="memory.scan.coarse_iterations"):
        MemoryConfig.from_dict({"scan": {"coarse_iterations": 0}})


@pytest.mark.parametrize("coarse", [1, 2, 6])
def test_the_coarse_level_takes_at_most_coarse_iterations_steps(monkeypatch, coarse):
    """The correlative search starts the coarse level within a coarse cell: a few steps there, the finest level's
    ``iterations`` for the precision; the frame is still laid back on the room."""
    from directme.memory.pose import scan

    cells = []
    warp = scan._warp
    monkeypatch.setattr(scan, "_warp", lambda xy, c, xi, fld, *a: cells.append(fld.cell) or warp(xy, c, xi, fld, *a))
    cfg = dataclasses.replace(CFG, coarse_iterations=coarse, iterations=6)
    rng = np.random.default_rng(0)
    m = _mapped(rng)
    T_true = _pose(2.0, 2.0, 30.0)
    T_drift = T_true.copy()
    T_drift[:3, 3] += (-0.3, 0.2, 0.0)
    found = m.register(_cam(_room_points(rng), T_true), T_drift, UP, 60.0, cfg)
    assert found is not None, m.last
    assert np.linalg.norm(found[1][:2] + np.array([-0.3, 0.2])) < 0.03
    coarse_cell = CFG.cell_m * 2 ** (CFG.levels - 1)
    assert 1 <= cells.count(coarse_cell) <= coarse and 1 <= len(cells) - cells.count(coarse_cell) <= 6 + 1


def _episode_frames(noise: str, n: int):
    from directme.sim import OraclePerception, generate_episode

    ep = generate_episode(seed=4, minutes=1.0, with_questions=False)
    oracle = OraclePerception(ep, noise=noise, seed=4)
    return ep, [oracle.perceive(f) for f in list(ep.frames())[:n]]


def test_registration_reduces_drift_on_a_simulated_walk():
    ep, fps = _episode_frames("realistic", 60)
    errs = {}
    for on in (False, True):
        cfg = MemoryConfig.from_dict({"scan": {"enabled": on}})
        mem = SpatialMemory(cfg)
        e = []
        for fp, g in zip(fps, ep.frames_gt):
            mem.update(fp)
            e.append(np.linalg.norm(mem.ego.T[len(mem.ego) - 1][:2, 3] - g.T_world_cam.t[:2]))
        errs[on] = float(np.mean(e))
        if on:
            assert mem.pose.scan.corrections > 0
    assert errs[True] < errs[False]


def test_save_and_load_keep_the_grid(tmp_path):
    _, fps = _episode_frames("realistic", 24)
    a = SpatialMemory()
    a.update_many(fps[:12])
    a.save(tmp_path / "m")
    b = SpatialMemory.load(tmp_path / "m")
    assert all(np.array_equal(x, y) for x, y in zip(a.pose.scan.grid.dense(), b.pose.scan.grid.dense()))
    assert np.allclose(a.pose.vertical.up, b.pose.vertical.up)
    a.update_many(fps[12:])
    b.update_many(fps[12:])
    assert np.allclose(a.T_mem_input, b.T_mem_input)
    assert a.pose.scan.corrections == b.pose.scan.corrections


def test_a_damaged_grid_is_refused():
    """The grid's arrays are checked when read back (StateError, an InvalidSaveError the loader names the file in)."""
    _, fps = _episode_frames("none", 10)  # past the first seconds, in which the vertical is estimated
    a = SpatialMemory()
    a.update_many(fps)
    assert len(a.pose.scan.grid) > 0
    meta, arrays = a.pose.scan.to_state()
    for key, bad in (("scan_tile_hits", np.zeros(5, np.uint8)), ("scan_tile_first_s", np.zeros((2, 2), np.float32)),
                     ("scan_tile_keys", np.zeros((1, 3), np.int64)), ("scan_tile_last_s", np.zeros(0))):
        with pytest.raises(InvalidSaveError, match=key):
            ScanMatcher.from_state(a.cfg, (meta, {**arrays, key: bad}), {})
    with pytest.raises(InvalidSaveError, match="scan_hits"):
        ScanMatcher.from_state(a.cfg, (meta, {}), {})
    b = ScanMatcher.from_state(a.cfg, (meta, arrays), {})
    assert all(np.array_equal(x, y) for x, y in zip(b.grid.dense(), a.pose.scan.grid.dense()))


def test_a_save_from_before_the_grid_loads_with_an_empty_one():
    """Saves of formats 1-3 without a "scan" entry predate the grid: they start with an empty one."""
    from directme.memory.persist import _split_flat

    states = _split_flat({}, {}, {})
    d = ScanMatcher.from_state(MemoryConfig(), states["scan"], {})
    assert len(d.grid) == 0


def test_points_inside_a_filled_area_do_not_break_the_solver():
    """Where the smoothed occupancy is flat (a filled area) the gradients vanish: no step, no error."""
    m = ScanMatcher(CFG)
    g = np.mgrid[0:4:0.02, 0:4:0.02].reshape(2, -1).T
    for t in range(3):
        m.grid.add(g, CFG.max_hits, float(t))
    T = _pose(2.0, 2.0, 0.0)
    inside = np.array([[x, y, 1.0] for x in np.linspace(1.5, 2.5, 12) for y in np.linspace(1.5, 2.5, 12)])
    T_drift = T.copy()
    T_drift[:3, 3] += (0.2, 0.0, 0.0)
    assert m.register(_cam(inside, T), T_drift, UP, 60.0, CFG) is None


def test_a_full_grid_keeps_mapping_new_areas(caplog):
    """At max_grid_cells the tiles hit longest ago are forgotten (warned once): a walk beyond them is still mapped."""
    cfg = dataclasses.replace(CFG, max_grid_cells=64, grid_tile_cells=8)  # one tile of 8 x 8 cells
    m = ScanMatcher(cfg)
    T = _pose(0.0, 0.0, 0.0)
    m.add(np.array([[0.0, 0.0, 1.0]]), T, UP, 0.0, cfg)  # camera frame: 1 m ahead
    far = np.array([[0.0, 0.0, 30.0]])  # 30 m ahead
    with caplog.at_level("WARNING", logger="directme.memory"):
        m.add(far, T, UP, 1.0, cfg)
        m.add(far, T, UP, 2.0, cfg)
    assert m.full and len(m.grid.slot) == 1 and m.grid.dropped_tiles == 1
    assert sum("max_grid_cells" in r.message for r in caplog.records) == 1  # warned once
    assert int(m.grid.hits.sum()) == 2  # the far point twice; the near one forgotten
