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
from .buffers import canonical_nans
from .config import MemoryConfig
from .ego_log import EgoLog
from .heading import HeadingTracker, UpEstimator
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
        self.vertical_est = UpEstimator()
        self.heading_corrections: list[tuple[float, float]] = []  # (time, turn about up in degrees)
        self.scan = ScanMatcher(cfg.scan)
        # the correction each recent frame was lifted with: (time, T_mem_input), oldest first, changes only
        self.recent: list[tuple[float, np.ndarray]] = []

    @property
    def identity(self) -> bool:
        return bool(np.array_equal(self.T_mem_input, np.eye(4)))

    def vertical(self, fp: FramePerception, T_input: np.ndarray, hint: np.ndarray) -> Optional[np.ndarray]:
        """The vertical the heading filter and the scan registration work about (heading.UpEstimator: the given
        ``up_world``, else estimated from the first seconds' surfaces, starting from ``hint``); None while it is
        still being estimated (no heading or position correction then)."""
        f = fp.frame
        settled = self.vertical_est.up is not None
        up = self.vertical_est.observe(f.depth_m, f.intrinsics, (self.T_mem_input @ T_input)[:3, :3], fp.t_s,
                                       hint, self.cfg)
        if up is not None and not settled:  # the heading reference is the first frames' (no drift yet there)
            frames = self.vertical_est.take_frames()
            if self.cfg.heading.enabled and self.heading.up is None:
                self.heading.reference_from(frames[:-1], up, self.cfg)  # this frame: correct_heading's
        return up

    def correct_heading(self, fp: FramePerception, T_input: np.ndarray, up: np.ndarray) -> None:
        """Turn the correction when the scene's structure shows the heading is off (heading.py) about the
        vertical ``up`` (``vertical``'s)."""
        f = fp.frame
        T = self.T_mem_input @ T_input
        yaw = self.heading.observe(f.depth_m, f.intrinsics, T, fp.t_s, up, self.cfg)
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
        """The vertical the structure is flattened along, fixed at its first frame: ``up`` (``vertical``'s; a
        tilted vertical smears every wall's footprint by its height)."""
        if self.scan.up is None:
            self.scan.up = np.asarray(up, dtype=np.float64) / np.linalg.norm(up)
        return self.scan.up

    def frame_done(self, t_s: float) -> None:
        """Note the correction the frame at ``t_s`` was lifted with; forget those no object can need any more
        (older than ``gone.odometry_window_s``, but the one in effect then)."""
        if not self.recent or not np.array_equal(self.recent[-1][1], self.T_mem_input):
            self.recent.append((t_s, self.T_mem_input.copy()))
        cut = t_s - self.cfg.gone.odometry_window_s
        k = next((i for i, (t, _) in enumerate(self.recent) if t > cut), len(self.recent))
        del self.recent[:max(k - 1, 0)]

    def since_seen(self, last_seen_s: float, now_s: float) -> Optional[np.ndarray]:
        """For an object last seen at ``last_seen_s``: the transform (memory frame -> memory frame) that puts it
        where the input's own motion since then says it is in the current frame - the current correction times
        the inverse of the one its sighting was lifted with - when that sighting is at most
        ``gone.odometry_window_s`` old (over seconds the input's motion is better than a fresh correction, which
        jumps by its own error from frame to frame) and the correction changed since; else None."""
        if now_s - last_seen_s > self.cfg.gone.odometry_window_s or not self.recent:
            return None
        C_seen = next((C for t, C in reversed(self.recent) if t <= last_seen_s), None)
        if C_seen is None or C_seen is self.recent[-1][1]:
            return None
        return self.T_mem_input @ np.linalg.inv(C_seen)

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
        # the window's objects moved with it: the recent frames count as corrected too (``since_seen``)
        self.recent = [(t_r, D @ C) for t_r, C in self.recent]
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
                "heading": self.heading.to_json(), "vertical": self.vertical_est.to_json(),
                "heading_corrections": [list(c) for c in self.heading_corrections],
                "scan": self.scan.to_state(),
                "recent_corrections": [[t, C.tolist()] for t, C in self.recent]}

    def to_arrays(self) -> dict[str, np.ndarray]:
        return canonical_nans({"scan_hits": self.scan.grid.hits, "scan_first_s": self.scan.grid.first_s,
                               "up_normals": self.vertical_est.to_array()})

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
        try:
            if "vertical" in meta:
                d.vertical_est = UpEstimator.from_json(meta["vertical"], (arrays or {}).get("up_normals"))
            elif d.heading.up is not None:  # saved before the estimator: the heading filter's vertical was it
                d.vertical_est = UpEstimator(up=d.heading.up.copy())
        except ValueError as e:
            raise StateError("vertical", str(e)) from None
        d.heading_corrections = [(float(t), float(y)) for t, y in meta.get("heading_corrections", [])]
        d.recent = [(float(t), np.asarray(C, dtype=np.float64)) for t, C in meta.get("recent_corrections", [])]
        if any(C.shape != (4, 4) or not np.isfinite(C).all() for _, C in d.recent):
            raise StateError("recent_corrections", "must be finite 4x4 transforms")
        if "scan" in meta:  # saves before the structure grid start with an empty one
            d.scan = ScanMatcher.from_state(cfg.scan, meta["scan"], arrays or {})
        return d
