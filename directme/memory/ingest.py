"""Per-frame update of the object table: validate and lift, apply matches, moves, merges, gone checks."""
from __future__ import annotations

import functools
import logging
import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..errors import InvalidInputError
from ..geometry import mask_box, vector_norm
from ..types import FramePerception
from .config import MemoryConfig
from .appearance import takes_colour, update_colour
from .association import Match, Obs, co_observed, match_frame, tentative
from .keyframes import consider_keyframe, visibility_score
from .extent import measure
from .map import FrameLift, VoxelSet
from .objects import ObjectRecord
from .presence import depth_tol, scene_depth_at, update_seen, views_without
from .snapshot import KeyframeRef

if TYPE_CHECKING:
    from .component import FrameStep
    from .object_store import ObjectStore

log = logging.getLogger("directme.memory")


def validate(fp: FramePerception, latest_t_s: float, cfg: Optional[MemoryConfig] = None,
             embedding_dim: Optional[int] = None) -> Optional[int]:
    """Everything that could make the update fail, checked before anything is changed: the frame's geometry,
    its time, with ``cfg`` the number of instances (``map.max_instances_per_frame``) and the embeddings (one
    length in the frame, ``embedding_dim`` when the memory already holds embeddings; finite, of finite norm).
    Returns the embedding length the memory has after this frame."""
    if not isinstance(fp, FramePerception):
        raise InvalidInputError(f"SpatialMemory.update expects a FramePerception, got {type(fp).__name__}")
    fp.validate()
    f = fp.frame
    if f.t_s < latest_t_s:
        raise InvalidInputError(
            f"frame {f.index} at t={f.t_s:.3f}s is older than the memory's latest frame ({latest_t_s:.3f}s); "
            "frames must arrive with non-decreasing timestamps (sort the stream or start a new memory)")
    d = f.depth_m
    # the smallest and largest value that is not NaN (NaN: no such value): two passes over the depth map
    lo, hi = (np.fmin.reduce(d, axis=None), np.fmax.reduce(d, axis=None)) if d.size else (math.nan, math.nan)
    if lo < 0 or hi == math.inf:
        raise InvalidInputError(f"frame {f.index} at t={f.t_s:.3f}s: depth has negative or infinite values "
                                "(use 0 or NaN for invalid pixels)")
    pose_only = f.pose_only and not fp.instances  # declared path-only frame (Frame.pose_only: perception aria_gt)
    if not pose_only and not hi > 0:
        raise InvalidInputError(f"frame {f.index} at t={f.t_s:.3f}s: depth has no valid pixel (all NaN or 0); "
                                "check the depth backend output or drop the frame")
    if cfg is not None and len(fp.instances) > cfg.map.max_instances_per_frame:
        raise InvalidInputError(f"frame {f.index} at t={f.t_s:.3f}s has {len(fp.instances)} instances, more than "
                                f"memory.map.max_instances_per_frame={cfg.map.max_instances_per_frame}: keep the "
                                "detector's best ones (or raise the bound)")
    return _check_embeddings(fp, embedding_dim)


def _check_embeddings(fp: FramePerception, dim: Optional[int]) -> Optional[int]:
    """The frame's embeddings all of one length (the memory's ``dim`` if it has one), finite and of finite
    norm (an embedding is normalised and summed with its object's). Returns the length after this frame."""
    f = fp.frame
    for inst in fp.instances:
        e = inst.embedding
        if e is None:
            continue
        where = f"frame {f.index} at t={f.t_s:.3f}s: instance {inst.track_id} ({inst.label}): embedding"
        if e.ndim != 1 or e.dtype.kind not in "iuf":
            raise InvalidInputError(f"{where} must be a 1-D vector of real numbers, got shape {e.shape} "
                                    f"dtype {e.dtype}")
        if dim is not None and len(e) != dim:
            raise InvalidInputError(f"{where} has {len(e)} values, but the memory's embeddings have {dim}: one "
                                    "embedding model per memory (start a new memory to change it)")
        with np.errstate(over="ignore", invalid="ignore"):
            norm = float(np.linalg.norm(e.astype(np.float64)))
        if not math.isfinite(norm) or norm <= 0:
            raise InvalidInputError(f"{where} must be finite with a finite, non-zero norm (got norm {norm})")
        dim = len(e)
    return dim


def lift_instances(fp: FramePerception, objs: ObjectStore, up_world: np.ndarray) -> list[Obs]:
    """World points of each instance (strided; thin objects seen edge-on thickened across ``up_world``);
    instances with too few valid points are skipped."""
    cfg, f = objs.cfg, fp.frame
    lift = FrameLift.compute(f.depth_m, f.intrinsics, f.T_world_cam, cfg.map)
    out = []
    for inst in fp.instances:
        pts = lift.instance_points(inst.mask, up_world)
        if len(pts) < cfg.map.min_points:
            log.debug("frame %d t=%.3fs: instance %d (%s) skipped: %d valid points < min_points=%d",
                      f.index, f.t_s, inst.track_id, inst.label, len(pts), cfg.map.min_points)
            continue
        out.append(Obs.make(inst, objs.label_id(inst.label), pts, cfg))
    return out


def _box(mask: np.ndarray) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = mask_box(mask)
    return (float(x0), float(y0), float(x1), float(y1))


def ingest_frame(objs: ObjectStore, step: FrameStep) -> None:
    """This frame's observations matched to the objects (association.py) and applied - new objects, moves,
    carried objects, keyframes - duplicates merged, and the presence belief updated from what the frame shows
    and does not show (presence.py); ``step.matched_track_ids``: the tracker ids of the instances used."""
    fp, t, ego, pose, cfg, up = step.fp, step.t_s, step.ego, step.pose, objs.cfg, step.up_world
    obs = step.observations()
    a = cfg.association
    search = max(a.reentry_radius_m, a.max_reentry_m, a.search_min_m)
    walked: Callable[[ObjectRecord], float] = lambda rec: ego.walked_between(rec.obs_frame[-1])  # noqa: E731
    matches = match_frame(obs, t, cfg, [objs.tracked(o.inst.track_id) for o in obs],
                          [objs.nearby(o.centre_w, search) for o in obs], walked)
    for m in matches:
        apply_match(m, fp, step.frame_pos, objs)
    step.matched_track_ids = list(dict.fromkeys(m.obs.inst.track_id for m in matches))
    _merge_duplicates(matches, objs, t)
    for m in matches:  # a new object confirmed just now may be one the wearer carried here
        rec = objs.tracked(m.obs.inst.track_id)
        if rec is not None and rec.obs_t[-1] == t:
            link_carried(rec, objs, t, lambda i, p, until=math.inf: ego.nearest_since(i, p, up, until))
    seen: dict[int, float] = {}  # surviving record index -> best score of its sightings this frame
    for m in matches:
        rec = objs.tracked(m.obs.inst.track_id)
        if rec is not None and (not m.far or not rec.pending):  # a far view that confirmed a move: seen there
            seen[rec.index] = max(seen.get(rec.index, 0.0), float(m.obs.inst.score))
    update_seen(seen, objs, t)
    seen_here = [(m.obs.label_id, m.obs.centre_w, objs.tracked(m.obs.inst.track_id).index) for m in matches]
    stand_ins: list[tuple[ObjectRecord, int]] = []
    moved_since = functools.cache(lambda s: pose.since_seen(s, t))  # by last sighting time: one call each a frame
    settle_gone(views_without(fp, seen, objs, seen_here, walked, stand_ins,
                              lambda rec: ego.nearest_since(rec.obs_frame[-1], rec.position, up),
                              lambda rec: moved_since(rec.last_seen_s)),
                objs, t)
    fold_stand_ins(stand_ins, objs, t)


def _merge_duplicates(matches: list[Match], objs: ObjectStore, t: float) -> None:
    """One instance covering a second node (never seen beside the first): the two are one object."""
    for m in matches:
        for other in m.also:
            keep = objs.survivor(m.record)
            other = objs.survivor(other)
            if keep is other or co_observed(keep, other):
                continue
            first, second = (keep, other) if keep.index < other.index else (other, keep)
            objs.merge(first, second, t)


def apply_match(m: Match, fp: FramePerception, frame_pos: int, objs: ObjectStore) -> ObjectRecord:
    cfg, t, o = objs.cfg, fp.t_s, m.obs
    rec = m.record
    if rec is None:
        rec = objs.new_record()
        rec.placements_s.append(t)
    rec.add_observation(t, frame_pos, o.label_id, o.inst.score)
    if not m.far and takes_colour(len(rec.obs_t), cfg.gone):
        update_colour(rec, fp.frame.rgb, o.inst.mask, cfg.gone)
    if o.embedding is not None:
        e = o.embedding if rec.embedding is None else rec.embedding + o.embedding
        rec.embedding = e / max(np.linalg.norm(e), 1e-12)
    objs.track_map[o.inst.track_id] = rec.index
    if carry(rec, o, fp, objs):
        return rec
    if m.far:
        _pending_move(rec, o, objs, t)
    else:
        rec.pending, rec.pending_voxels = [], VoxelSet()
        _measure(rec, o, fp, cfg)
        carved = carve(rec, o, fp, objs)
        # a view beside the node adds its points only once the old place is seen through (then it is where it is)
        added = (carved or not m.beside) and rec.voxels.add(o.voxels, cfg.map.max_voxels_per_object)
        grew = added or carved
        if not rec.states:
            rec.set_state(t, first_seen_s=t)
        if grew:
            objs.reshape(rec, t)
        else:
            rec.set_state(t, label_id=rec.label_id_from_votes())
        if not carved:
            rec.moving = False
        elif not rec.moving and vector_norm(rec.position - rec.placement_origin()) > cfg.association.track_jump_m:
            rec.placements_s.append(t)  # carried in view: one new placement, following it until it rests
            rec.set_state(t, placement=len(rec.placements_s) - 1)
            rec.moving = True
    if not m.far:
        _keyframe(rec, o, fp, frame_pos, objs)
    return rec


def _measure(rec: ObjectRecord, o: Obs, fp: FramePerception, cfg: MemoryConfig) -> None:
    """The object's size as this view shows it, added to its measured extent (memory/extent.py)."""
    f = fp.frame
    measure(rec.sizes, fp.t_s, o.inst.mask, f.depth_m, f.intrinsics, f.T_world_cam, o.centre_w, cfg.map)


def carry(rec: ObjectRecord, o: Obs, fp: FramePerception, objs: ObjectStore) -> bool:
    """Carried by the wearer: seen within ``association.carry_max_depth_m`` in front of the camera, at about
    the same camera-frame place as at its sighting up to ``carry_window_s`` before (``carry_cam_tol_m``),
    while it moved at least ``carry_min_move_m`` in the world - it moves with the camera. While carried its
    position follows the wearer (no points added, no placement, no evidence of absence at its old place);
    the first sighting away from the camera or standing still ends the carry and starts a new placement
    there (put down). Returns whether this sighting was one of these (the caller adds nothing more)."""
    a, f = objs.cfg.association, fp.frame
    c_cam = (o.centre_w - f.T_world_cam.t) @ f.T_world_cam.R
    ref, rec.carry_ref = rec.carry_ref, (fp.t_s, c_cam, np.asarray(o.centre_w, dtype=np.float64).copy())
    with_camera = (0.0 < c_cam[2] <= a.carry_max_depth_m and ref is not None and fp.t_s - ref[0] <= a.carry_window_s
                   and float(vector_norm(c_cam - ref[1])) <= a.carry_cam_tol_m)
    if with_camera and (rec.carried or float(vector_norm(o.centre_w - ref[2])) >= a.carry_min_move_m):
        if not rec.carried:
            rec.carry_t.append(fp.t_s)  # picked up
        rec.pending, rec.pending_voxels, rec.moving = [], VoxelSet(), False
        if not rec.states:
            rec.set_state(fp.t_s, first_seen_s=fp.t_s)
        objs.follow(rec, fp.t_s, o.centre_w)
        return True
    if not rec.carried:
        return False
    rec.carry_t.append(fp.t_s)  # put down here
    voxels = VoxelSet()
    voxels.add(o.voxels, objs.cfg.map.max_voxels_per_object)
    objs.place_anew(rec, voxels, fp.t_s, fp.t_s)
    _keyframe(rec, o, fp, int(rec.obs_frame[-1]), objs)
    return True


def carve(rec: ObjectRecord, o: Obs, fp: FramePerception, objs: ObjectStore) -> bool:
    """Drop the object's voxels this frame sees through - projected outside the instance's mask onto
    scene depth clearly farther than them (free space: the object is not, or no longer, there: the place
    it was carried from, a view shifted by pose drift) - when they are at least half of its voxels in
    view (a rim seen through because of mask or depth noise drops nothing). Returns whether any was."""
    cfg = objs.cfg
    if not len(rec.voxels):
        return False
    idx, ui, vi, zi, d = scene_depth_at(rec.voxels.pts, fp.frame, 0, cfg.map.min_cam_depth_m)
    if not len(idx):
        return False
    through = ~o.inst.mask[vi, ui] & np.isfinite(d) & (d > zi + depth_tol(zi, cfg))
    if through.sum() < max(cfg.association.carve_min_points, cfg.association.carve_min_frac * len(idx)):
        return False
    rec.voxels.remove(idx[through])
    return True


def _pending_move(rec: ObjectRecord, o: Obs, objs: ObjectStore, t: float) -> None:
    cfg = objs.cfg
    if rec.pending and vector_norm(rec.pending[-1][1] - o.centre_w) > cfg.association.track_jump_m / 2:
        rec.pending, rec.pending_voxels = [], VoxelSet()
    rec.pending.append((t, o.centre_w))
    rec.pending_voxels.add(o.voxels, cfg.map.max_voxels_per_object)
    # seen within reach in front of the camera it may be in the wearer's hands: one more sighting tells (carry)
    in_hand = rec.carry_ref is not None and rec.carry_ref[1][2] <= cfg.association.carry_max_depth_m
    if len(rec.pending) >= cfg.association.move_confirm + in_hand:
        start, voxels = rec.pending[0][0], rec.pending_voxels
        rec.pending, rec.pending_voxels = [], VoxelSet()
        objs.place_anew(rec, voxels, start, t)


def _keyframe(rec: ObjectRecord, o: Obs, fp: FramePerception, frame_pos: int, objs: ObjectStore) -> None:
    f = fp.frame
    gap = objs.cfg.keyframes.min_gap_s
    if any(abs(f.t_s - k.ref.t_s) < gap for k in rec.keyframes if k.removed_s == math.inf):
        return
    box = o.inst.box_xyxy if o.inst.box_xyxy is not None else _box(o.inst.mask)
    ref = KeyframeRef(f.t_s, (int(f.index) if f.index >= 0 else frame_pos), tuple(float(v) for v in box),
                      visibility_score(o.inst.mask, o.inst.score, objs.cfg.keyframes))
    view = f.T_world_cam.t - rec.position
    view = view / max(vector_norm(view), 1e-9)
    changed = consider_keyframe(rec, ref, view, objs.cfg)
    if changed:
        objs.images.acquire(ref.frame_index, f.rgb)
        for victim in changed[1:]:
            objs.images.release(victim.ref.frame_index)


def settle_gone(gone: list[ObjectRecord], objs: ObjectStore, t_s: float) -> None:
    """Objects that became gone this frame (presence.py): a tentative one explained by a confirmed
    neighbour was a misplaced or confused view of it, and is folded into it (without its points)."""
    for rec in gone:
        if rec.merged_into is None and tentative(rec, objs.cfg):
            keep = _explained_by(rec, objs)
            if keep is not None:  # a confused label's track may be another object's: not bound to the neighbour
                objs.merge(keep, rec, t_s, with_voxels=False,
                      with_tracks=keep.label_id_from_votes() == rec.label_id_from_votes())


def _explained_by(rec: ObjectRecord, objs: ObjectStore) -> Optional[ObjectRecord]:
    """The confirmed object next to a tentative node whose place was seen empty: a node seen once and
    then contradicted was a confused or misplaced view of its neighbour (its centre within
    ``reentry_radius_m`` of the neighbour's points; one of its label if there is one), not an object that
    left. None when two neighbours are about as near (which one it was is unknown)."""
    cfg = objs.cfg
    near = []
    for other in objs.nearby(rec.position, cfg.association.max_reentry_m):
        if (other is rec or tentative(other, cfg) or not other.state.present or not len(other.voxels)
                or co_observed(other, rec)):
            continue
        d = float(np.sqrt(np.min(np.sum((other.voxels.pts - rec.position.astype(np.float32)) ** 2, axis=1))))
        if d < cfg.association.reentry_radius_m:
            near.append((d, other))
    label = rec.label_id_from_votes()
    same = [c for c in near if c[1].label_id_from_votes() == label]
    near = sorted(same or near, key=lambda c: c[0])
    if not near or (len(near) > 1 and near[1][0] - near[0][0] < cfg.association.ambiguous_m):
        return None
    return near[0][1]


def link_carried(rec: ObjectRecord, objs: ObjectStore, t_s: float, nearest_since: Callable[..., float]) -> bool:
    """A new object just confirmed (seen ``association.confirm_obs`` times), first seen with the wearer at hand's reach of
    it (``gone.hand_reach_m``: put down), elsewhere than the one remembered object of its label that the wearer
    reached (came within ``gone.hand_reach_m`` along the ground: ``nearest_since(ego frame, point[, until])``) after its
    last sighting, at most ``association.link_window_s`` before, is that object, carried here: its old place not seen
    since (nothing said it left), or seen empty only after the wearer had reached it (taken by the wearer, not
    removed by someone else). The new node is folded into it as a new placement. Two or more such candidates:
    which one it is is unknown, nothing is done. Returns whether it was linked."""
    a, g = objs.cfg.association, objs.cfg.gone
    if a.link_window_s <= 0 or len(rec.obs_t) != a.confirm_obs or rec.merges or len(rec.placements_s) != 1:
        return False
    if nearest_since(int(rec.obs_frame[0]), rec.position) > g.hand_reach_m:
        return False  # put down by the wearer: first seen with the wearer at hand's reach
    label, first = rec.label_id_from_votes(), rec.obs_t[0]
    found = []
    for other in objs.records:
        if (other is rec or other.merged_into is not None or not other.obs_t or other.carried
                or not 0.0 < first - other.last_seen_s <= a.link_window_s
                or tentative(other, objs.cfg) or other.label_id_from_votes() != label):
            continue
        if float(np.linalg.norm((other.position - rec.position)[:2])) <= max(a.track_jump_m, a.max_reentry_m):
            continue  # near its place: association's call (a duplicate, or a small move)
        gone_s = math.inf if other.state.present else other.state.gone_since_s
        if (not a.link_taken and gone_s < math.inf) or math.isnan(gone_s):
            continue  # gone, or never confirmed present
        if co_observed(other, rec) or nearest_since(int(other.obs_frame[-1]), other.position, gone_s) > g.hand_reach_m:
            continue
        found.append(other)
    if len(found) != 1:
        return False
    keep = found[0]
    voxels = VoxelSet()
    voxels.add(rec.voxels, objs.cfg.map.max_voxels_per_object)
    objs.merge(keep, rec, t_s, with_voxels=False)
    keep.pending, keep.pending_voxels, keep.moving = [], VoxelSet(), False
    objs.place_anew(keep, voxels, first, t_s)
    log.debug("t=%.3fs: %s is %s carried to %s", t_s, rec.node_id, keep.node_id, np.round(keep.position, 2))
    return True


def fold_stand_ins(stand_ins: list[tuple[ObjectRecord, int]], objs: ObjectStore, t_s: float) -> None:
    """An object whose place was in view while an instance of its label matched to another node stood in for
    it (presence.views_without) ``association.stand_in_merge`` times, and never seen in one frame with that
    node, is that node seen twice (a duplicate left by pose drift): folded into it, without its misplaced
    points. Two objects of a label near each other are seen together now and then; an object and its
    duplicate never (the detector reports one instance of it)."""
    n_min = objs.cfg.association.stand_in_merge
    if n_min <= 0:
        return
    for rec, k in stand_ins:
        rec, keep = objs.survivor(rec), objs.survivor(objs.records[k])
        if (rec is keep or rec.merged_into is not None or rec.stood_in_for.get(k, 0) < n_min
                or rec.label_id_from_votes() != keep.label_id_from_votes() or co_observed(rec, keep)):
            continue
        objs.merge(keep, rec, t_s, with_voxels=False)
