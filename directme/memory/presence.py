"""Presence as a belief: per object, the log-odds that it is at its place, updated every frame.

Evidence (``memory.gone``, config.py):
- seen (an instance matched to it): a first sighting starts the belief at the detector's score (or at
  the prior plus one hit); each later sighting adds ``log(p_detect / p_false)``;
- in view and not seen: the object's points project inside the image, in the detector's range, and the
  line of sight reaches them (the scene is not nearer: not occluded). If the scene is clearly farther
  (free space where the object was: seen through) the view adds ``empty_logodds``, unless the image
  still shows the object's colours there (appearance.still_shows: its points are off its surface); otherwise
  (something is there, but the detector did not report this object) it adds ``log((1 - p_d) / (1 - p_false))`` with
  ``p_d`` the expected detection rate: ``p_detect`` scaled by the object's size in pixels and the share
  of it in view;
- out of view or occluded: nothing (the object is not observed, which is not evidence of absence);
- things fixed to the building or heavy (``gone.fixed_labels``: a sink, a wall clock) seldom leave: the
  evidence of absence against them counts ``gone.fixed_absence_scale`` times (a lower prior of removal).

The belief saturates at ``max_logodds`` / ``min_logodds``. An object is present while its probability is
at least ``present_p``: the one definition of "gone" used by memory (state rows, the timeline), query and
answerers. Every belief change is logged with its frame time (ObjectRecord.pres_t/pres_l), so the belief
as of any past t is read back exactly.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

import numpy as np

from ..types import Frame, FramePerception
from .appearance import still_shows
from .association import co_observed
from .config import GoneConfig, MemoryConfig
from .objects import ObjectRecord

if TYPE_CHECKING:
    from .object_store import ObjectStore


def scene_depth_at(pts_w: np.ndarray, f: Frame, margin_px: int, min_z_m: float) -> tuple[np.ndarray, ...]:
    """World points projected into the frame: (indices of those in front of the camera and at least
    ``margin_px`` inside the image and ``min_z_m`` in front, their pixel columns and rows, their depth, the scene depth there)."""
    K, T = f.intrinsics, f.T_world_cam
    p = (pts_w - T.t) @ T.R  # a float32 point is widened exactly, as by astype(float64)
    z = p[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):  # K.project's arithmetic, without stacking (u, v)
        u, v = np.round(K.fx * p[:, 0] / z + K.cx), np.round(K.fy * p[:, 1] / z + K.cy)  # pixel centres at integers
    idx = np.flatnonzero((z > min_z_m) & (u >= margin_px) & (u < K.width - margin_px) & (v >= margin_px)
                         & (v < K.height - margin_px))
    ui, vi = u[idx].astype(int), v[idx].astype(int)
    return idx, ui, vi, z[idx], f.depth_m[vi, ui]


def depth_tol(z: np.ndarray, cfg: MemoryConfig) -> np.ndarray:
    """How much farther than a point the scene must be for the point's place to count as seen through."""
    return cfg.gone.depth_tol_m + cfg.gone.depth_rel * z


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def sighting(rec: ObjectRecord, score: float, cfg: GoneConfig) -> float:
    """The belief after one more sighting with detector score ``score``."""
    hit = math.log(cfg.p_detect / cfg.p_false)
    s = min(max(float(score), cfg.score_clip), 1.0 - cfg.score_clip)
    first = logit(cfg.prior) + (logit(s) if cfg.first_from_score else hit)
    l0 = rec.belief
    # seen now, it is there now: never below what a first sighting says (it may have come back)
    l0 = first if math.isnan(l0) else max(l0 + hit, first)
    return min(max(l0, cfg.min_logodds), cfg.max_logodds)


def detection_rate(size_px: float, visible: float, depth_m: float, cfg: GoneConfig) -> float:
    """Expected chance that the detector reports an object of ``size_px`` pixels across with a share
    ``visible`` of it in view and unoccluded, at ``depth_m`` (0 outside the detector's range)."""
    near, far = cfg.detect_range_m
    if not near <= depth_m <= far:
        return 0.0
    return cfg.p_detect * min(1.0, size_px / cfg.full_px) * min(1.0, visible)


def absence(p_d: float, cfg: GoneConfig) -> float:
    """Log-odds added by a view that should have shown the object with chance ``p_d`` and did not."""
    return math.log((1.0 - p_d) / (1.0 - cfg.p_false))


def in_view_of(objs: ObjectStore, idx: np.ndarray, f: Frame, slack_px: float = 0.0) -> tuple[np.ndarray, ...]:
    """(centres in the camera frame, their depth (at least 1e-6), size in pixels, whether in view) of the records
    ``idx``: in front of the camera, at least ``gone.min_px`` across and overlapping the image (``slack_px``: a
    looser test by this many pixels, for a prefilter that must keep every object the exact test keeps)."""
    K, T = f.intrinsics, f.T_world_cam
    c_cam = (objs.live_pos[idx] - T.t) @ T.R
    z_c = np.maximum(c_cam[:, 2], 1e-6)
    size_px = objs.live_size[idx] * K.fx / z_c
    u_c, v_c = K.fx * c_cam[:, 0] / z_c + K.cx, K.fy * c_cam[:, 1] / z_c + K.cy
    reach = size_px + slack_px
    in_view = (c_cam[:, 2] > objs.cfg.map.min_cam_depth_m - 1e-3 * slack_px) & (reach >= objs.cfg.gone.min_px) \
        & (u_c > -reach) & (u_c < K.width + reach) & (v_c > -reach) & (v_c < K.height + reach)
    return c_cam, z_c, size_px, in_view


def maybe_in_view(objs: ObjectStore, f: Frame) -> np.ndarray:
    """Ascending indices of the live records, not yet certainly gone, that may be in view of ``f``: vectorised
    passes over the live columns, no Python work per object of the day. First the depth alone (in front of the
    camera and near enough to span ``gone.min_px``) on every such record, then ``in_view_of`` on those left; both
    loosened by a pixel and a millimetre, so that rounding never drops one the exact test (run by the caller on
    the records kept) keeps."""
    n, gcfg, K, T = objs.n_records, objs.cfg.gone, f.intrinsics, f.T_world_cam
    z = objs.live_pos[:n] @ T.R[:, 2] - float(T.t @ T.R[:, 2])
    near_enough = objs.live_size[:n] * K.fx >= (gcfg.min_px - 1.0) * z
    idx = np.flatnonzero(objs.live_alive[:n] & (objs.live_belief[:n] > gcfg.min_logodds)  # gone ones too
                         & (z > objs.cfg.map.min_cam_depth_m - 1e-3) & near_enough)
    return idx[in_view_of(objs, idx, f, slack_px=1.0)[3]] if len(idx) else idx


def update_seen(seen: Mapping[int, float], objs: ObjectStore, t_s: float) -> None:
    """Sightings of this frame: record index -> best detector score."""
    cfg = objs.cfg.gone
    for i, score in seen.items():
        rec = objs.survivor(objs.records[i])
        rec.first_miss_s = math.inf
        objs.set_presence(rec, t_s, sighting(rec, score, cfg))


def views_without(fp: FramePerception, seen: Mapping[int, float], objs: ObjectStore,
                  seen_here: Sequence[tuple[int, np.ndarray, int]] = (),
                  walked: Callable[[ObjectRecord], float] = lambda rec: 0.0,
                  stand_ins: Optional[list[tuple[ObjectRecord, int]]] = None,
                  approach: Optional[Callable[[ObjectRecord], float]] = None,
                  since_seen: Optional[Callable[[ObjectRecord], Optional[np.ndarray]]] = None) -> list[ObjectRecord]:
    """Absence evidence for the unseen objects (present, or gone but not yet certainly) this frame should
    have shown. A view is void for an object when this frame has an instance of its label (``seen_here``:
    label id, world centre, index of the record it matched) within its drift allowance
    (``association.reentry_radius_m`` + ``drift_per_m`` x metres ``walked`` since it was last seen, at most
    ``max_reentry_m``): that is likely the object itself, seen displaced by pose drift or matched to a
    duplicate, not its absence - unless the record it matched was once seen beside the object in one frame
    (``association.co_observed``): that is another object of its label, and the view counts. When the object
    was in full enough view there, the record that instance matched stood in for it once more
    (``ObjectRecord.stood_in_for``; appended to ``stand_ins`` as (object, stand-in index)): two objects near each other are seen together now and then, one object and its
    duplicate never. ``approach(rec)``: the wearer's nearest approach to the object along the ground since
    it was last seen (default: the camera's distance now), for ``gone.just_seen_s``. ``since_seen(rec)``: a
    transform of the object's points (memory frame) to where the input's own motion since its last sighting puts
    them (``PoseCorrector.since_seen``), or None: a correction that jumped since a recent sighting must not
    slide the view off a thin object and read its place as free space. Returns the objects
    that are not present after this frame's evidence against them (the caller decides whether a tentative one was a misplaced view of a neighbour)."""
    cfg, gcfg, f = objs.cfg, objs.cfg.gone, fp.frame
    idx = np.asarray([i for i in maybe_in_view(objs, f).tolist() if i not in seen and not objs.records[i].pending
                      and not objs.records[i].carried], dtype=np.int64)  # a carried object is with the wearer
    if not len(idx):
        return []
    K, T = f.intrinsics, f.T_world_cam
    c_cam, z_c, size_px, in_view = in_view_of(objs, idx, f)
    centres = objs.live_pos[idx]  # each record's position, mirrored in the live columns (a copy)
    views: list[tuple[ObjectRecord, int, np.ndarray, float, float]] = []  # (record, n points, centre, size px, depth)
    parts = []
    for j in np.flatnonzero(in_view).tolist():
        rec = objs.records[int(idx[j])]
        pts = rec.voxels.pts[:: max(1, len(rec.voxels) // gcfg.view_points)]
        if not len(pts):
            continue
        position, size_j, z_j = centres[j], float(size_px[j]), float(z_c[j])
        D = since_seen(rec) if since_seen is not None else None
        if D is not None:
            pts = pts @ D[:3, :3].T + D[:3, 3]
            position = D[:3, :3] @ position + D[:3, 3]
            z_j = max(float((position - T.t) @ T.R[:, 2]), 1e-6)
            size_j = float(objs.live_size[idx[j]]) * K.fx / z_j
        views.append((rec, len(pts), position, size_j, z_j))
        parts.append(pts)
    if not views:
        return []
    # every view's points projected at once; each view's share of them is a slice (its points stay in order)
    inside_all, ui_all, vi_all, zi_all, d_all = scene_depth_at(np.concatenate(parts), f, gcfg.margin_px,
                                                               cfg.map.min_cam_depth_m)
    tol_all = depth_tol(zi_all, cfg)
    reach_all = np.isfinite(d_all) & (d_all > 0) & (d_all >= zi_all - tol_all)  # line of sight reaches the point
    owner_end = np.cumsum([n for _, n, _, _, _ in views])
    bounds = np.searchsorted(inside_all, np.concatenate([[0], owner_end])).tolist()
    reached = np.concatenate([[0], np.cumsum(reach_all)])[bounds].tolist()
    became_gone = []
    a = cfg.association
    for k, (rec, n_pts, position, size_j, z_j) in enumerate(views):
        s, e = bounds[k], bounds[k + 1]
        n_reach = reached[k + 1] - reached[k]
        visible = n_reach / n_pts
        if s == e or n_reach < gcfg.min_view_points or visible < gcfg.min_visible:
            continue  # not in view, or occluded: says nothing
        if seen_here:
            label = rec.label_id_from_votes()
            reach_m = min(a.reentry_radius_m + a.drift_per_m * walked(rec), a.max_reentry_m)
            hits = [i for lab, c, i in seen_here if lab == label and float(np.linalg.norm(c - position)) <= reach_m
                    and not co_observed(rec, objs.survivor(objs.records[i]))]  # another object seen beside it before
            if hits:
                stand_in = next((i for i in hits if i != rec.index), None)
                if stand_in is not None:
                    rec.stood_in_for[stand_in] = rec.stood_in_for.get(stand_in, 0) + 1
                    if stand_ins is not None:
                        stand_ins.append((rec, stand_in))
                continue
        reach, zi, d = reach_all[s:e], zi_all[s:e], d_all[s:e]
        empty_tol = tol_all[s:e] + gcfg.empty_rel * zi  # depth error grows with depth: free space must be clear of it
        if np.mean(d[reach] > zi[reach] + empty_tol[reach]) >= gcfg.min_empty and \
                not still_shows(rec, f.rgb, ui_all[s:e][reach], vi_all[s:e][reach], gcfg):  # its colours: a miss
            delta = gcfg.empty_logodds * min(1.0, visible / gcfg.full_view)
        else:
            p_d = detection_rate(size_j, visible, z_j, gcfg)
            if p_d <= gcfg.p_false:
                continue
            delta = absence(p_d, gcfg)
        if objs.is_fixed(rec.label_id_from_votes()):
            delta *= gcfg.fixed_absence_scale
        if f.t_s - rec.last_seen_s <= gcfg.just_seen_s and (
                approach(rec) if approach is not None else z_j) > gcfg.hand_reach_m:
            delta *= gcfg.just_seen_absence_scale  # seen a moment ago, the wearer never within reach since: a miss
        rec.first_miss_s = min(rec.first_miss_s, f.t_s)
        logodds = max(rec.belief + delta, gcfg.min_logodds)
        objs.set_presence(rec, f.t_s, logodds)
        if not rec.state.present:
            became_gone.append(rec)
    return became_gone
