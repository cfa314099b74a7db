"""Landmark relocalisation: keep the map consistent when the input poses drift.

Odometry-style poses (visual odometry, chunked depth+pose networks) drift with distance walked and
their heading wanders: a room revisited after minutes lands metres away from where it was mapped and
turned by a few degrees, its objects become duplicates and ego-frame answers point the wrong way.
Remembered objects are landmarks. Every instance near a remembered object of the same label that was
not seen recently (the wearer came back) is a landmark pair - in every frame of the first
``reloc_window_s`` seconds of the visit, against where the landmark was before it; pairs from the last
``reloc_window_s`` seconds (a few frames: relative poses over seconds are accurate) are pooled, and when
several distinct landmarks agree on one rigid correction - a rotation about the up axis through the
wearer plus a translation - that correction is the drift accumulated since, and the memory applies it.

The correction ``C`` (``SpatialMemory.T_mem_input``) maps the input world frame into the memory's world
frame; every frame's pose is used as ``C @ T_world_cam``. Objects first seen under the old correction
during the window (they were mapped at drifted positions) are moved by the change and folded into the
landmark they duplicate. It only ever changes from past evidence, so the memory stays causal: earlier
frames keep the poses and nodes they were stored with.

Guards: at least ``reloc_min_support`` distinct labelled landmarks within ``reloc_tol_m`` of the
correction (one moved object, or a partial view of a large one, cannot move the map); a rotation only
when the supporting landmarks span ``reloc_min_baseline_m`` and within ``reloc_max_yaw_deg``; changes
below ``reloc_min_shift_m`` / 1 degree are never applied; every pair's offset must be plausible for the
distance walked since its landmark was seen; an equally supported, different correction means an ambiguous
layout and nothing is done. Landmark offsets are centre to centre, so partial views of large landmarks (a
view cut by the image border: its centre off the object's) can agree on a correction even at exact poses
(seen on simulator episodes with exact poses: corrections of 0.07-0.51 m in 10 minutes).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from ..._atomic import StateError
from ...geometry import ground_basis, rotation_about_axis, row_norms, vector_norm
from ..association import Obs, co_observed
from ..component import FrameStep, State
from ..config import MemoryConfig
from ..objects import ObjectRecord
from .correction import Correction

if TYPE_CHECKING:
    from ..ego_log import EgoLog
    from ..object_store import ObjectStore

log = logging.getLogger("directme.memory")


@dataclass
class LandmarkPair:
    """An instance seen at ``c_in`` (input world frame) that may be the remembered object ``record``."""

    t_s: float
    obs_key: tuple[float, int]  # (frame time, instance index): one landmark per instance
    label_id: int
    c_in: np.ndarray
    record: int  # record index of the landmark
    r_w: np.ndarray  # the landmark's position (memory frame) when the pair was made
    allowed_m: float  # largest plausible offset (drift since the landmark was seen)
    track_id: int
    aligned: bool  # the instance's points already lie on the landmark's (a partial view, not drift)


def pair_to_json(p: LandmarkPair) -> dict:
    return {"t_s": p.t_s, "obs_key": list(p.obs_key), "label_id": p.label_id, "c_in": p.c_in.tolist(),
            "record": p.record, "r_w": p.r_w.tolist(), "allowed_m": p.allowed_m, "track_id": p.track_id,
            "aligned": p.aligned}


def pair_from_json(d: dict) -> LandmarkPair:
    return LandmarkPair(float(d["t_s"]), (float(d["obs_key"][0]), int(d["obs_key"][1])), int(d["label_id"]),
                        np.asarray(d["c_in"], dtype=np.float64), int(d["record"]), np.asarray(d["r_w"], dtype=np.float64),
                        float(d["allowed_m"]), int(d["track_id"]), bool(d["aligned"]))


def _visit_began(rec: ObjectRecord, t_s: float, window_s: float, recent_s: float) -> Optional[int]:
    """Index of ``rec``'s last observation before its current visit (after a gap of over ``recent_s``)
    when that visit began within ``window_s`` of ``t_s``; None otherwise."""
    obs_t = rec.obs_t
    k = len(obs_t) - 1
    while k >= 1 and t_s - obs_t[k] <= window_s:
        if obs_t[k] - obs_t[k - 1] > recent_s:
            return k - 1
        k -= 1
    return None


class Relocaliser:
    """The relocalisation stage (pose/): landmark pairs of the last few seconds, the correction they support, and
    the log of the corrections applied (one per memory)."""

    key = "relocalisation"
    sections = ("relocalisation", "association")

    def __init__(self, cfg: MemoryConfig) -> None:
        self.cfg = cfg
        self.pairs: list[LandmarkPair] = []
        self.aligned: dict[int, bool] = {}  # record -> whether its first pair of the current visit was aligned
        self.used: dict[int, float] = {}  # record -> time of the last correction it supported (one per visit)
        # applied corrections: (time, wearer position change in m, rotation about up in degrees)
        self.corrections: list[tuple[float, tuple[float, float, float], float]] = []

    def update(self, step: FrameStep) -> Optional[Correction]:
        """The correction this frame's landmark pairs support, or None. Objects first seen during the pairs'
        window (after the previous correction) were mapped with the drifted poses: they move with it, and those
        that duplicate a supporting landmark fold into it."""
        if not self.cfg.relocalisation.enabled:
            return None
        obs, objects, ego, C = step.observations(), step.objects, step.ego, step.pose.T_mem_input
        if not obs or not self.add_frame(obs, step.t_s, step.fp.scene_tag, objects, ego, C):
            return None
        up = step.up_world
        pivot_w = step.T_mem_cam[:3, 3]
        found = self.estimate(self.cfg, C, pivot_w, up)
        if found is None:
            return None
        corr, members = found
        t = step.t_s
        prev_t = self.corrections[-1][0] if self.corrections else -math.inf
        since = max(prev_t, t - self.cfg.relocalisation.window_s)
        dup_of = {n.index: objects.survivor(objects.records[p.record])
                  for p in members if (n := objects.tracked(p.track_id)) is not None}
        D = corr.matrix()
        for rec in objects.records:
            if rec.merged_into is None and rec.obs_t and prev_t < rec.obs_t[0] < t and rec.obs_t[0] >= since:
                objects.transform(rec, D, t)
                keep = dup_of.get(rec.index)
                if keep is not None and keep is not rec and not co_observed(keep, rec):
                    objects.merge(keep, rec, t)
        self.used.update({p.record: t for p in members})
        moved = corr.apply(pivot_w[None])[0] - pivot_w
        self.corrections.append((t, tuple(float(v) for v in moved), math.degrees(corr.yaw_rad)))
        log.info("t=%.3fs: relocalised on %d remembered landmarks: moved %s m, turned %.1f deg", t, len(members),
                 np.round(moved, 3), math.degrees(corr.yaw_rad))
        return replace(corr, moves_recent=True)

    def to_state(self) -> State:
        return {"pairs": [pair_to_json(p) for p in self.pairs],
                "used": [[int(r), float(t)] for r, t in self.used.items()],
                "aligned": [[int(r), bool(a)] for r, a in self.aligned.items()],
                "corrections": [[t, list(v), yaw] for t, v, yaw in self.corrections]}, {}

    @classmethod
    def from_state(cls, cfg: MemoryConfig, state: State, loaded: Mapping[str, Any]) -> "Relocaliser":
        meta = state[0]
        r = cls(cfg)
        try:
            r.pairs = [pair_from_json(p) for p in meta.get("pairs", [])]
            r.used = {int(k): float(t) for k, t in meta.get("used", [])}
            r.aligned = {int(k): bool(a) for k, a in meta.get("aligned", [])}
            r.corrections = [(float(t), tuple(float(x) for x in v), float(yaw))
                             for t, v, yaw in meta.get("corrections", [])]
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise StateError("relocalisation", f"is malformed ({type(e).__name__}: {e})") from None
        return r

    # ------------------------------------------------------------------ evidence
    def add_frame(self, obs: Sequence[Obs], t_s: float, tag: Optional[str], objects: "ObjectStore", ego: "EgoLog",
                  T_mem_input: np.ndarray) -> int:
        """Record this frame's landmark pairs (``obs`` lifted with the current correction ``T_mem_input``);
        returns how many."""
        cfg = objects.cfg
        self.pairs = [p for p in self.pairs if t_s - p.t_s <= cfg.relocalisation.window_s]
        live = {p.record for p in self.pairs}
        self.aligned = {r: a for r, a in self.aligned.items() if r in live}
        C_inv: Optional[np.ndarray] = None  # inverted when a pair needs it (most frames have none)
        n = 0
        small = [i for i, o in enumerate(obs) if not float(np.max(o.extent_m)) > cfg.relocalisation.max_extent_m]
        near = objects.nearby_each(np.array([obs[i].centre_w for i in small]).reshape(-1, 3), cfg.relocalisation.search_m)
        labels: dict[int, Optional[int]] = {}  # record index -> its label, None if never seen (read once a frame)
        for i, near_i in zip(small, near):
            o = obs[i]
            for j in near_i:
                # gone or pending-move nodes stay candidates: drift itself makes a place look empty or moved
                rec = objects.records[j]
                if j not in labels:
                    labels[j] = rec.label_id_from_votes() if rec.obs_t else None
                if labels[j] != o.label_id:
                    continue
                st = rec.state
                if max(st.extent_m) > cfg.relocalisation.max_extent_m:
                    continue
                k = len(rec.obs_t) - 1  # its last observation before this visit
                if t_s - rec.last_seen_s <= cfg.relocalisation.recent_s:
                    k = _visit_began(rec, t_s, cfg.relocalisation.window_s, cfg.relocalisation.recent_s)
                    if k is None or k + 1 < cfg.relocalisation.visit_min_obs or rec.obs_t[k + 1] <= self.used.get(rec.index, -math.inf):
                        continue  # in view for a while (it drifts with the wearer), too young a landmark, or
                        #           this visit already served a correction
                seen_tag = ego.tag_of(rec.obs_frame[k])
                if tag is not None and seen_tag is not None and seen_tag != tag:
                    continue  # last seen in another kind of place
                allowed = cfg.relocalisation.base_m + cfg.association.drift_per_m * ego.walked_between(rec.obs_frame[k])
                if k == len(rec.obs_t) - 1:
                    r_w = np.asarray(st.position_w, dtype=np.float64)
                    aligned = rec.voxels.overlap(o.coarse) >= cfg.association.overlap_min
                else:  # seen again a moment ago: where it was before this visit (its points now mix both)
                    r_w = np.asarray(rec.state_at(rec.obs_t[k + 1] - 1e-9).position_w, dtype=np.float64)
                    aligned = self.aligned.get(rec.index, False)
                if vector_norm(r_w - o.centre_w) <= allowed:
                    if C_inv is None:
                        C_inv = np.linalg.inv(T_mem_input)
                    self.pairs.append(LandmarkPair(t_s, (t_s, i), o.label_id, C_inv[:3, :3] @ o.centre_w + C_inv[:3, 3],
                                                   rec.index, r_w, allowed, int(o.inst.track_id), aligned))
                    if k == len(rec.obs_t) - 1:
                        self.aligned[rec.index] = aligned
                    n += 1
        return n

    # ------------------------------------------------------------------ estimation
    def estimate(self, cfg: MemoryConfig, T_mem_input: np.ndarray, pivot_w: np.ndarray,
                 up: np.ndarray) -> Optional[tuple[Correction, list[LandmarkPair]]]:
        """The correction (memory frame, on top of ``T_mem_input``) the pooled pairs support, or None."""
        pairs = self.pairs
        if len(pairs) < cfg.relocalisation.min_support:
            return None
        C = T_mem_input
        c = np.array([C[:3, :3] @ p.c_in + C[:3, 3] for p in pairs])  # where the current correction puts them
        r = np.array([p.r_w for p in pairs])
        off = r - c
        ok = row_norms(off) <= np.array([p.allowed_m for p in pairs])
        if ok.sum() < cfg.relocalisation.min_support:
            return None
        # a correction's members are distinct landmarks, at least min_support of them, and not half aligned: too
        # few distinct landmarks among the pairs (or among the pairs not aligned) and none can pass
        oks = [p for p, k in zip(pairs, ok.tolist()) if k]
        if len({p.record for p in oks}) < cfg.relocalisation.min_support or \
                len({p.record for p in oks if not p.aligned}) <= cfg.relocalisation.min_support // 2:
            return None
        max_yaw = math.radians(cfg.relocalisation.max_yaw_deg)
        if max_yaw == 0 and float(np.max(row_norms(off[ok]))) < cfg.relocalisation.min_shift_m:
            return None  # every translation they could support (a mean of their offsets) is too small to apply
        c2 = r2 = None  # on the ground plane: rotations only
        if max_yaw > 0:
            B = ground_basis(up)
            c2, r2 = (c - pivot_w) @ B.T, (r - pivot_w) @ B.T
        hyps: list[tuple[float, np.ndarray]] = []
        idx = np.flatnonzero(ok)
        for k in idx.tolist():  # one pair: a pure translation (offsets within 5 cm of one tried are not new)
            if not any(float(vector_norm(off[k] - shift)) < cfg.relocalisation.hypothesis_step_m for _, shift in hyps):
                hyps.append((0.0, off[k]))
        for a in idx.tolist() if max_yaw > 0 else []:  # two pairs with a long baseline: rotation + translation
            for b in idx.tolist():
                if b <= a or pairs[a].record == pairs[b].record or pairs[a].obs_key == pairs[b].obs_key:
                    continue
                dc, dr = c2[b] - c2[a], r2[b] - r2[a]
                nc = float(vector_norm(dc))
                rcfg = cfg.relocalisation
                if nc < rcfg.min_baseline_m or abs(nc - float(vector_norm(dr))) > rcfg.tol_m:
                    continue
                yaw = math.atan2(dr[1], dr[0]) - math.atan2(dc[1], dc[0])
                yaw = (yaw + math.pi) % (2 * math.pi) - math.pi
                if abs(yaw) > max_yaw:
                    continue
                R = rotation_about_axis(up, yaw)
                shift = 0.5 * ((r[a] - pivot_w - R @ (c[a] - pivot_w)) + (r[b] - pivot_w - R @ (c[b] - pivot_w)))
                hyps.append((yaw, shift))
        scored = []
        for yaw, shift in hyps:
            corr = Correction(yaw, pivot_w, shift, up)
            members = self._inliers(corr, c, r, ok, pairs, cfg.relocalisation.tol_m)
            corr, members = self._refine(corr, members, c, r, c2, r2, ok, pairs, cfg)
            if abs(float(corr.shift_w @ up)) > cfg.relocalisation.max_vertical_m:
                continue  # drift is along the floor: a large vertical offset means the landmarks are wrong
            support = min(len(members), len({pairs[j].label_id for j in members}) + 1)
            if float(vector_norm(corr.shift_w)) > cfg.relocalisation.big_shift_m:
                support -= 1  # a big jump needs one more landmark
            resid = float(row_norms(corr.apply(c[members]) - r[members]).sum()) if members else 0.0
            scored.append((support, resid, corr, members))
        if not scored:
            return None
        scored.sort(key=lambda s: (-s[0], s[1]))
        support, _, best, members = scored[0]
        if support < cfg.relocalisation.min_support:
            return None
        moved = best.apply(pivot_w[None])[0] - pivot_w
        for s, _, other, _ in scored[1:]:  # a clearly different correction with as much support: ambiguous
            if s < support:
                break
            if vector_norm(other.apply(pivot_w[None])[0] - pivot_w - moved) > 2 * cfg.relocalisation.tol_m:
                return None
        rcfg = cfg.relocalisation
        if vector_norm(moved) < rcfg.min_shift_m and abs(best.yaw_rad) < math.radians(rcfg.min_yaw_deg):
            return None
        if 2 * sum(pairs[j].aligned for j in members) >= len(members):
            return None  # the points already lie on the landmarks: partial views, not drift
        return best, [pairs[j] for j in members]

    @staticmethod
    def _inliers(corr: Correction, c: np.ndarray, r: np.ndarray, ok: np.ndarray, pairs: Sequence[LandmarkPair],
                 tol: float) -> list[int]:
        """One-to-one pairs (distinct instances and landmarks) the correction brings within ``tol``."""
        d = row_norms(corr.apply(c) - r)
        used_o, used_r, out = set(), set(), []
        for j in np.argsort(d, kind="stable").tolist():
            if d[j] > tol:
                break
            p = pairs[j]
            if not ok[j] or p.obs_key in used_o or p.record in used_r:
                continue
            used_o.add(p.obs_key)
            used_r.add(p.record)
            out.append(j)
        return out

    def _refine(self, corr: Correction, members: list[int], c, r, c2, r2, ok, pairs, cfg) -> tuple[Correction, list[int]]:
        """Least-squares correction on the inliers (rotation only when they span a baseline), re-scored."""
        if len(members) < 2:
            return corr, members
        m = np.asarray(members)
        yaw = 0.0
        if cfg.relocalisation.max_yaw_deg > 0 and len(members) >= 3:
            cm, rm = c2[m], r2[m]
            pc, pr = cm - np.add.reduce(cm, axis=0) / len(m), rm - np.add.reduce(rm, axis=0) / len(m)  # centred (mean)
            if float(np.max(np.linalg.norm(pc[:, None] - pc[None], axis=2))) >= cfg.relocalisation.min_baseline_m:
                H = pc.T @ pr  # 2D Kabsch: angle maximising the alignment of the centred sets
                yaw = math.atan2(H[0, 1] - H[1, 0], H[0, 0] + H[1, 1])
                if abs(yaw) > math.radians(cfg.relocalisation.max_yaw_deg):
                    return corr, members
        if yaw == 0.0:  # R @ v is v: the offsets' mean
            shift = np.add.reduce((r[m] - corr.pivot_w) - (c[m] - corr.pivot_w), axis=0) / len(members)
        else:
            R = rotation_about_axis(corr.up, yaw)
            shift = np.add.reduce(np.array([r[j] - corr.pivot_w - R @ (c[j] - corr.pivot_w) for j in members]),
                                  axis=0) / len(members)  # their mean
        new = Correction(yaw, corr.pivot_w, shift, corr.up)
        new_members = self._inliers(new, c, r, ok, pairs, cfg.relocalisation.tol_m)
        return (new, new_members) if len(new_members) >= len(members) else (corr, members)

