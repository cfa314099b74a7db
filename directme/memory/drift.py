"""The drift corrector: owns ``T_mem_input`` (input world frame -> memory world frame) and changes it
from past evidence only - heading from the scene's structure (heading.py), position from remembered
landmarks (relocalize.py) - keeping a log of every correction it applied."""
from __future__ import annotations

import logging
import math
from typing import Any, Optional

import numpy as np

from .._atomic import StateError
from ..types import FramePerception
from .association import Obs, co_observed
from .config import MemoryConfig
from .ego_log import EgoLog
from .heading import HeadingTracker
from .ingest import merge, refresh_shape
from .object_store import ObjectStore
from .relocalize import Correction, Relocaliser, pair_from_json, pair_to_json
from .scan import ScanMatcher, camera_points

log = logging.getLogger("directme.memory")


class DriftCorrector:
    """Heading filter, landmark relocaliser and the correction they maintain (one per memory)."""

    def __init__(self, cfg: MemoryConfig) -> None:
        self.cfg = cfg
        self.T_mem_input = np.eye(4)
        # applied corrections: (time, wearer position change in m, rotation about up in degrees)
        self.relocalisations: list[tuple[float, tuple[float, float, float], float]] = []
        self.reloc = Relocaliser()
        self.heading = HeadingTracker()
        self.heading_corrections: list[tuple[float, float]] = []  # (time, turn about up in degrees)
        self.scan = ScanMatcher(cfg.scan)

    @property
    def identity(self) -> bool:
        return bool(np.array_equal(self.T_mem_input, np.eye(4)))

    def correct_heading(self, fp: FramePerception, T_input: np.ndarray, up: np.ndarray) -> None:
        """Turn the correction when the scene's structure shows the heading is off (heading.py); ``up`` is the
        memory's up, or the default up of the current pose before it is known."""
        f = fp.frame
        T = self.T_mem_input @ T_input
        up_given = self.cfg.up_world is not None  # else refined from the first frame's floor and table normals
        yaw = self.heading.observe(f.depth_m, f.intrinsics, T, fp.t_s, up, up_given, self.cfg)
        if yaw is None:
            return
        turn = Correction(yaw, T[:3, 3], np.zeros(3), self.heading.up)  # about the vertical through the wearer
        self.T_mem_input = turn.matrix() @ self.T_mem_input
        self.heading.applied(yaw)
        self.heading_corrections.append((fp.t_s, math.degrees(yaw)))
        log.debug("t=%.3fs: heading corrected by %.2f deg from the scene structure", fp.t_s, math.degrees(yaw))

    def register_scan(self, fp: FramePerception, T_input: np.ndarray, up: np.ndarray) -> np.ndarray:
        """Lay this frame's depth on the structure seen before (scan.py) and change the correction by the
        pose change that does it; returns the frame's scan points (camera frame) for ``map_scan``."""
        f = fp.frame
        p_cam = camera_points(f.depth_m, f.intrinsics, self.cfg.scan)
        T = self.T_mem_input @ T_input
        up = self.scan_up(up)
        found = self.scan.register(p_cam, T, up, fp.t_s, self.cfg.scan)
        if found is not None:
            yaw, shift_w = found
            k = self.cfg.scan.gain  # a frame's registration is noisy (depth scale, few walls): apply a share
            self.T_mem_input = Correction(k * yaw, T[:3, 3], k * shift_w, up).matrix() @ self.T_mem_input
            self.scan.corrections += 1
        return p_cam

    def map_scan(self, p_cam: np.ndarray, T_mem_cam: np.ndarray, t_s: float) -> None:
        """Add the frame's scan points (``register_scan``'s), under its final pose, to the grid."""
        self.scan.add(p_cam, T_mem_cam, self.scan.up, t_s, self.cfg.scan)

    def scan_up(self, up: np.ndarray) -> np.ndarray:
        """The vertical the structure is flattened along, fixed at the first frame: the heading filter's,
        refined from the floor and table normals (a tilted vertical smears every wall's footprint by its
        height), else ``up``."""
        if self.scan.up is None:
            v = self.heading.up if self.heading.up is not None else up
            self.scan.up = np.asarray(v, dtype=np.float64) / np.linalg.norm(v)
        return self.scan.up

    def add_landmarks(self, obs: list[Obs], t_s: float, tag: Optional[str], objects: ObjectStore, ego: EgoLog) -> int:
        return self.reloc.add_frame(obs, t_s, tag, objects, ego, self.T_mem_input)

    def relocalise(self, t_s: float, pivot_w: np.ndarray, up: np.ndarray, objects: ObjectStore) -> bool:
        """Apply the correction the landmark pairs support (relocalize.py); returns whether one was applied.
        Objects first seen during the pairs' window (after the previous correction) were mapped with the
        drifted poses: they move with it, and those that duplicate a supporting landmark fold into it."""
        found = self.reloc.estimate(self.cfg, self.T_mem_input, pivot_w, up)
        if found is None:
            return False
        corr, members = found
        t = t_s
        D = corr.matrix()
        prev_t = self.relocalisations[-1][0] if self.relocalisations else -math.inf
        since = max(prev_t, t - self.cfg.relocalisation.window_s)
        dup_of = {n.index: objects.survivor(objects.records[p.record])
                  for p in members if (n := objects.tracked(p.track_id)) is not None}
        for rec in objects.records:
            if rec.merged_into is None and rec.obs_t and prev_t < rec.obs_t[0] < t and rec.obs_t[0] >= since:
                rec.voxels = rec.voxels.transformed(D, self.cfg.map.voxel_m)
                refresh_shape(rec, objects, t)
                keep = dup_of.get(rec.index)
                if keep is not None and keep is not rec and not co_observed(keep, rec):
                    merge(keep, rec, objects, t)
        self.T_mem_input = D @ self.T_mem_input
        self.reloc.used.update({p.record: t for p in members})
        moved = corr.apply(pivot_w[None])[0] - pivot_w
        self.relocalisations.append((t, tuple(float(v) for v in moved), math.degrees(corr.yaw_rad)))
        log.info("t=%.3fs: relocalised on %d remembered landmarks: moved %s m, turned %.1f deg", t, len(members),
                 np.round(moved, 3), math.degrees(corr.yaw_rad))
        return True

    # ------------------------------------------------------------------ persistence
    def to_state(self) -> dict[str, Any]:
        return {"T_mem_input": self.T_mem_input.tolist(),
                "relocalisations": [[t, list(v), yaw] for t, v, yaw in self.relocalisations],
                "reloc_pairs": [pair_to_json(p) for p in self.reloc.pairs],
                "reloc_used": [[int(r), float(t)] for r, t in self.reloc.used.items()],
                "reloc_aligned": [[int(r), bool(a)] for r, a in self.reloc.aligned.items()],
                "heading": self.heading.to_json(), "heading_corrections": [list(c) for c in self.heading_corrections],
                "scan": self.scan.to_state()}

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"scan_hits": self.scan.grid.hits, "scan_first_s": self.scan.grid.first_s}

    @staticmethod
    def from_state(cfg: MemoryConfig, meta: dict[str, Any], arrays: Optional[dict[str, np.ndarray]] = None) -> "DriftCorrector":
        d = DriftCorrector(cfg)
        d.T_mem_input = np.asarray(meta.get("T_mem_input", np.eye(4)), dtype=np.float64)
        if d.T_mem_input.shape != (4, 4) or not np.isfinite(d.T_mem_input).all() or \
                not np.allclose(d.T_mem_input[3], (0, 0, 0, 1)):
            raise StateError("T_mem_input", "must be a finite 4x4 rigid transform")
        d.relocalisations = [(float(t), tuple(float(x) for x in v), float(yaw))
                             for t, v, yaw in meta.get("relocalisations", [])]
        d.reloc.pairs = [pair_from_json(p) for p in meta.get("reloc_pairs", [])]
        d.reloc.used = {int(r): float(t) for r, t in meta.get("reloc_used", [])}
        d.reloc.aligned = {int(r): bool(a) for r, a in meta.get("reloc_aligned", [])}
        d.heading = HeadingTracker.from_json(meta.get("heading", {}))
        d.heading_corrections = [(float(t), float(y)) for t, y in meta.get("heading_corrections", [])]
        if "scan" in meta:  # saves before the structure grid start with an empty one
            d.scan = ScanMatcher.from_state(cfg.scan, meta["scan"], arrays or {})
        return d
