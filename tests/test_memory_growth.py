"""What a frame's update reads does not grow with the day: the presence check's prefilter and the scan grid's
tiles (docs/memory.md, "A day")."""
import math

import numpy as np

from directme.geometry import Intrinsics, Pose
from directme.memory import MemoryConfig
from directme.memory.object_store import ObjectStore
from directme.memory.pose.scan_grid import StructureGrid
from directme.memory.presence import in_view_of, maybe_in_view
from directme.types import Frame


def test_the_presence_prefilter_keeps_every_object_in_view():
    """One vectorised pass (no Python per object) keeps a superset of what the exact in-view test keeps."""
    rng = np.random.default_rng(0)
    objs = ObjectStore(MemoryConfig())
    n = 3000
    for i in range(n):
        objs.new_record()
    objs.live_pos[:n] = rng.uniform(-30.0, 30.0, (n, 3))
    objs.live_size[:n] = rng.uniform(0.05, 2.0, n)
    objs.live_alive[:n] = rng.random(n) < 0.9
    objs.live_belief[:n] = np.where(rng.random(n) < 0.9, 0.5, objs.cfg.gone.min_logodds)  # some certainly gone
    K = Intrinsics.from_fov(128, 96, 70.0)
    for k in range(5):
        yaw = rng.uniform(-math.pi, math.pi)
        R = np.array([[math.cos(yaw), 0.0, math.sin(yaw)], [0.0, 1.0, 0.0], [-math.sin(yaw), 0.0, math.cos(yaw)]])
        f = Frame(t_s=float(k), rgb=np.zeros((96, 128, 3), np.uint8), depth_m=np.ones((96, 128), np.float32),
                  T_world_cam=Pose.from_Rt(R, rng.uniform(-5.0, 5.0, 3)), intrinsics=K)
        every = np.flatnonzero(objs.live_alive[:n] & (objs.live_belief[:n] > objs.cfg.gone.min_logodds))
        exact = set(every[in_view_of(objs, every, f)[3]].tolist())
        kept = maybe_in_view(objs, f)
        assert exact and exact <= set(kept.tolist()) and len(kept) < len(every) and np.all(np.diff(kept) > 0)


def test_a_frame_touches_the_tiles_near_it_whatever_the_area_mapped():
    """A day's walk far and wide stores the places seen (tiles), not the box around them, and a window read
    near one place equals that of a grid that mapped only that place."""
    rng = np.random.default_rng(1)
    room = rng.uniform(0.0, 6.0, (2000, 2))
    wide, alone = StructureGrid(0.05), StructureGrid(0.05)
    for k, corner in enumerate(((0.0, 0.0), (400.0, 0.0), (0.0, 300.0), (-250.0, -250.0))):
        wide.add(room + corner, 20, float(k))
    alone.add(room + (-250.0, -250.0), 20, 3.0)
    assert wide.shape.prod() > 10_000 * 10_000 / 4  # the box a dense grid would have held: over 25 M cells
    assert len(wide.slot) * wide.tile ** 2 < 4 * 8 * 8 * 64 * 64  # stored: a few tiles a place
    lo, hi = np.array([-251.0, -251.0]), np.array([-243.0, -243.0])
    assert np.array_equal(wide.window(wide.cells(lo), wide.cells(hi)), alone.window(alone.cells(lo), alone.cells(hi)))


def test_co_observed_is_the_intersection_of_the_frames():
    """Bisection of the shorter frame list in the longer (no sort of an object's whole history) says what the
    intersection of the two lists says."""
    from array import array

    from directme.memory.association import co_observed
    from directme.memory.objects import ObjectRecord

    rng = np.random.default_rng(2)
    for k in range(300):
        a, b = ObjectRecord(0), ObjectRecord(1)
        for rec in (a, b):
            n = int(rng.integers(0, 40))
            start = int(rng.integers(0, 60))
            rec.obs_frame = array("i", np.sort(rng.integers(start, start + 80, n)).tolist())
        want = bool(np.intersect1d(np.array(a.obs_frame), np.array(b.obs_frame)).size)
        assert co_observed(a, b) is want and co_observed(b, a) is want
