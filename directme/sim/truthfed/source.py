"""The simulator's ground truth for the frames being streamed, as the truth-fed stand-ins need it.

A truth-fed stand-in replaces one network's forward pass and returns the ground truth exactly as the
trained network would return it (its own output format, resolution and conventions), so that every
other part of the perception code - preprocessing, wrappers, chunk alignment, tracker bookkeeping,
label mapping - runs unchanged. The stand-ins find which frame they are looking at through this
object: ``register`` is called as each frame enters perception; ``index_of`` maps an image (by
identity: the backends pass ``frame.rgb`` on) back to its frame; ``current_index`` is the frame the
image stages are processing now.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Optional

import numpy as np

from ...errors import InvalidInputError
from ...geometry import Intrinsics, Pose
from ...types import Frame

if TYPE_CHECKING:  # pragma: no cover - the episode builds its truth-fed perception (a runtime import would cycle)
    from ..episode import Episode, RenderedFrame

MAX_REGISTERED = 512  # frames remembered by image identity (a DA3 chunk holds at most chunk_size)


class TruthSource:
    """Ground truth of ``episode`` by frame index: depth and instance ids rendered at any intrinsics
    (a network's processing resolution), camera poses, labels and rooms."""

    def __init__(self, episode: "Episode"):
        self.episode = episode
        self._by_rgb: "OrderedDict[int, tuple[np.ndarray, int]]" = OrderedDict()
        self._sources: dict[tuple[float, ...], object] = {}
        self.current_index: Optional[int] = None

    # ------------------------------------------------------------ which frame
    def register(self, frame: Frame) -> None:
        """Remember ``frame.rgb`` -> ``frame.index`` and make it the current frame."""
        if not 0 <= frame.index < self.episode.n_frames:
            raise InvalidInputError(f"truth-fed: frame {frame.index} is not a frame of episode "
                                    f"{self.episode.video_uid}")
        self._by_rgb[id(frame.rgb)] = (frame.rgb, frame.index)  # the array is kept: its id stays unique
        while len(self._by_rgb) > MAX_REGISTERED:
            self._by_rgb.popitem(last=False)
        self.current_index = frame.index

    def index_of(self, rgb: np.ndarray) -> int:
        """The index of the registered frame whose image is ``rgb`` (the same array object)."""
        hit = self._by_rgb.get(id(rgb))
        if hit is None or hit[0] is not rgb:
            raise InvalidInputError("truth-fed: an image that was not registered reached a stand-in; "
                                    "stream the frames through TruthFedPerception")
        return hit[1]

    # ------------------------------------------------------------ what is true
    @property
    def intrinsics(self) -> Intrinsics:
        """The episode camera's intrinsics (the frames' resolution)."""
        return self.episode.intrinsics

    def T_world_cam(self, index: int) -> Pose:
        return self.episode.frames_gt[index].T_world_cam

    def room(self, index: int) -> str:
        """The scene tag of frame ``index`` (the room type the camera is in)."""
        return self.episode.frames_gt[index].room

    @property
    def room_types(self) -> tuple[str, ...]:
        """Every room type of the episode, sorted."""
        return tuple(sorted({r.room_type for r in self.episode.layout.rooms}))

    def label(self, object_id: int) -> str:
        return self.episode.object(object_id).label

    def render(self, index: int, intrinsics: Optional[Intrinsics] = None) -> "RenderedFrame":
        """Depth (z along the optical axis, metres; 0 = nothing) and instance ids (0 = walls, floor) of
        frame ``index`` seen through ``intrinsics`` (default: the episode's); RGB is not shaded."""
        K = intrinsics or self.episode.intrinsics
        key = (K.fx, K.fy, K.cx, K.cy, float(K.width), float(K.height))
        src = self._sources.get(key)
        if src is None:
            base = self.episode.source
            if not hasattr(base, "with_intrinsics"):
                raise InvalidInputError("truth-fed needs a generated episode (generate_episode), "
                                        "not one read from disk")
            src = self._sources[key] = base.with_intrinsics(K)
        gt = self.episode.frames_gt[index]
        return src.render_pose(gt.T_world_cam, gt.t_s, index=index, with_rgb=False)
