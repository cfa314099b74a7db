"""The measured extent (memory/extent.py): one view's size from its eroded, depth-averaged mask; the extent over
views grows with them, shrugs off a few stray ones, and survives a save (older saves load without it)."""
import numpy as np
import pytest

from directme._atomic import StateError

from directme.answerers.measure import size_m
from directme.geometry import Intrinsics
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.extent import ExtentLog, erode, view_extent, view_key
from directme.memory.map import FrameLift, trimmed_box
from directme.memory.testing import Box, look_at, orbit, render

CFG = MemoryConfig(up_world=(0.0, 0.0, 1.0))
K = Intrinsics.from_fov(320, 240, 70.0)  # the simulator's image size
BOX = Box(1, "cabinet", (0.0, 0.0, 0.4), (0.6, 0.4, 0.8))


def _view(noise: float = 0.0, grow_px: int = 0, seed: int = 0):
    """Depth, mask and pose of BOX seen from 2.5 m at an angle, with per-pixel depth noise and a grown mask."""
    T = look_at((1.8, -1.7, 1.4), BOX.centre_w)
    depth, idx = render([BOX], T, K)
    mask = idx == 0
    for _ in range(grow_px):  # a mask grown onto the floor around the object
        mask = ~erode(~mask, 1)
    rng = np.random.default_rng(seed)
    return depth * (1.0 + noise * rng.standard_normal(depth.shape)).astype(np.float32), mask, T


def test_a_view_measures_the_box_it_shows():
    depth, mask, T = _view()
    size, clear, n_px = view_extent(mask, depth, K, T, CFG.map)
    assert clear is True and n_px == np.count_nonzero(mask)
    assert np.all(np.abs(size - np.array(BOX.size_m)) < 0.05), size


def test_a_view_resists_pixel_depth_noise_and_a_grown_mask():
    depth, mask, T = _view(noise=0.05, grow_px=2)
    size, _, _ = view_extent(mask, depth, K, T, CFG.map)
    raw = FrameLift.compute(depth, K, T, CFG.map).instance_points(mask)
    _, raw_size = trimmed_box(raw, CFG.map.position_trim)
    err, raw_err = np.abs(size - BOX.size_m), np.abs(raw_size - BOX.size_m)
    assert err.max() < 0.08, size  # within the grown band (2 pixels each side, 2.3 cm here) and a little noise
    assert raw_err.max() > 2 * err.max(), (raw_size, size)  # what the points' box would have said


def test_a_view_of_a_cut_off_object_is_not_clear():
    near = look_at((0.0, -0.9, 0.6), BOX.centre_w)  # so close that the cabinet fills the image
    depth, idx = render([BOX], near, K)
    assert view_extent(idx == 0, depth, K, near, CFG.map)[1] is False


def _add(log: ExtentLog, t: float, sizes, clear=True, key: int = 0, px: int = 400) -> None:
    sizes = np.atleast_2d(sizes)
    log.add(t, sizes, np.full(len(sizes), clear), np.full(len(sizes), key), np.full(len(sizes), px), CFG.map)


def test_the_extent_grows_with_views_and_shrugs_off_a_few_stray_ones():
    log = ExtentLog()
    for k in range(5):  # partial views: the object cut by an occluder
        _add(log, float(k), [0.3, 0.2, 0.4], key=k)
    before = log.at(4.0)
    for k in range(5, 20):  # whole views, of other kinds: the partial ones make room
        _add(log, float(k), [0.6, 0.4, 0.8], key=k)
    assert np.allclose(log.at(19.0), [0.6, 0.4, 0.8])
    assert np.allclose(log.at(4.0), before) and log.at(-1.0) is None  # the past stays as it was
    _add(log, 20.0, [[3.0, 3.0, 3.0], [2.5, 0.1, 3.0]], key=30)  # a wrong association
    assert np.allclose(log.at(20.0), [0.6, 0.4, 0.8])
    _add(log, 21.0, [5.0, 5.0, 5.0], clear=False, key=31)  # cut off by the image border: not counted
    assert np.allclose(log.at(21.0), [0.6, 0.4, 0.8])


def test_larger_views_weigh_more():
    """Views showing the object at more pixels outweigh many small ones (slivers past an occluder, far views
    whose mask is a few pixels off), yet a single large stray view does not decide."""
    log = ExtentLog()
    for k in range(12):  # small partial views
        _add(log, float(k), [0.2, 0.1, 0.3], key=k, px=60)
    for k in range(12, 15):  # whole views, close up
        _add(log, float(k), [0.6, 0.4, 0.8], key=k, px=2500)
    assert np.allclose(log.at(14.0), [0.6, 0.4, 0.8])
    _add(log, 15.0, [3.0, 3.0, 3.0], key=15, px=3000)  # a wrong association, larger still
    assert np.allclose(log.at(15.0), [0.6, 0.4, 0.8])
    alike = CFG.replace(map__measure_px_power=0.0).map  # weighing alike: the many partial views win
    log2 = ExtentLog()
    log2.add(0.0, np.array(log.views), np.array(log.clear), np.array(log.keys), np.array(log.px), alike)
    assert np.allclose(log2.at(0.0), [0.2, 0.1, 0.3])


def test_the_kept_views_stay_bounded_and_spread_over_kinds_of_view():
    log, n = ExtentLog(), CFG.map.measure_max_views
    for k in range(3 * n):  # one kind of view only: it fills the views, then adds nothing
        _add(log, float(k), [0.5, 0.5, 0.5], clear=False)
    assert len(log.views) == n and len(log) == n and not log.wants(0, False, CFG.map)
    assert log.wants(0, True, CFG.map)  # the first clear view replaces the cut-off ones
    _add(log, 100.0, [0.6, 0.4, 0.8])
    assert log.clear == [True] and np.allclose(log.at(100.0), [0.6, 0.4, 0.8])
    for k in range(4 * n):  # two kinds of view, the second seen much more often: they end up balanced
        _add(log, 101.0 + k, [0.6, 0.4, 0.8], key=1 if k % 4 else 2)
    assert len(log.keys) == n and abs(log.keys.count(1) - log.keys.count(2)) <= 1 and not log.wants(1, True, CFG.map)
    assert view_key((0, 0, 0), (2, 0, 0), CFG.map) != view_key((0, 0, 0), (0, 2, 0), CFG.map)  # another side
    assert view_key((0, 0, 0), (1, 0, 0), CFG.map) != view_key((0, 0, 0), (4, 0, 0), CFG.map)  # farther
    assert view_key((0, 0, 0), (2, 0.1, 0), CFG.map) == view_key((0, 0, 0), (2.1, 0, 0), CFG.map)


def test_the_measured_extent_round_trips_and_older_saves_load(tmp_path):
    scene = [BOX, Box(2, "chair", (1.2, 0.9, 0.45), (0.5, 0.5, 0.9))]
    mem = SpatialMemory(CFG)
    mem.update_many(orbit(scene, 24, centre=(0.5, 0.4, 0.4), size=(160, 120), radius=3.2))
    nodes = {n.label: n for n in mem.as_of(1e9).objects.values()}
    for b in scene:
        assert np.all(np.abs(nodes[b.label].measured_extent_m - b.size_m) < 0.06), nodes[b.label].measured_extent_m
    again = SpatialMemory.load(mem.save(tmp_path / "m"))
    for n in again.as_of(1e9).objects.values():
        assert np.array_equal(n.measured_extent_m, nodes[n.label].measured_extent_m)
    for r, r2 in zip(mem.objects.records, again.objects.records):  # what the next view is measured against, too
        assert (r2.sizes.tried_s, r2.sizes.views) == (r.sizes.tried_s, r.sizes.views)
    meta, arrays = mem.objects.to_state()
    old = {k: v for k, v in arrays.items() if not k.startswith("obj/size_")}  # a save from before the measured extent
    store = type(mem.objects).from_state(CFG, (meta, old), {})
    assert all(len(r.sizes) == 0 for r in store.records)
    with pytest.raises(StateError, match="size_est"):  # a part of it missing is a broken save
        type(mem.objects).from_state(CFG, (meta, {k: v for k, v in arrays.items() if "size_est" not in k}), {})
    before_kinds = {k: v for k, v in arrays.items() if "size_key" not in k}  # a save from before the kept views
    for r in type(mem.objects).from_state(CFG, (meta, before_kinds), {}).records:
        assert r.sizes.keys == [-1] * len(r.sizes.views) and len(r.sizes.views) <= CFG.map.measure_max_views
    before_px = {k: v for k, v in arrays.items() if "size_px" not in k}  # a save from before the pixel counts
    for r, r2 in zip(mem.objects.records, type(mem.objects).from_state(CFG, (meta, before_px), {}).records):
        assert r2.sizes.views == r.sizes.views and r2.sizes.px == [0] * len(r.sizes.views)
        assert r2.sizes.weights(CFG.map) == [1.0] * len(r.sizes.views)  # they weigh alike
    node = nodes["cabinet"]
    assert np.array_equal(size_m(type(node)(**{**node.__dict__, "measured_extent_m": None})), node.extent_m)
