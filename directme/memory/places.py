"""Place nodes: the wearer's positions clustered per scene tag, online and causally.

Each new position joins the nearest place of the same tag whose running centre is within ``eps``
(leader clustering, an online stand-in for DBSCAN), else starts a new place. The per-frame place
index is logged, so the places as of any t are recomputed exactly from the frames up to t.
"""
from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any, Mapping, Optional

import numpy as np

from .._atomic import StateError, column
from ..geometry import vector_norm
from .component import FrameStep, State
from .snapshot import PlaceNode

if TYPE_CHECKING:
    from .config import MemoryConfig


class PlaceClusterer:
    """The places component: the per-frame place log and the places' running centres."""

    key = "places"
    sections = ("places",)

    def __init__(self, eps_m: float) -> None:
        self.eps_m = float(eps_m)
        self.frame_place = array("i")  # place index of every ego frame
        self.place_tag: list[str] = []
        self._ids: list[str] = []
        self._sums: list[np.ndarray] = []
        self._counts: list[int] = []
        self._by_tag: dict[str, tuple[list[int], np.ndarray]] = {}  # tag -> (its places, their running centres)
        self._slot: dict[int, int] = {}  # place -> its row in its tag's centres
        self._cache: tuple[int, dict] = (-1, {})
        self._nodes: dict[tuple[int, int], PlaceNode] = {}  # (place, its frames so far) -> node: a place is
        # determined by its own first frames, so a view at another time reuses the nodes of places not visited since

    def update(self, step: FrameStep) -> None:
        """Put the frame (logged by the ego log) in its place."""
        self.add(step.ego.T[step.frame_pos][:3, 3].astype(np.float64), step.fp.scene_tag)

    def add(self, position_w: np.ndarray, tag: Optional[str]) -> int:
        """The nearest place of ``tag`` within ``eps_m`` of the running centres (ties: the later place), else a new
        one. Only the few places near the position are measured one by one: a vectorised distance to the tag's
        centres (kept in one array) picks them, with a margin far above its rounding."""
        tag = tag or "unknown"
        best, best_d = -1, self.eps_m
        places, centres = self._by_tag.get(tag, ((), None))
        if places:
            near = np.flatnonzero(np.sqrt(((centres[: len(places)] - position_w) ** 2).sum(axis=1)) <= self.eps_m + 1e-6)
            for i in (places[j] for j in near.tolist()):
                d = float(vector_norm(self._sums[i] / self._counts[i] - position_w))
                if d <= best_d:
                    best, best_d = i, d
        if best < 0:
            best = len(self.place_tag)
            self.place_tag.append(tag)
            self._ids.append(f"p{best}")
            self._sums.append(np.zeros(3))
            self._counts.append(0)
        self._sums[best] = self._sums[best] + position_w
        self._counts[best] += 1
        self._set_centre(best)
        self.frame_place.append(best)
        return best

    def _set_centre(self, i: int) -> None:
        """Keep place ``i``'s running centre in its tag's array (grown by doubling)."""
        tag = self.place_tag[i]
        places, centres = self._by_tag.setdefault(tag, ([], np.zeros((4, 3))))
        if i not in self._slot:
            if len(places) == len(centres):
                centres = np.concatenate([centres, np.zeros_like(centres)])
                self._by_tag[tag] = (places, centres)
            self._slot[i] = len(places)
            places.append(i)
        centres[self._slot[i]] = self._sums[i] / self._counts[i]

    def places_at(self, n_frames: int, positions_w: np.ndarray, times_s: np.ndarray) -> dict[str, PlaceNode]:
        """Places supported by the first ``n_frames`` ego frames (positions/times of those frames)."""
        if self._cache[0] == n_frames:
            return self._cache[1]
        idx = np.array(self.frame_place[:n_frames], np.int64)
        out: dict[str, PlaceNode] = {}
        if n_frames:
            n_places = int(idx.max()) + 1
            counts = np.bincount(idx, minlength=n_places).tolist()
            if len(self._nodes) > max(4096, 4 * n_places):
                self._nodes.clear()
            todo = [i for i, c in enumerate(counts) if (i, c) not in self._nodes]
            if todo:
                self._build_nodes(idx, n_places, counts, todo, positions_w, times_s)
            nodes, ids = self._nodes, self._ids
            out = {ids[i]: nodes[(i, c)] for i, c in enumerate(counts)}
        self._cache = (n_frames, out)
        return out

    def _build_nodes(self, idx: np.ndarray, n_places: int, counts: list[int], todo: list[int],
                     positions_w: np.ndarray, times_s: np.ndarray) -> None:
        """Make the nodes of places ``todo`` from the frames ``idx`` (place of each of the first frames)."""
        n_frames = len(idx)
        p = positions_w.astype(np.float64)
        sums = np.stack([np.bincount(idx, weights=p[:, a], minlength=n_places) for a in range(3)], axis=1)
        sq = np.bincount(idx, weights=np.einsum("ij,ij->i", p, p), minlength=n_places)
        n = np.asarray(counts, np.float64)
        centres = sums / n[:, None]
        spread = np.sqrt(np.maximum(sq / n - np.einsum("ij,ij->i", centres, centres), 0.0))
        starts = np.concatenate([[0], np.flatnonzero(np.diff(idx)) + 1])
        ends = np.concatenate([starts[1:] - 1, [n_frames - 1]])
        wanted = np.zeros(n_places, bool)
        wanted[todo] = True
        runs = wanted[idx[starts]]
        visits: dict[int, list[tuple[float, float]]] = {i: [] for i in todo}
        for a, b in zip(starts[runs].tolist(), ends[runs].tolist()):
            visits[int(idx[a])].append((float(times_s[a]), float(times_s[b])))
        for i in todo:
            self._nodes[(i, counts[i])] = PlaceNode(f"p{i}", self.place_tag[i], centres[i], float(spread[i]),
                                                    times_s=tuple(v[0] for v in visits[i]), visits_s=tuple(visits[i]),
                                                    n_frames=counts[i])

    def place_of_frame(self, frame_pos: int) -> Optional[str]:
        return None if frame_pos < 0 else self._ids[self.frame_place[frame_pos]]

    def to_state(self) -> State:
        return {"tags": list(self.place_tag)}, {"frame_place": np.array(self.frame_place, np.int32)}

    @classmethod
    def from_state(cls, cfg: "MemoryConfig", state: State, loaded: Mapping[str, Any]) -> "PlaceClusterer":
        """The places saved by ``to_state``, with the ego log loaded before them (one place per ego frame)."""
        places = cls(cfg.places.eps_m)
        places.restore(state[1].get("frame_place"), state[0].get("tags"), loaded["ego"].T.view()[:, :3, 3])
        return places

    def restore(self, frame_place: np.ndarray, tags: list[str], positions_w: np.ndarray) -> None:
        """Rebuild from a saved per-frame place log (checked: one place per ego frame, in range)."""
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise StateError("place_tags", "must be a list of strings")
        column({"frame_place": frame_place}, "frame_place", len(positions_w), kind="i", lo=0, hi=len(tags))
        self.frame_place = array("i", frame_place.astype(int).tolist())
        self.place_tag = list(tags)
        self._cache, self._nodes = (-1, {}), {}
        self._ids = [f"p{i}" for i in range(len(tags))]
        self._sums = [np.zeros(3) for _ in tags]
        self._counts = [0 for _ in tags]
        for i, p in zip(frame_place, positions_w.astype(np.float64)):
            self._sums[i] = self._sums[i] + p
            self._counts[i] += 1
        self._by_tag, self._slot = {}, {}
        for i in range(len(tags)):
            if self._counts[i]:
                self._set_centre(i)
