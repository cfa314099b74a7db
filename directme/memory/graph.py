"""The scene graph at one time: object, place and ego nodes; near (object-object), in (object-place)
and at (ego-place) edges.

Object-object edges join each present object to its ``edge_knn`` nearest present neighbours and to the
present objects closer than ``edge_distance_m`` - at most its ``max_near_edges`` nearest of those - (an
edge when either end chose the other). So an object has at most ``edge_knn + max_near_edges`` edges of its
own choosing, and building the graph is O(n log n) in objects (KD-tree queries), even in a dense heap.
A restricted graph (``node_ids``) holds those objects, their neighbours, all places and the ego node, with
exactly the edges the full graph has between these nodes.
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
    """The objects known at one time (``Rows`` columns) with a KD-tree and each present object's neighbour
    list (its kNN, then its nearest within the edge radius), built once per time and shared by every
    question asked at that time."""

    def __init__(self, rows: Rows, labels: Sequence[str], place_of: Callable[[int], Optional[str]], knn: int,
                 radius_m: float = 1.5, max_near: int = 16) -> None:
        self.rows, self.labels, self.place_of = rows, labels, place_of
        self.present = np.flatnonzero(rows.present)  # positions in ``rows`` of the present objects
        self.pos = np.asarray(rows.position_w[self.present], dtype=np.float64).reshape(-1, 3)
        n = len(self.pos)
        self.tree = cKDTree(self.pos) if n >= 2 else None
        self.kk = min(knn + 1, n)
        self.knn = (self.tree.query(self.pos, k=self.kk)[1].reshape(n, self.kk)[:, 1:]
                    if self.tree is not None else np.zeros((n, 0), np.int64))
        self.radius_m, self.max_near = radius_m, max_near
        self._near: Optional[np.ndarray] = None  # rows of neighbours(), -1 until queried
        self.slot = {f"o{i}": j for j, i in enumerate(rows.index.tolist())}

    def neighbours(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), k) indices of the neighbours present objects ``rows`` chose (their kNN, then up to
        ``max_near`` nearest within ``radius_m``, distance <= radius as ``query_pairs``); ``n`` marks an
        empty entry. Queried for the rows asked only, and kept."""
        n = len(self.pos)
        if self.tree is None:
            return np.zeros((len(rows), 0), np.int64)
        k = min(self.max_near + 1, n)
        if self._near is None:
            self._near = np.full((n, k), -1, np.int64)
        todo = np.unique(rows[self._near[rows, 0] < 0])
        if len(todo):
            bound = float(np.nextafter(self.radius_m, np.inf))
            self._near[todo] = np.asarray(self.tree.query(self.pos[todo], k=k, distance_upper_bound=bound)[1],
                                          np.int64).reshape(len(todo), k)
        lists = np.concatenate([self.knn[rows], self._near[rows]], axis=1)
        lists[lists == rows[:, None]] = n  # an object is not its own neighbour
        return lists

    def node_id(self, j: int) -> str:
        return f"o{int(self.rows.index[j])}"


def _edges(tab: ObjectTable, members: np.ndarray) -> np.ndarray:
    """(m, 2) edges (i < j, indices of present objects; sorted, unique) that ``members`` chose among
    themselves: the full graph's edges between them."""
    n = len(tab.pos)
    cols = tab.neighbours(members)
    is_member = np.zeros(n + 1, bool)
    is_member[members] = True
    ok = is_member[cols]
    a, b = np.repeat(members, cols.shape[1])[ok.ravel()], cols[ok]
    code = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    return np.stack([code // max(n, 1), code % max(n, 1)], axis=1)


def _members(tab: ObjectTable, subset: np.ndarray) -> np.ndarray:
    """``subset`` (indices of present objects) and every object joined to one of them by an edge: those they
    chose and those that chose one of them (found among their kNN-choosers and the objects within the radius)."""
    n = len(tab.pos)
    member = np.zeros(n + 1, bool)
    member[subset] = True
    if tab.tree is None or not len(subset):
        return np.flatnonzero(member[:n])
    member[tab.neighbours(subset).ravel()] = True
    is_sub = np.zeros(n + 1, bool)
    is_sub[subset] = True
    near = tab.tree.query_ball_point(tab.pos[subset], float(np.nextafter(tab.radius_m, np.inf)), return_sorted=False)
    cand = np.unique(np.concatenate([np.flatnonzero(is_sub[tab.knn].any(axis=1)),
                                     *(np.asarray(x, np.int64) for x in near)]))
    member[cand[is_sub[tab.neighbours(cand)].any(axis=1)]] = True
    return np.flatnonzero(member[:n])


def build_graph(tab: ObjectTable, places: Mapping[str, PlaceNode], ego: EgoTrack,
                current_place: Optional[str], node_ids: Optional[Iterable[str]] = None) -> nx.Graph:
    g = nx.Graph()
    rows, present = tab.rows, tab.present
    if node_ids is None:
        edges = _edges(tab, np.arange(len(present)))
        keep = np.arange(len(rows.index))
    else:
        wanted = [tab.slot[n] for n in set(node_ids) if n in tab.slot]
        slot_to_present = np.full(len(rows.index), -1, np.int64)
        slot_to_present[present] = np.arange(len(present))
        subset = slot_to_present[np.array(sorted(wanted), np.int64)]
        members = _members(tab, subset[subset >= 0])
        edges = _edges(tab, members)
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
    dist = np.linalg.norm(tab.pos[edges[:, 0]] - tab.pos[edges[:, 1]], axis=1).tolist()
    ids = rows.index[present].tolist()
    g.add_edges_from((f"o{ids[i]}", f"o{ids[j]}", {"kind": "near", "distance_m": d})
                     for (i, j), d in zip(edges.tolist(), dist))
    for nid, pid in place_ids:
        if pid is not None and pid in places:
            g.add_edge(nid, pid, kind="in")
    if current_place is not None and current_place in places:
        g.add_edge(EGO_ID, current_place, kind="at")
    return g
