"""How much of its surroundings memory has looked at: the share of the directions around the wearer (on the
ground plane, 1 degree bins) that the camera's field of view swept over the frames in scope (all frames, or
those tagged with the asked place). An absence ("0 chairs", "no, you did not see a cup") is only as sure as
this share: two frames of a room see a fifth of it. ``absence_confidence`` turns the share into the
confidence of "none": the object could hide only in the share not looked at, where it is with probability
``prior`` (an answerer option; 0.5, an uninformed guess, not fitted to data).

A proxy for the floor area observed (memory keeps no map of the free space it has seen): it counts
directions, not distances, and takes ``hfov_deg`` as the camera's horizontal field of view (the memory's ego
track keeps poses, not intrinsics)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..geometry import ground_basis
from ..memory.snapshot import MemorySnapshot
from ..query.vocab import canonical


@dataclass(frozen=True)
class ViewCoverage:
    """The share of directions looked at (0..1) over ``n_frames`` frames."""

    fraction: float
    n_frames: int

    def absence_confidence(self, prior: float) -> float:
        """P(none there | none seen): 1 - (share not looked at) x ``prior`` (the chance that it is there)."""
        return 1.0 - (1.0 - self.fraction) * prior

    def describe(self) -> str:
        if self.n_frames == 0:
            return "no frame of it seen yet"
        return f"looked at {100 * self.fraction:.0f}% of the directions around you in {self.n_frames} frame" + \
            ("s" if self.n_frames != 1 else "")


def view_coverage(snapshot: MemorySnapshot, hfov_deg: float, place: Optional[str] = None) -> ViewCoverage:
    """The directions swept by the camera over the snapshot's frames (only those tagged ``place`` if given)."""
    ego = snapshot.ego
    keep = np.ones(len(ego), dtype=bool)
    if place and ego.scene_tags:
        keep = np.array([canonical(t or "") == canonical(place) for t in ego.scene_tags], dtype=bool)
    if not keep.any():
        return ViewCoverage(0.0, 0)
    forward_w = np.asarray(ego.T_world_cam, dtype=np.float64)[keep][:, :3, 2]  # camera z axis in the world
    g = forward_w @ ground_basis(np.asarray(snapshot.up_world, dtype=np.float64)).T
    level = np.linalg.norm(g, axis=1) > 1e-6  # a camera looking straight down or up sweeps no heading
    heading = np.degrees(np.arctan2(g[level, 1], g[level, 0]))
    bins = np.arange(360) + 0.5
    off = np.abs((bins[None, :] - heading[:, None] + 180.0) % 360.0 - 180.0)
    seen = (off <= hfov_deg / 2.0).any(axis=0) if len(heading) else np.zeros(360, dtype=bool)
    return ViewCoverage(float(seen.mean()), int(keep.sum()))
