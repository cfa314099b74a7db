"""The scene graph at one time: object, place and ego nodes; near (object-object), in (object-place)
and at (ego-place) edges.

Object-object edges join present objects closer than ``edge_distance_m`` and each present object to
its ``edge_knn`` nearest present neighbours (symmetric). A restricted graph (``node_ids``) holds those
objects, their neighbours, all places and the ego node, with exactly the edges the full graph has
between these nodes.
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional, Sequence

import networkx as nx
import numpy as np
from scipy.spatial import cKDTree

from .snapshot import EgoTrack, PlaceNode
from .timeline import Rows

EGO_ID = "ego"


class ObjectTable:
    """The objects known at one time (``Rows`` columns) with a KD-tree and kNN lists of the present
    ones, built once per time and shared by every question asked at that time."""

    def __init__(self, rows: Rows, labels: Sequence[str], place_of: Callable[[int], Optional[str]], knn: int) -> None:
        self.rows, self.labels, self.place_of = rows, labels, place_of
        self.present = np.flatnonzero(rows.present)  # positions in ``rows`` of the present objects
        self.pos = np.asarray(rows.position_w[self.present], dtype=np.float64).reshape(-1, 3)
        n = len(self.pos)
        self.tree = cKDTree(self.pos) if n >= 2 else None
        self.kk = min(knn + 1, n)
        self.knn = (self.tree.query(self.pos, k=self.kk)[1].reshape(n, self.kk)[:, 1:]
                    if self.tree is not None else np.zeros((n, 0), np.int64))
        self.slot = {f"o{i}": j for j, i in enumerate(rows.index.tolist())}

    def node_id(self, j: int) -> str:
        return f"o{int(self.rows.index[j])}"


def _pairs(a: np.ndarray, b: np.ndarray) -> set:
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return set(zip(lo.tolist(), hi.tolist()))


def _near_pairs(tab: ObjectTable, subset: Optional[np.ndarray], radius: float) -> tuple[set, np.ndarray]:
    """Edges (i < j, indices of present objects) among ``subset`` (all when None) and its neighbours,
    and the members."""
    pos, n, knn, kk = tab.pos, len(tab.pos), tab.knn, tab.kk
    if tab.tree is None:
        return set(), np.arange(n) if subset is None else subset
    rows = np.repeat(np.arange(n), kk - 1)
    if subset is None:
        radius_pairs = tab.tree.query_pairs(radius, output_type="ndarray")
        return _pairs(radius_pairs[:, 0], radius_pairs[:, 1]) | _pairs(rows, knn.ravel()), np.arange(n)
    member = np.zeros(n, bool)
    member[subset] = True
    for lst in tab.tree.query_ball_point(pos[subset], radius):
        member[lst] = True
    member[knn[subset].ravel()] = True
    is_sub = np.zeros(n, bool)
    is_sub[subset] = True
    member[is_sub[knn].any(axis=1)] = True
    s = np.flatnonzero(member)
    d = np.linalg.norm(pos[s][:, None] - pos[s][None], axis=-1)
    a, b = np.nonzero(np.triu(d < radius, 1))
    sub_knn = knn[s]
    inside = member[sub_knn]
    ka = np.repeat(s, kk - 1)[inside.ravel()]
    kb = sub_knn[inside]
    return _pairs(s[a], s[b]) | _pairs(ka, kb), s


def build_graph(tab: ObjectTable, places: Mapping[str, PlaceNode], ego: EgoTrack,
                current_place: Optional[str], radius_m: float, node_ids: Optional[Iterable[str]] = None) -> nx.Graph:
    g = nx.Graph()
    rows, present = tab.rows, tab.present
    if node_ids is None:
        pairs, _ = _near_pairs(tab, None, radius_m)
        keep = np.arange(len(rows.index))
    else:
        wanted = [tab.slot[n] for n in set(node_ids) if n in tab.slot]
        slot_to_present = np.full(len(rows.index), -1, np.int64)
        slot_to_present[present] = np.arange(len(present))
        subset = slot_to_present[np.array(sorted(wanted), np.int64)]
        pairs, members = _near_pairs(tab, subset[subset >= 0], radius_m)
        keep = np.union1d(np.array(wanted, np.int64), present[members])
    place_ids = []
    for j in keep.tolist():
        nid = tab.node_id(j)
        pid = tab.place_of(int(rows.last_frame[j]))
        place_ids.append((nid, pid))
        g.add_node(nid, kind="object", label=tab.labels[int(rows.label_id[j])],
                   position_w=np.asarray(rows.position_w[j], dtype=np.float64), present=bool(rows.present[j]))
    for pid, p in places.items():
        g.add_node(pid, kind="place", tag=p.tag, center_w=p.center_w, spread_m=p.spread_m)
    pose = ego.pose_at(float(ego.times_s[-1])) if len(ego) else None
    g.add_node(EGO_ID, kind="ego", track=ego, position_w=None if pose is None else pose.t.copy())
    pos = tab.pos
    for i, j in sorted(pairs):
        g.add_edge(tab.node_id(present[i]), tab.node_id(present[j]), kind="near",
                   distance_m=float(np.linalg.norm(pos[i] - pos[j])))
    for nid, pid in place_ids:
        if pid is not None and pid in places:
            g.add_edge(nid, pid, kind="in")
    if current_place is not None and current_place in places:
        g.add_edge(EGO_ID, current_place, kind="at")
    return g
