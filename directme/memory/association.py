"""3D association of a frame's instances with remembered objects.

Evidence, strongest first: voxel overlap of the instance's points with a node's points, centre
distance (tight for every node; looser - "loose" - for nodes coming back after a while, to
absorb pose drift), label agreement (a node's vote share) and embedding similarity when both have one.
A tracker id bound to a node adds a bonus when the geometry agrees; an instance in or just beside its
tracked node's box is the same placement, and a loose match of another node does not override a track
seen in the last seconds. Farther away, the observation is a move candidate of its tracked node (kept
pending until confirmed). Matches are one-to-one per frame (greedy by score).
"""
from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Optional, Sequence

import numpy as np

from ..geometry import vector_norm
from ..types import InstanceObservation
from .config import MemoryConfig
from .map import VoxelSet, coarse_keys, frac_in, trimmed_box
from .objects import ObjectRecord


@dataclass(eq=False)
class Obs:
    """One instance lifted into the world, ready for association."""

    inst: InstanceObservation
    label_id: int
    points_w: np.ndarray
    voxels: VoxelSet
    centre_w: np.ndarray
    extent_m: np.ndarray
    embedding: Optional[np.ndarray]

    @cached_property
    def coarse(self) -> np.ndarray:
        return coarse_keys(self.voxels.keys)

    @staticmethod
    def make(inst: InstanceObservation, label_id: int, points_w: np.ndarray, cfg: MemoryConfig) -> "Obs":
        vox = VoxelSet.from_points(points_w, cfg.map.voxel_m)
        centre, extent = trimmed_box(points_w, cfg.map.obs_trim)
        emb = None
        if inst.embedding is not None:
            e = np.asarray(inst.embedding, dtype=np.float64).ravel()
            n = np.linalg.norm(e)
            emb = e / n if n > 0 else None
        return Obs(inst, label_id, points_w, vox, centre, extent, emb)


@dataclass(frozen=True)
class Match:
    obs: Obs
    record: Optional[ObjectRecord]  # None: a new object
    far: bool = False  # matched by tracker id only, far from the node: a move candidate
    beside: bool = False  # matched by tracker id just outside the node's box: an observation, its points not added
    also: tuple[ObjectRecord, ...] = ()  # other unmatched nodes this instance's points overlap: duplicates


def label_agrees(obs: Obs, rec: ObjectRecord, cfg: MemoryConfig) -> Optional[tuple[float, bool]]:
    """(semantic score >= 0, labels disagree); None when the embeddings disagree, or when the label
    disagrees and the instance is much larger than the node (a confused label on the same object, or
    a partial view of it, may still match when the geometry is strong)."""
    cos = None
    if obs.embedding is not None and rec.embedding is not None and len(rec.embedding) == len(obs.embedding):
        cos = float(obs.embedding @ rec.embedding)
        if cos < cfg.association.embed_min - cfg.association.embed_veto_margin:
            return None
    total = sum(rec.votes.values())
    share = rec.votes.get(obs.label_id, 0.0) / total if total > 0 else 0.0
    mismatch = share < cfg.association.label_share_min and not (cos is not None and cos >= cfg.association.embed_min)
    if mismatch:
        a, b = float(np.max(obs.extent_m)), max(rec.state.extent_m)
        if a > cfg.association.mismatch_size_ratio * b:
            return None
    return share + (cos if cos is not None else 0.0), mismatch


def geometric_score(obs: Obs, rec: ObjectRecord, t_s: float, cfg: MemoryConfig,
                    walked_m: float) -> Optional[tuple[float, bool]]:
    """(score, loose): centre distance within a size-dependent radius, or enough voxel overlap; None if
    neither. For a node not seen for a while the radius grows with the distance walked since (pose
    drift); ``loose`` says the match needed that allowance (weaker evidence than a tight match)."""
    st = rec.state
    dx = [a - b for a, b in zip(obs.centre_w.tolist(), st.position_w)]
    d = math.sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2])
    tight = cfg.association.match_radius_m + cfg.association.tight_extent_frac * max(st.extent_m)
    if d <= tight:
        return 2.0 - d / tight, False
    near = d <= 0.5 * (max(st.extent_m) + float(np.max(obs.extent_m))) + 2 * cfg.map.voxel_m
    ov = rec.voxels.overlap(obs.coarse) if near else 0.0
    if ov >= cfg.association.overlap_min:
        return ov, False
    if t_s - rec.last_seen_s > cfg.association.recent_s and not tentative(rec, cfg):  # a tentative node gets no drift allowance
        lim = min(cfg.association.reentry_radius_m + cfg.association.drift_per_m * walked_m, cfg.association.max_reentry_m)
        if d <= lim:
            return 2.0 - d / lim, True
    return None


def box_gap(obs: Obs, rec: ObjectRecord) -> float:
    """Distance (m) from the instance's centre to the node's box (0 inside it)."""
    st = rec.state
    gap = np.abs(obs.centre_w - np.asarray(st.position_w)) - 0.5 * np.asarray(st.extent_m)
    return float(vector_norm(np.maximum(gap, 0.0)))


def match_frame(obs: Sequence[Obs], t_s: float, cfg: MemoryConfig, tracked: Sequence[Optional[ObjectRecord]],
                nearby: Sequence[Sequence[ObjectRecord]], walked: Callable[[ObjectRecord], float]) -> list[Match]:
    """One-to-one matches of ``obs`` with records (``tracked[i]``: node bound to obs i's track id;
    ``nearby[i]``: live records near obs i; ``walked(rec)``: metres walked since rec was last seen)."""
    cands: list[tuple[float, int, int, ObjectRecord, str]] = []  # (score, instance index, record index, record, kind)
    geo_ok: list[set[int]] = [set() for _ in obs]  # per instance: records it matches geometrically
    for i, o in enumerate(obs):
        tr = tracked[i]
        live_track = tr is not None and t_s - tr.last_seen_s <= cfg.association.recent_s
        for rec in nearby[i]:
            sem = label_agrees(o, rec, cfg)
            geo = None if sem is None else geometric_score(o, rec, t_s, cfg, walked(rec))
            kind = "geo"
            if geo is None and rec is tr and sem is not None and (gap := box_gap(o, rec)) <= cfg.association.track_jump_m:
                # the tracked object seen in or beside its box: the same placement; beside it (a shifted view, or
                # an object being carried in small steps) its points would smear the object: not added
                geo, kind = (1.0, False), ("geo" if gap <= 2 * cfg.map.voxel_m else "beside")
            if geo is None:
                continue
            score, loose = geo
            if rec is not tr and loose and live_track:
                continue  # a drift-allowance match does not override a track seen seconds ago
            if sem[1] and rec is not tr and (loose or score < cfg.association.strong_score or tr is not None):
                continue  # another label: the node its track is bound to, or a strong, tight, untracked match
            geo_ok[i].add(rec.index)
            bonus = cfg.association.track_bonus if rec is tr else 0.0
            cands.append((score + cfg.association.semantic_weight * sem[0] + bonus, i, rec.index, rec, kind))
        if tr is not None and tr.index not in geo_ok[i] and label_agrees(o, tr, cfg) is not None:
            cands.append((0.0, i, tr.index, tr, "far"))
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    out: list[Optional[Match]] = [None] * len(obs)
    used: set[int] = set()
    for _, i, idx, rec, kind in cands:
        if out[i] is None and idx not in used:
            out[i] = Match(obs[i], rec, kind == "far", kind == "beside")
            used.add(idx)
    result = []
    for i, m in enumerate(out):
        if m is None:
            result.append(Match(obs[i], None))
            continue
        also = () if m.far else tuple(rec for rec in nearby[i] if rec.index not in used
                                      and covers(obs[i], rec, rec.index in geo_ok[i], cfg))
        result.append(Match(m.obs, m.record, m.far, m.beside, also))
    return result


def tentative(rec: ObjectRecord, cfg: MemoryConfig) -> bool:
    """Seen in fewer than ``confirm_obs`` frames (possibly a false or confused detection)."""
    return len(rec.obs_t) < cfg.association.confirm_obs


def covers(obs: Obs, rec: ObjectRecord, geo_ok: bool, cfg: MemoryConfig) -> bool:
    """Is ``rec`` a duplicate of the node ``obs`` matched? A geometric candidate when the instance's
    points overlap it; a tentative node of any label only when the overlap holds both ways."""
    if not (geo_ok or tentative(rec, cfg)) or rec.voxels.overlap(obs.coarse) < cfg.association.overlap_min:
        return False
    return geo_ok or frac_in(rec.voxels.coarse(), obs.coarse) >= cfg.association.overlap_min


def co_observed(a: ObjectRecord, b: ObjectRecord) -> bool:
    """Were the two ever seen as separate instances of one frame (then they are different objects)? The frames of
    each ascend (observations are logged in frame order): the shorter list is looked up in the longer by bisection,
    read in place, so an object seen for hours costs a log of its sightings, not a sort of them."""
    fa, fb = a.obs_frame, b.obs_frame
    if not len(fa) or not len(fb) or fa[-1] < fb[0] or fb[-1] < fa[0]:
        return False
    x, y = (np.frombuffer(f, dtype=f.typecode) if isinstance(f, array) else np.asarray(f) for f in (fa, fb))
    if len(x) > len(y):
        x, y = y, x
    return bool(np.any(y[np.minimum(np.searchsorted(y, x), len(y) - 1)] == x))
