"""The scene graph at one time: object, place and ego nodes; near (object-object), in (object-place)
and at (ego-place) edges.

Object-object edges join each present object to its ``edge_knn`` nearest present neighbours and to the
present objects closer than ``edge_distance_m`` - at most its ``max_near_edges`` nearest of those - (an
edge when either end chose the other). So an object has at most ``edge_knn + max_near_edges`` edges of its
own choosing, and building the graph is O(n log n) in objects (KD-tree queries), even in a dense heap.
A restricted graph (``node_ids``) holds those objects, their neighbours, the places these objects were last
seen in, the wearer's current place and the ego node, with exactly the edges the full graph has between these
nodes. Only the neighbour lists a graph needs are queried (see ``ObjectTable``).
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional, Sequence

import networkx as nx
import numpy as np
from scipy.spatial import cKDTree

from .snapshot import EgoTrack, PlaceNode, record_index
from .timeline import Rows

EGO_ID = "ego"


class ObjectTable:
    """The objects known at one time (``Rows`` columns) with a KD-tree and each present object's neighbour
    list (its kNN, then its nearest within the edge radius), built once per time and shared by every
    question asked at that time. Neighbour lists are queried for the objects a graph needs only; the
    objects that chose a given one are searched within ``reach_m`` of it and among the few "isolated" objects
    whose k-th nearest neighbour is farther than that (``isolated``)."""

    def __init__(self, rows: Rows, labels: Sequence[str], place_of: Callable[[int], Optional[str]], knn: int,
                 radius_m: float = 1.5, max_near: int = 16, reach_m: Optional[float] = None) -> None:
        """``reach_m``: radius searched for the objects that chose one (default three times ``radius_m``, at least
        ``radius_m``); a speed setting only, the graph is the same for any value."""
        self.rows, self.labels, self.place_of = rows, labels, place_of
        self.present = np.flatnonzero(rows.present)  # positions in ``rows`` of the present objects
        self.pos = np.asarray(rows.position_w[self.present], dtype=np.float64).reshape(-1, 3)
        n = len(self.pos)
        self.tree = cKDTree(self.pos) if n >= 2 else None
        self.kk = min(knn + 1, n)
        self.radius_m, self.max_near = radius_m, max_near
        self.reach_m = max(float(radius_m), 3.0 * radius_m if reach_m is None else float(reach_m))
        self._knn = np.empty((n, max(self.kk - 1, 0)), np.int64)  # kNN rows (without the object itself) ...
        self._knn_done = np.zeros(n, bool)  # ... valid where queried
        self._near: Optional[np.ndarray] = None  # near rows of neighbours() ...
        self._near_done = np.zeros(n, bool)  # ... valid where queried
        self._isolated: Optional[tuple[np.ndarray, np.ndarray]] = None
        self._slot = np.full(int(rows.index.max()) + 1 if len(rows.index) else 0, -1, np.int64)
        self._slot[rows.index] = np.arange(len(rows.index))  # record index -> position in ``rows`` (-1: not known)

    def slots(self, node_ids: Iterable[str]) -> np.ndarray:
        """Positions in ``rows`` (ascending, unique) of the known objects among ``node_ids``."""
        idx = np.array([i for i in map(record_index, set(node_ids)) if 0 <= i < len(self._slot)], np.int64)
        found = self._slot[idx]
        return np.unique(found[found >= 0])

    def _query_knn(self, todo: np.ndarray) -> np.ndarray:
        """kNN of present objects ``todo`` (all not queried yet): fills their rows, returns the distance to the
        last neighbour of each (the k-th nearest other object, or the object itself at a duplicate position)."""
        d, j = self.tree.query(self.pos[todo], k=self.kk)
        self._knn[todo] = np.asarray(j, np.int64).reshape(len(todo), self.kk)[:, 1:]
        self._knn_done[todo] = True
        return np.asarray(d, np.float64).reshape(len(todo), self.kk)[:, -1]

    def knn(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), k) kNN of present objects ``rows`` (as one query over all of them would give)."""
        todo = np.unique(rows[~self._knn_done[rows]])
        if len(todo) and self.kk > 1:
            self._query_knn(todo)
        return self._knn[rows]

    def neighbours(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), k) indices of the neighbours present objects ``rows`` chose (their kNN, then up to
        ``max_near`` nearest within ``radius_m``, distance <= radius as ``query_pairs``); ``n`` marks an
        empty entry. Queried for the rows asked only, and kept."""
        n = len(self.pos)
        if self.tree is None:
            return np.zeros((len(rows), 0), np.int64)
        k = min(self.max_near + 1, n)
        if self._near is None:
            self._near = np.empty((n, k), np.int64)  # not filled: rows are written when queried
        todo = np.unique(rows[~self._near_done[rows]])
        if len(todo):
            bound = float(np.nextafter(self.radius_m, np.inf))
            self._near[todo] = np.asarray(self.tree.query(self.pos[todo], k=k, distance_upper_bound=bound)[1],
                                          np.int64).reshape(len(todo), k)
            self._near_done[todo] = True
        lists = np.concatenate([self.knn(rows), self._near[rows]], axis=1)
        lists[lists == rows[:, None]] = n  # an object is not its own neighbour
        return lists

    def isolated(self) -> tuple[np.ndarray, np.ndarray]:
        """(present objects, distance to their last kNN neighbour) of those whose kNN reach beyond ``reach_m``:
        only they can choose an object farther than ``reach_m``. An object sharing a grid cell of diagonal
        ``reach_m`` with ``k`` others has its k nearest within ``reach_m``, so only those of sparser cells are
        queried."""
        if self._isolated is None:
            empty = (np.zeros(0, np.int64), np.zeros(0))
            if self.tree is None or self.kk <= 1:
                self._isolated = empty
            else:
                cell = np.floor(self.pos / (self.reach_m / np.sqrt(3.0) * (1.0 - 1e-9))).astype(np.int64)
                cell -= cell.min(axis=0)
                dims = cell.max(axis=0) + 1
                if float(np.prod(dims.astype(np.float64))) < 2.0 ** 62:
                    _, inv, count = np.unique(np.ravel_multi_index(cell.T, dims), return_inverse=True,
                                              return_counts=True)
                else:
                    _, inv, count = np.unique(cell, axis=0, return_inverse=True, return_counts=True)
                sparse = np.flatnonzero(count[inv.ravel()] < self.kk)
                if len(sparse):
                    d = self._query_knn(sparse)
                    far = d > self.reach_m
                    self._isolated = (sparse[far], d[far])
                else:
                    self._isolated = empty
        return self._isolated

    def choosers(self, subset: np.ndarray) -> np.ndarray:
        """Present objects that may have chosen one of ``subset`` (a superset: those within ``reach_m`` of one,
        and the isolated ones whose kNN reach one); ``neighbours`` tells which did."""
        tol = 1e-9
        near = self.tree.query_ball_point(self.pos[subset], self.reach_m * (1.0 + tol) + tol, return_sorted=False)
        iso, d_iso = self.isolated()
        far = np.zeros(0, np.int64)
        if len(iso):
            hits = cKDTree(self.pos[subset]).query_ball_point(self.pos[iso], d_iso * (1.0 + tol) + tol,
                                                              return_length=True)
            far = iso[np.asarray(hits) > 0]
        return np.unique(np.concatenate([*(np.asarray(x, np.int64) for x in near), far]))

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
    chose and those that chose one of them."""
    n = len(tab.pos)
    member = np.zeros(n + 1, bool)
    member[subset] = True
    if tab.tree is None or not len(subset):
        return np.flatnonzero(member[:n])
    member[tab.neighbours(subset).ravel()] = True
    is_sub = np.zeros(n + 1, bool)
    is_sub[subset] = True
    cand = tab.choosers(subset)
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
        wanted = tab.slots(node_ids)
        slot_to_present = np.full(len(rows.index), -1, np.int64)
        slot_to_present[present] = np.arange(len(present))
        subset = slot_to_present[wanted]
        members = _members(tab, subset[subset >= 0])
        edges = _edges(tab, members)
        keep = np.union1d(wanted, present[members])
    labels, label_id, pos_w, is_present = tab.labels, rows.label_id, rows.position_w, rows.present
    keep_l = keep.tolist()
    place_ids = [(tab.node_id(j), tab.place_of(int(rows.last_frame[j]))) for j in keep_l]
    g.add_nodes_from((nid, {"kind": "object", "label": labels[int(label_id[j])],
                            "position_w": np.asarray(pos_w[j], dtype=np.float64), "present": bool(is_present[j])})
                     for (nid, _), j in zip(place_ids, keep_l))
    if node_ids is not None:  # only the places of its objects and the wearer's
        places = {pid: places[pid] for pid in dict.fromkeys([pid for _, pid in place_ids] + [current_place])
                  if pid is not None and pid in places}
    g.add_nodes_from((pid, {"kind": "place", "tag": p.tag, "center_w": p.center_w, "spread_m": p.spread_m})
                     for pid, p in places.items())
    position_w = np.array(ego.T_world_cam[-1][:3, 3], dtype=np.float64) if len(ego) else None  # the latest pose's
    g.add_node(EGO_ID, kind="ego", track=ego, position_w=position_w)
    dist = np.linalg.norm(tab.pos[edges[:, 0]] - tab.pos[edges[:, 1]], axis=1).tolist()
    ids = rows.index[present].tolist()
    g.add_edges_from((f"o{ids[i]}", f"o{ids[j]}", {"kind": "near", "distance_m": d})
                     for (i, j), d in zip(edges.tolist(), dist))
    g.add_edges_from((nid, pid, {"kind": "in"}) for nid, pid in place_ids if pid is not None and pid in places)
    if current_place is not None and current_place in places:
        g.add_edge(EGO_ID, current_place, kind="at")
    return g
