"""Landmark relocalisation: keep the map consistent when the input poses drift.

Odometry-style poses (visual odometry, chunked depth+pose networks) drift with distance walked: a room
revisited after minutes lands metres away from where it was mapped, its objects become duplicates and
ego-frame answers point the wrong way. Remembered objects are landmarks: when several instances of a
frame sit at one common offset from remembered objects of the same label that were not seen recently
(the wearer came back), that offset is the drift accumulated since, and the memory corrects it.

The correction ``C`` maps the input world frame into the memory's world frame; every frame's pose is
used as ``C @ T_world_cam``. It only ever changes from a frame's own evidence and past memory, so the
memory stays causal: earlier frames keep the poses they were stored with.

A consensus of at least ``reloc_min_support`` distinct labelled landmarks within ``reloc_tol_m`` of one
offset is required (one moved object, or a partial view of a large one, cannot move the map), the
offset must exceed ``reloc_min_shift_m`` (exact poses are never touched), and must be plausible for
the distance walked since those landmarks were seen.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..geometry import Pose
from ..types import FramePerception

if TYPE_CHECKING:
    from .association import Obs
    from .store import SpatialMemory

RECENT_S = 10.0  # landmarks seen this recently carry no drift information (they drift with the wearer)
MAX_EXTENT_M = 2.5  # larger objects are rarely seen whole: their instance centre is a poor landmark
EXTENT_RATIO = 0.0  # the instance's extent must be at least this fraction of the node's on every axis


def with_pose(fp: FramePerception, T_world_cam: Pose) -> FramePerception:
    """``fp`` with the frame's pose replaced (arrays shared, already validated)."""
    frame = copy.copy(fp.frame)
    object.__setattr__(frame, "T_world_cam", T_world_cam)
    out = copy.copy(fp)
    object.__setattr__(out, "frame", frame)
    return out


def _candidates(obs: Sequence["Obs"], t_s: float, tag: Optional[str], mem: "SpatialMemory") -> list[tuple[int, int, np.ndarray, float]]:
    """(obs index, record index, offset record - obs, allowed drift) for same-label landmark pairs."""
    cfg = mem.cfg
    out = []
    for i, o in enumerate(obs):
        if float(np.max(o.extent_m)) > MAX_EXTENT_M:
            continue
        for rec in mem.nearby(o.centre_w, cfg.reloc_search_m):
            st = rec.state
            # gone or pending-move nodes stay candidates: drift itself makes a place look empty or moved
            if (t_s - rec.last_seen_s <= RECENT_S or len(rec.obs_t) < 1
                    or rec.label_id_from_votes() != o.label_id or max(st.extent_m) > MAX_EXTENT_M):
                continue
            if EXTENT_RATIO > 0 and np.any(o.extent_m < EXTENT_RATIO * np.asarray(st.extent_m) - 2 * cfg.voxel_m):
                continue  # a partial view: its centre is not the object's
            seen_tag = mem.tags[int(mem.ego_tag[rec.obs_frame[-1]])]
            if tag is not None and seen_tag is not None and seen_tag != tag:
                continue  # last seen in another kind of place
            allowed = cfg.reloc_base_m + cfg.drift_per_m * mem.walked_since(rec)
            offset = np.asarray(st.position_w, dtype=np.float64) - o.centre_w
            if np.linalg.norm(offset) <= allowed:
                out.append((i, rec.index, offset, allowed))
    return out


def estimate_shift(obs: Sequence["Obs"], t_s: float, tag: Optional[str], mem: "SpatialMemory") -> Optional[np.ndarray]:
    """The translation (memory world frame) that re-aligns this frame with remembered landmarks, or None.

    Each same-label pair proposes an offset; an offset's support is the number of distinct observations
    and distinct records (one-to-one) within ``reloc_tol_m`` of it, counted with distinct labels. The best
    supported offset wins only if no far-away offset is supported as well (an ambiguous layout)."""
    cfg = mem.cfg
    cands = _candidates(obs, t_s, tag, mem)
    if len(cands) < cfg.reloc_min_support:
        return None
    offs = np.array([c[2] for c in cands])
    best: tuple[int, float, list[int]] = (0, 0.0, [])
    supports = []
    for k in range(len(cands)):
        close = np.flatnonzero(np.linalg.norm(offs - offs[k], axis=1) <= cfg.reloc_tol_m)
        close = close[np.argsort(np.linalg.norm(offs[close] - offs[k], axis=1))]
        used_o, used_r, labels, members = set(), set(), set(), []
        for j in close.tolist():
            i, r = cands[j][0], cands[j][1]
            if i in used_o or r in used_r:
                continue
            used_o.add(i)
            used_r.add(r)
            labels.add(obs[i].label_id)
            members.append(j)
        support = min(len(members), len(labels) + 1)  # repeated labels count once, plus one
        spread = float(np.linalg.norm(offs[members] - offs[k], axis=1).sum())
        supports.append((support, k))
        if support > best[0] or (support == best[0] and spread < best[1]):
            best = (support, spread, members)
    if best[0] < cfg.reloc_min_support:
        return None
    shift = offs[best[2]].mean(axis=0)
    for support, k in supports:  # another, clearly different offset with as much support: ambiguous
        if support >= best[0] and np.linalg.norm(offs[k] - shift) > 2 * cfg.reloc_tol_m:
            return None
    if np.linalg.norm(shift) < cfg.reloc_min_shift_m:
        return None
    members = [cands[j] for j in best[2]]
    aligned = sum(mem.records[r].voxels.overlap(obs[i].coarse) >= cfg.overlap_min for i, r, _, _ in members)
    if 2 * aligned >= len(members):
        return None  # the points already lie on the landmarks: partial views, not drift
    return shift
