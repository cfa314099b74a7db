"""The ego log: the wearer's camera pose, intrinsics, scene tag and distance walked at every frame the
memory took (append-only, so a view at time t never changes)."""
from __future__ import annotations

import math
from array import array
from typing import TYPE_CHECKING, Any, Mapping, Optional

import numpy as np

from .._atomic import StateError, column
from ..geometry import Intrinsics, nearest_ground_distance_m, vector_norm
from .buffers import GrowArray, canonical_nans
from .component import FrameStep, State
from .snapshot import EgoTrack

if TYPE_CHECKING:
    from .config import MemoryConfig

K_UNKNOWN = np.zeros(6, np.float32)  # intrinsics row of frames saved before they were logged


class EgoLog:
    """The ego log component: per-frame columns of the wearer's track (memory world frame)."""

    key = "ego"
    sections: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.t = GrowArray(np.float64)
        self.T = GrowArray(np.float32, (4, 4))
        self.frame = GrowArray(np.int32)  # stream frame index of each ego frame
        self.tag = GrowArray(np.int16)  # index into ``tags``
        self.K = GrowArray(np.float32, (6,))  # fx, fy, cx, cy, width, height of each frame's camera
        self.path_m = array("d")  # metres walked up to each ego frame (drift allowance)
        self.tags: list[Optional[str]] = []

    def __len__(self) -> int:
        return len(self.t)

    @property
    def latest_t_s(self) -> Optional[float]:
        return float(self.t[len(self.t) - 1]) if len(self.t) else None

    def update(self, step: FrameStep) -> None:
        """Log the frame under its final pose (``step.frame_pos``: its position); the distance walked comes from
        the input poses (a correction's jump is not a step)."""
        f = step.fp.frame
        T = f.T_world_cam.matrix
        n = len(self)
        step_m = float(vector_norm((step.C_before @ step.T_input)[:3, 3] - self.T[n - 1][:3, 3])) if n else 0.0
        step.frame_pos = self.append(step.t_s, T, f.index, step.fp.scene_tag, f.intrinsics, step_m)

    def append(self, t_s: float, T_world_cam: np.ndarray, frame_index: int, tag: Optional[str],
               intrinsics: Intrinsics, step_m: float) -> int:
        """Log one frame; returns its position in the log."""
        self.t.append(t_s)
        self.T.append(T_world_cam.astype(np.float32))
        self.frame.append(frame_index if frame_index >= 0 else len(self.t) - 1)
        if tag not in self.tags:
            self.tags.append(tag)
        self.tag.append(self.tags.index(tag))
        k = intrinsics
        self.K.append((k.fx, k.fy, k.cx, k.cy, k.width, k.height))
        self.path_m.append((self.path_m[-1] if self.path_m else 0.0) + step_m)
        return len(self.t) - 1

    def n_frames_at(self, t_s: float) -> int:
        return int(np.searchsorted(self.t.view(), t_s, side="right"))

    def tag_of(self, frame_pos: int) -> Optional[str]:
        return self.tags[int(self.tag[frame_pos])]

    def walked_between(self, frame_pos: int) -> float:
        """Metres walked since the frame at ``frame_pos``."""
        return self.path_m[-1] - self.path_m[frame_pos]

    def nearest_since(self, frame_pos: int, point_w: np.ndarray, up_world: np.ndarray,
                      until_t_s: float = math.inf) -> float:
        """The wearer's nearest approach (m, along the ground: across ``up_world``) to ``point_w`` from the frame at
        ``frame_pos`` on (up to the frames at ``until_t_s``)."""
        positions = self.T.view()[frame_pos: self.n_frames_at(until_t_s), :3, 3]
        return nearest_ground_distance_m(positions, point_w, up_world)

    def track(self, n: int) -> EgoTrack:
        """The first ``n`` frames as the snapshot's ego track."""
        tags = np.empty(len(self.tags), dtype=object)
        tags[:] = self.tags  # tag names gathered in C: a 16-hour log has 57,600 frames
        return EgoTrack(self.t.view(n), self.T.view(n), tuple(tags[self.tag.view(n)].tolist()),
                        tuple(self.frame.view(n).tolist()), self.K.view(n))

    # ------------------------------------------------------------------ persistence
    def to_state(self) -> State:
        meta = {"tags": self.tags}
        arrays = {"ego_t": self.t.to_array(), "ego_T": self.T.to_array(), "ego_frame": self.frame.to_array(),
                  "ego_tag": self.tag.to_array(), "ego_K": self.K.to_array(),
                  "ego_path": np.array(self.path_m, np.float64)}
        return meta, canonical_nans(arrays)

    @classmethod
    def from_state(cls, cfg: "MemoryConfig", state: State, loaded: Mapping[str, Any]) -> "EgoLog":
        """The log saved by ``to_state``, checked (times and distance never decrease, tags in range)."""
        meta, arrays = state
        tags = meta.get("tags")
        if not isinstance(tags, list) or not all(t is None or isinstance(t, str) for t in tags):
            raise StateError("tags", "must be a list of scene tags (strings or null)")
        n = len(column(arrays, "ego_t", finite=True, increasing=True))
        column(arrays, "ego_T", n, (4, 4), finite=True)
        column(arrays, "ego_frame", n, kind="i")
        column(arrays, "ego_tag", n, kind="i", lo=0, hi=len(tags))
        column(arrays, "ego_path", n, finite=True, increasing=True)
        if "ego_K" in arrays:
            column(arrays, "ego_K", n, (6,), finite=True)
        log = cls()
        log.tags = list(tags)
        log.t, log.T = GrowArray.from_array(arrays["ego_t"]), GrowArray.from_array(arrays["ego_T"])
        log.frame, log.tag = GrowArray.from_array(arrays["ego_frame"]), GrowArray.from_array(arrays["ego_tag"])
        K = arrays.get("ego_K")
        log.K = GrowArray.from_array(K if K is not None else np.tile(K_UNKNOWN, (len(log.t), 1)))
        log.path_m = array("d", arrays["ego_path"].tolist())
        return log
