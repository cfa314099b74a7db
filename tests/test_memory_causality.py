"""as_of(t) sees exactly the frames with timestamp <= t; save/load is lossless and appendable."""
import numpy as np
import pytest

from directme.geometry import Intrinsics
from directme.memory import SpatialMemory
from directme.memory.testing import Box, look_at, orbit, perceive, snapshot_facts

K = Intrinsics.from_fov(160, 120, 70.0)
MUG = Box(1, "mug", (0.3, 0.0, 0.06), (0.12, 0.12, 0.12))
BOOK = Box(2, "book", (-0.4, 0.2, 0.03), (0.2, 0.3, 0.06))
CHAIR = Box(3, "chair", (0.5, -0.9, 0.4), (0.5, 0.5, 0.8))
BENCH = Box(4, "bench", (-0.2, 1.2, 0.25), (2.4, 0.4, 0.5))


def _stream():
    """Orbit; mug moved and book removed; walk to a corridor; come back with new track ids; a bench first
    seen in two close-up halves (two nodes) and then whole (the nodes merge)."""
    scene = [MUG, BOOK, CHAIR]
    out = list(orbit(scene, 12, size=(160, 120), radius=2.0, scene_tag="kitchen"))
    moved = Box(1, "mug", (-0.5, -0.5, 0.06), (0.12, 0.12, 0.12))
    scene = [moved, CHAIR]
    out += list(orbit(scene, 8, size=(160, 120), radius=2.0, t0=12.0, index0=12, scene_tag="kitchen"))
    corridor = look_at((8.0, 0.0, 1.6), (8.0, 6.0, 1.2))
    out += [perceive(scene, corridor, K, 20.0 + k, 20 + k, "corridor") for k in range(5)]
    ids = {1: 11, 3: 13}
    out += [perceive(scene, look_at((2.0, 0.4, 1.4), (0, 0, 0.2)), K, 25.0 + k, 25 + k, "kitchen", track_ids=ids)
            for k in range(3)]
    bench_scene = [BENCH]
    left = look_at((-1.1, 0.2, 0.9), (-1.1, 1.2, 0.25))
    right = look_at((0.7, 0.2, 0.9), (0.7, 1.2, 0.25))
    whole = look_at((-0.2, -1.5, 1.8), (-0.2, 1.2, 0.25))
    out += [perceive(bench_scene, left, K, 28.0, 28, "kitchen", track_ids={4: 41}),
            perceive(bench_scene, right, K, 29.0, 29, "kitchen", track_ids={4: 42}),
            perceive(bench_scene, whole, K, 30.0, 30, "kitchen", track_ids={4: 43}),
            perceive(bench_scene, whole, K, 30.0, 31, "kitchen", track_ids={4: 43}),  # same timestamp is fine
            perceive(bench_scene, whole, K, 31.5, 32, "kitchen", track_ids={4: 43})]
    return out


@pytest.fixture(scope="module")
def stream():
    return _stream()


@pytest.fixture(scope="module")
def full(stream):
    mem = SpatialMemory()
    mem.update_many(stream)
    return mem


def test_stream_exercises_moves_gone_places_and_merges(full):
    snap = full.as_of(1e9)
    labels = sorted(o.label for o in snap.objects.values())
    assert labels == ["bench", "book", "chair", "mug"]
    mug = next(o for o in snap.objects.values() if o.label == "mug")
    assert len(mug.position_history) == 2
    assert not next(o for o in snap.objects.values() if o.label == "book").present
    assert {p.tag for p in snap.places.values()} == {"kitchen", "corridor"}
    assert any(r.merged_into is not None for r in full.objects.records), "the bench halves should merge"
    benches = [o for o in full.as_of(29.5).objects.values() if o.label == "bench"]
    assert len(benches) == 2  # before the merge both nodes are visible


@pytest.mark.parametrize("seed", [0, 1])
def test_as_of_equals_memory_built_from_prefix(stream, full, seed):
    rng = np.random.default_rng(seed)
    times = sorted({fp.t_s for fp in stream})
    for t in list(rng.choice(times, 4, replace=False)) + [29.99, 30.0, 31.0]:
        t = float(t)
        prefix = SpatialMemory()
        prefix.update_many(fp for fp in stream if fp.t_s <= t)
        assert snapshot_facts(full.as_of(t)) == snapshot_facts(prefix.as_of(t)), t
        ids = list(prefix.as_of(t).objects)[:1]
        sub_full, sub_prefix = full.as_of(t, node_ids=ids), prefix.as_of(t, node_ids=ids)
        assert sorted(sub_full.graph.edges) == sorted(sub_prefix.graph.edges)
        assert set(sub_full.graph.edges) <= set(full.as_of(t).graph.edges)


def test_as_of_before_first_frame_is_empty(full):
    snap = full.as_of(-1.0)
    assert len(snap.objects) == 0 and len(snap.ego) == 0 and snap.current_pose is None


def test_save_load_identical_and_appendable(stream, tmp_path):
    half = len(stream) // 2
    a = SpatialMemory()
    a.update_many(stream[:half])
    a.save(tmp_path / "mem")
    b = SpatialMemory.load(tmp_path / "mem")
    for t in (0.0, 5.0, stream[half - 1].t_s, 1e9):
        assert snapshot_facts(a.as_of(t)) == snapshot_facts(b.as_of(t))
    a.update_many(stream[half:])
    b.update_many(stream[half:])
    for t in (3.0, 20.0, 29.5, 1e9):
        assert snapshot_facts(a.as_of(t)) == snapshot_facts(b.as_of(t))
    ref = next(iter(b.as_of(1e9).objects.values())).keyframes[0]
    assert np.array_equal(a.keyframe_image(ref), b.keyframe_image(ref))


def test_label_first_sightings_survive_merges_and_are_read_as_of_t():
    """Per label, the first observation of the object or of one merged into it (up to the merge), as of t: a
    merge does not move a label's first sighting, and an absorbed object's other labels stay its own."""
    from directme.memory.objects import ObjectRecord

    labels = ["Couch", "Lamp", "Bed"]
    keep, gone, early = ObjectRecord(0), ObjectRecord(1), ObjectRecord(2)
    for rec, rows in ((keep, [(10.0, 0), (11.0, 2), (14.0, 0)]), (gone, [(2.0, 1), (3.0, 0), (30.0, 0)]),
                      (early, [(1.0, 2)])):
        for t, lab in rows:
            rec.add_observation(t, int(t), lab, 0.9)
    keep.merges.append((20.0, gone))
    gone.merges.append((5.0, early))
    assert keep.label_first_seen_at(12.0, labels) == {"Couch": 10.0, "Bed": 11.0}
    assert keep.label_first_seen_at(25.0, labels) == {"Couch": 3.0, "Bed": 1.0, "Lamp": 2.0}  # gone's 30 s is later
    assert gone.label_first_seen_at(4.0, labels) == {"Lamp": 2.0, "Couch": 3.0}  # early merged in at 5 s
