"""The query-side caches and indexes give what the plain computation gives: objects known at t, neighbour lists
queried lazily, the objects that chose one (reach and isolated objects), place nodes reused across times, the
graph built on first access (also after later frames and from several threads)."""
from __future__ import annotations

import threading

import networkx as nx
import numpy as np
import pytest
from scipy.spatial import cKDTree

from directme.memory import SpatialMemory
from directme.memory.graph import ObjectTable, build_graph
from directme.memory.places import PlaceClusterer
from directme.memory.snapshot import record_index
from directme.memory.testing import Box, orbit, snapshot_facts

SCENE = [Box(1, "mug", (0.3, 0.0, 0.06), (0.12, 0.12, 0.12)), Box(2, "book", (-0.4, 0.2, 0.03), (0.2, 0.3, 0.06)),
         Box(3, "chair", (0.5, -0.9, 0.4), (0.5, 0.5, 0.8)), Box(4, "lamp", (-0.8, -0.6, 0.5), (0.2, 0.2, 1.0))]


class _Rows:
    def __init__(self, pos: np.ndarray, present: np.ndarray) -> None:
        n = len(pos)
        self.index = np.arange(0, 2 * n, 2)  # record indices with gaps, as after merges
        self.present, self.position_w = present, pos
        self.last_frame = np.zeros(n, np.int64)
        self.label_id = np.zeros(n, np.int64)


def _layouts(rng: np.random.Generator):
    for n in (2, 5, 60, 400):
        yield "heap", rng.uniform(0, 2, (n, 3))
        yield "spread", rng.uniform(0, 80, (n, 3))
        wall = rng.uniform(0, 60, (n, 3))
        wall[:, 0] = 2.0
        yield "wall", wall
        centres = rng.uniform(0, 100, (max(1, n // 8), 3))
        yield "clusters", centres[rng.integers(len(centres), size=n)] + rng.normal(0, 0.3, (n, 3))
        dup = rng.uniform(0, 5, (n, 3))
        dup[: n // 3] = dup[0]
        yield "duplicates", dup
        yield "grid ties", np.round(rng.uniform(0, 10, (n, 3)))


def _near_edges(g: nx.Graph) -> list:
    return sorted((min(a, b), max(a, b), d["distance_m"]) for a, b, d in g.edges(data=True) if d["kind"] == "near")


def test_neighbour_lists_queried_lazily_are_those_of_one_query_over_all_objects():
    rng = np.random.default_rng(0)
    for _, pos in _layouts(rng):
        n = len(pos)
        tab = ObjectTable(_Rows(pos, np.ones(n, bool)), ["x"], lambda i: None, 3, 1.5, 16)
        order = rng.permutation(n)
        for part in np.array_split(order, 3):  # asked in pieces, in any order
            tab.neighbours(np.sort(part))
        kk = min(4, n)
        batch = np.asarray(cKDTree(pos).query(pos, k=kk)[1]).reshape(n, kk)[:, 1:]
        assert np.array_equal(tab.knn(np.arange(n)), batch)


def test_isolated_objects_are_exactly_those_whose_knn_reach_beyond_reach_m():
    rng = np.random.default_rng(1)
    for name, pos in _layouts(rng):
        n = len(pos)
        for reach in (1.5, 4.5, 30.0):
            tab = ObjectTable(_Rows(pos, np.ones(n, bool)), ["x"], lambda i: None, 3, 1.5, 16, reach)
            iso, d = tab.isolated()
            kk = min(4, n)
            last = np.asarray(cKDTree(pos).query(pos, k=kk)[0]).reshape(n, kk)[:, -1]
            assert np.array_equal(np.sort(iso), np.flatnonzero(last > reach)), (name, n, reach)
            assert np.array_equal(d[np.argsort(iso)], last[last > reach])


def test_restricted_graphs_have_the_full_graphs_edges_and_neighbours_for_any_reach():
    rng = np.random.default_rng(2)
    for name, pos in _layouts(rng):
        n = len(pos)
        present = rng.random(n) < 0.8
        for knn, radius, max_near in ((3, 1.5, 16), (0, 0.5, 2), (6, 4.0, 5)):
            def table(reach=None):
                return ObjectTable(_Rows(pos, present), ["x"], lambda i: None, knn, radius, max_near, reach)
            full = build_graph(table(), {}, SpatialMemory().ego.track(0), None)
            ids = [f"o{2 * i}" for i in range(n)]
            for targets in ([ids[0]], [ids[-1], ids[n // 2]], list(rng.choice(ids, size=min(n, 6)))):
                graphs = [build_graph(table(reach), {}, SpatialMemory().ego.track(0), None, targets)
                          for reach in (None, radius, 50.0)]
                assert all(_near_edges(g) == _near_edges(graphs[0]) for g in graphs[1:]), name
                sub = graphs[0]
                assert _near_edges(sub) == _near_edges(full.subgraph(sub.nodes)), name
                for t in targets:
                    assert set(sub.neighbors(t)) == set(full.neighbors(t)), (name, t)


def test_node_ids_name_records_only_in_their_one_spelling():
    assert [record_index(x) for x in ("o0", "o17", "o01", "o", "o-1", "p3", "o٣", 5, None, "o1.0")] == \
        [0, 17, -1, -1, -1, -1, -1, -1, -1, -1]


@pytest.fixture(scope="module")
def stream():
    frames = list(orbit(SCENE, 10, size=(96, 72), radius=2.0, scene_tag="kitchen"))
    frames += list(orbit(SCENE[:2], 6, size=(96, 72), radius=2.5, t0=10.0, index0=10, scene_tag="hall"))
    frames += list(orbit(SCENE[2:], 6, size=(96, 72), radius=1.8, t0=16.0, index0=16, scene_tag="kitchen"))
    return frames


@pytest.fixture(scope="module")
def full(stream):
    mem = SpatialMemory()
    mem.update_many(stream)
    return mem


def test_objects_known_at_t_are_those_with_a_state_row_by_t(stream, full):
    objects, timeline = full.objects, full.objects.timeline
    merged_t = objects.merged_t[: objects.n_records]
    for t in [fp.t_s for fp in stream] + [-1.0, 0.5, 1e9]:
        n = full.ego.n_frames_at(t)
        t_n = float(full.ego.t[n - 1]) if n else -np.inf
        expected = [f"o{i}" for i in timeline.rows_at(t_n, n, merged_t).index.tolist()]
        objs = full.as_of(t).objects
        assert list(objs) == expected and len(objs) == len(expected)
        assert all(nid in objs for nid in expected) and "o01" not in objs and "p0" not in objs


def test_a_graph_read_after_later_frames_is_the_graph_of_the_memory_then(stream):
    mem, prefix = SpatialMemory(), SpatialMemory()
    half = stream[: len(stream) // 2]
    mem.update_many(half)
    prefix.update_many(half)
    t = half[-1].t_s
    early, early_sub = mem.as_of(t), mem.as_of(t, node_ids=["o0"])
    mem.update_many(stream[len(half):])  # the graphs above are built only now
    assert snapshot_facts(early) == snapshot_facts(prefix.as_of(t))
    assert sorted(early_sub.graph.edges(data="kind")) == sorted(prefix.as_of(t, node_ids=["o0"]).graph.edges(data="kind"))


def test_snapshots_read_from_several_threads_match_one_thread(stream, full):
    times = [float(t) for t in np.random.default_rng(3).choice([fp.t_s for fp in stream] + [1e9], 12)]
    expected = {}
    for t in times:
        one = SpatialMemory.__new__(SpatialMemory)
        one.__setstate__(full.__getstate__())  # same state, its own cache
        expected[t] = snapshot_facts(one.as_of(t))
    results, errors = [], []

    def ask(ts):
        try:
            for t in ts:
                snap = full.as_of(t)
                full.as_of(t, node_ids=list(snap.objects)[:2]).graph.number_of_nodes()
                results.append((t, snapshot_facts(snap)))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=ask, args=(times[k::-1] + times[k:],)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(results) == 4 * (len(times) + 1)
    assert all(facts == expected[t] for t, facts in results)


def test_place_nodes_reused_across_times_equal_those_computed_afresh():
    rng = np.random.default_rng(4)
    n = 200
    pos = np.cumsum(rng.normal(0, 0.5, (n, 3)), axis=0).astype(np.float32)
    tags = rng.choice(np.array(["kitchen", "hall", "office"]), n)
    times = np.cumsum(rng.uniform(0.1, 1.0, n))
    cached = PlaceClusterer(1.0)
    for p, tag in zip(pos, tags):
        cached.add(p.astype(np.float64), str(tag))
    for k in rng.permutation(n + 1).tolist():
        fresh = PlaceClusterer(1.0)
        fresh.frame_place, fresh.place_tag, fresh._ids = cached.frame_place, cached.place_tag, cached._ids
        a, b = cached.places_at(k, pos[:k], times[:k]), fresh.places_at(k, pos[:k], times[:k])
        assert list(a) == list(b)
        for pid in a:
            x, y = a[pid], b[pid]
            assert (x.tag, x.spread_m, x.times_s, x.visits_s, x.n_frames) == (y.tag, y.spread_m, y.times_s, y.visits_s,
                                                                              y.n_frames)
            assert np.array_equal(x.center_w, y.center_w)


def test_an_ego_tracks_scene_tags_and_frames_are_those_of_its_frames(full):
    ego = full.ego
    for n in (0, 1, len(ego) // 2, len(ego)):
        track = ego.track(n)
        assert track.scene_tags == tuple(ego.tag_of(i) for i in range(n))
        assert track.frame_indices == tuple(int(f) for f in ego.frame.view(n))
        assert track.K.shape == (n, 6) and np.array_equal(track.K, ego.K.view(n))  # each frame's intrinsics
