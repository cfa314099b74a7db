"""The room outline (memory/outline.py: where each frame saw the walls end) and the floor area fitted to it
(answerers/floor_area.py): walls found where the far edges gather, a door's view beyond them left out."""
from __future__ import annotations

import numpy as np

from directme.answerers.floor_area import wall_rectangle_m2
from directme.answerers.geometric_config import MeasureConfig
from directme.geometry import Intrinsics
from directme.memory.config import MemoryConfig
from directme.memory.outline import RoomOutline, far_edges
from directme.memory.sections import OutlineConfig
from directme.memory.store import SpatialMemory
from directme.memory.testing import Box, look_at, perceive, render

ROOM = (0.0, 0.0, 5.0, 4.0)  # x0, y0, x1, y1: a 5 m x 4 m room (20 m2)
DOOR = (2.0, 3.0)  # a gap in its wall y = 4 from x = 2 to 3; the next room's wall stands at y = 6
CEIL = 2.6


def walls() -> list[Box]:
    """Thin wall boxes of the room (the door gap left open) and of the next room's far wall."""
    x0, y0, x1, y1 = ROOM

    def wall(i, xa, ya, xb, yb):
        return Box(100 + i, "wall", ((xa + xb) / 2, (ya + yb) / 2, CEIL / 2),
                   (max(xb - xa, 0.1), max(yb - ya, 0.1), CEIL))
    return [wall(0, x0, y0, x1, y0), wall(1, x0, y0, x0, y1), wall(2, x1, y0, x1, y1),
            wall(3, x0, y1, DOOR[0], y1), wall(4, DOOR[1], y1, x1, y1), wall(5, -2.0, 6.0, 7.0, 6.0)]


def test_far_edges_lie_on_the_wall_in_view():
    K = Intrinsics.from_fov(96, 72, 70.0)
    T = look_at((2.5, 1.0, 1.6), (2.5, -3.0, 1.4))  # facing the wall y = 0
    depth, _ = render(walls(), T, K)
    edges = far_edges(depth, np.array([K.fx, K.fy, K.cx, K.cy]), T.matrix, np.array([0.0, 0.0, 1.0]),
                      OutlineConfig(pixel_stride=2))
    seen = edges[np.isfinite(edges).all(axis=1)] + T.t
    assert len(seen) >= 12
    assert np.allclose(seen[:, 1], 0.05, atol=0.03)  # the wall's face (0.1 m thick, centred on y = 0)
    assert np.allclose(seen[:, 2], 1.6)  # offsets are horizontal: at the camera's height


def test_wall_rectangle_leaves_out_a_door_view_and_a_tall_cupboard():
    rng = np.random.default_rng(0)
    x0, y0, x1, y1 = ROOM

    def line(a, b, n):
        t = rng.random(n)[:, None]
        return np.asarray(a) + t * (np.asarray(b) - np.asarray(a)) + rng.normal(0, 0.02, (n, 2))
    edges = np.concatenate([line((x0, y0), (x1, y0), 300), line((x0, y0), (x0, y1), 250),
                            line((x1, y0), (x1, y1), 250), line((x0, y1), (x1, y1), 80),  # the door wall, seen less
                            line((-1.0, 6.0), (6.0, 6.0), 120),  # the next room's wall, through the door
                            line((3.5, 1.0), (3.5, 2.0), 200)])  # a tall cupboard's front, seen often
    walked = np.array([[1.5, 1.5], [2.0, 2.5], [1.0, 3.0]])
    assert abs(wall_rectangle_m2(edges, walked, MeasureConfig()) - 20.0) < 0.6
    assert wall_rectangle_m2(edges[:2], walked, MeasureConfig()) is None  # too little to close a room


def test_memory_logs_the_outline_and_room_size_measures_the_walls():
    from types import SimpleNamespace

    from directme.answerers.measure import room_size
    from directme.query.ego import ROOMS

    K = Intrinsics.from_fov(96, 72, 70.0)
    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0), outline=OutlineConfig(pixel_stride=2)))  # tiny images
    frames = []
    for i, (x, y) in enumerate([(1.5, 1.5), (3.5, 2.5), (2.5, 3.3)]):  # turning around at three spots
        for k, a in enumerate(np.radians(np.arange(0, 360, 30))):
            target = (x + np.cos(a), y + np.sin(a), 1.5)
            frames.append(perceive(walls(), look_at((x, y, 1.6), target), K, len(frames), len(frames), "kitchen"))
    mem.update_many(frames)
    snap = mem.as_of(float(len(frames)))
    assert snap.ego.far_edges_m.shape == (len(frames), OutlineConfig().bins, 3)
    ctx = SimpleNamespace(snapshot=snap, intent=SimpleNamespace(targets=()),  # "How big is this room?", parsed
                          facts=SimpleNamespace(time=SimpleNamespace(t_eval=snap.t_s), rooms=ROOMS))
    ans = room_size(ctx, MeasureConfig())
    assert ans.unit == "m2" and abs(ans.value - 4.9 * 3.9) < 1.0, ans.text  # inner faces of 0.1 m walls


def test_a_save_made_before_the_outline_loads_without_one():
    mem = SpatialMemory()
    K = Intrinsics.from_fov(64, 48, 70.0)
    for i in range(3):
        mem.update(perceive(walls(), look_at((2.5, 2.0, 1.6), (2.5 + i, -1.0, 1.4)), K, float(i), i, "kitchen"))
    meta, arrays = mem.outline.to_state()
    back = RoomOutline.from_state(mem.cfg, (meta, arrays), {"ego": mem.ego})
    assert np.array_equal(back.view(3), mem.outline.view(3), equal_nan=True)
    old = RoomOutline.from_state(mem.cfg, ({}, {}), {"ego": mem.ego})
    assert old.view(3).shape == (3, mem.cfg.outline.bins, 3) and np.isnan(old.view(3).astype(float)).all()


def test_rows_found_together_equal_each_frame_alone():
    """Frames wait and are computed in batches (``outline.batch_frames``): the rows are those of ``far_edges`` on
    each frame alone, whatever the image size, with a NaN row for a frame without depth; reading or saving
    computes the waiting rows."""
    import pickle
    from types import SimpleNamespace

    cfg = OutlineConfig(pixel_stride=2, batch_frames=3)
    out, expect = RoomOutline(cfg), []
    up = np.array([0.0, 0.0, 1.0])
    for i in range(7):
        K = Intrinsics.from_fov(64, 48, 70.0) if i % 3 else Intrinsics.from_fov(96, 72, 60.0)
        T = look_at((1.5 + 0.3 * i, 2.0, 1.6), (2.5 + np.cos(i), 2.0 + np.sin(i), 1.4))
        depth, _ = render(walls(), T, K)
        frame = SimpleNamespace(depth_m=None if i == 4 else depth, intrinsics=K, T_world_cam=T)
        out.update(SimpleNamespace(fp=SimpleNamespace(frame=frame), up_world=up))
        expect.append(np.full((cfg.bins, 3), np.nan) if i == 4 else
                      far_edges(depth, np.array([K.fx, K.fy, K.cx, K.cy]), T.matrix, up, cfg))
    assert len(out) == 7 and len(out.pending) == 1  # two batches of three computed, one frame waiting
    copied = pickle.loads(pickle.dumps(out))
    expect = np.array(expect).astype(np.float16)
    assert np.array_equal(out.view(7), expect, equal_nan=True) and not out.pending
    assert np.array_equal(copied.to_state()[1]["edges"], expect, equal_nan=True)
    assert np.isfinite(expect[0]).all(axis=1).sum() >= 8
