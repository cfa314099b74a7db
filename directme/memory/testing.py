"""Hand-built scenes for memory tests and benchmarks: axis-aligned boxes rendered by ray casting.

Not a simulator (see directme.sim): just enough geometry to produce exact depth, masks and poses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from ..geometry import Intrinsics, Pose
from ..types import Frame, FramePerception, InstanceObservation


@dataclass(frozen=True)
class Box:
    obj_id: int
    label: str
    centre_w: tuple[float, float, float]
    size_m: tuple[float, float, float]


def look_at(eye_w: Sequence[float], target_w: Sequence[float], up_w: Sequence[float] = (0, 0, 1)) -> Pose:
    """Camera-to-world pose (OpenCV camera: x right, y down, z forward) looking from eye at target."""
    eye, tgt, up = (np.asarray(v, dtype=np.float64) for v in (eye_w, target_w, up_w))
    z = tgt - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return Pose.from_Rt(np.stack([x, y, z], axis=1), eye)


def render(boxes: Sequence[Box], T_world_cam: Pose, K: Intrinsics, floor_z: Optional[float] = 0.0):
    """Depth (H, W) metres along the optical axis and per-pixel box index (-1: none) of the scene."""
    h, w = K.shape_hw
    vs, us = np.mgrid[0:h, 0:w].astype(np.float64)
    d_cam = np.stack([(us - K.cx) / K.fx, (vs - K.cy) / K.fy, np.ones_like(us)], axis=-1).reshape(-1, 3)
    d_w = d_cam @ T_world_cam.R.T
    o = T_world_cam.t
    best = np.full(len(d_w), np.inf)
    idx = np.full(len(d_w), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d_w
        for i, b in enumerate(boxes):
            c, s = np.asarray(b.centre_w), np.asarray(b.size_m) / 2
            t1, t2 = (c - s - o) * inv, (c + s - o) * inv
            tn = np.nanmax(np.minimum(t1, t2), axis=1)
            tf = np.nanmin(np.maximum(t1, t2), axis=1)
            hit = (tn <= tf) & (tn > 0) & (tn < best)
            best[hit], idx[hit] = tn[hit], i
        if floor_z is not None:
            tz = (floor_z - o[2]) * inv[:, 2]
            hit = (tz > 0) & (tz < best)
            best[hit], idx[hit] = tz[hit], -1
    depth = np.where(np.isfinite(best), best, 0.0).reshape(h, w).astype(np.float32)  # t along d_cam = z depth
    return depth, idx.reshape(h, w)


def perceive(boxes: Sequence[Box], T_world_cam: Pose, K: Intrinsics, t_s: float, index: int = -1,
             scene_tag: Optional[str] = "room", min_pixels: int = 20,
             track_ids: Optional[dict[int, int]] = None) -> FramePerception:
    """Oracle perception of a box scene: exact depth, pose and one instance per visible box."""
    depth, idx = render(boxes, T_world_cam, K)
    rgb = np.zeros((*depth.shape, 3), np.uint8)
    insts = []
    for i, b in enumerate(boxes):
        mask = idx == i
        if mask.sum() < min_pixels:
            continue
        rgb[mask] = (37 * b.obj_id % 255, 91 * b.obj_id % 255, 53 * b.obj_id % 255)
        tid = b.obj_id if track_ids is None else track_ids.get(b.obj_id, b.obj_id)
        insts.append(InstanceObservation(tid, b.label, 0.9, mask))
    frame = Frame(t_s, rgb, depth, T_world_cam, K, index=index, source="boxes")
    return FramePerception(frame, tuple(insts), scene_tag)


def orbit(boxes: Sequence[Box], n: int, centre=(0.0, 0.0, 0.5), radius: float = 3.0, height: float = 1.6,
          t0: float = 0.0, dt: float = 1.0, size: tuple[int, int] = (128, 96), turns: float = 1.0,
          index0: int = 0, scene_tag: str = "room") -> Iterable[FramePerception]:
    """Frames of a camera circling ``centre`` and looking at it."""
    K = Intrinsics.from_fov(size[0], size[1], 70.0)
    for k in range(n):
        a = 2 * np.pi * turns * k / max(n, 1)
        eye = (centre[0] + radius * np.cos(a), centre[1] + radius * np.sin(a), height)
        yield perceive(boxes, look_at(eye, centre), K, t0 + k * dt, index0 + k, scene_tag)


def snapshot_facts(snap) -> dict:
    """Everything a MemorySnapshot says, as plain comparable values (used to test causality/persistence)."""
    objects = {}
    for nid in sorted(snap.objects):
        o = snap.objects[nid]
        objects[nid] = (o.label, tuple(sorted(o.label_votes.items())), tuple(np.round(o.position_w, 9)),
                        o.first_seen_s, o.last_seen_s, o.n_obs,
                        tuple((t, tuple(np.round(p, 9))) for t, p in o.position_history),
                        tuple(o.keyframes), tuple(np.round(o.extent_m, 9)), o.present, o.gone_since_s, o.place_id,
                        tuple(o.obs_times_s.tolist()), round(o.presence_p, 9),
                        None if o.measured_extent_m is None else tuple(np.round(o.measured_extent_m, 9)),
                        tuple(sorted(o.label_first_seen_s.items())))
    places = {pid: (p.tag, tuple(np.round(p.center_w, 9)), round(p.spread_m, 9), p.times_s, p.visits_s, p.n_frames)
              for pid, p in snap.places.items()}
    g = snap.graph
    edges = sorted((min(a, b), max(a, b), d.get("kind"), round(d.get("distance_m", 0.0), 9))
                   for a, b, d in g.edges(data=True))
    ego = (snap.ego.times_s.tolist(), snap.ego.T_world_cam.tolist(), snap.ego.scene_tags, snap.ego.frame_indices)
    changes = [(e.kind.value, e.node_id, e.label, e.after_s, e.before_s, e.known_s, e.position_from_w,
                e.position_to_w, round(e.confidence, 9), e.evidence) for e in snap.changes]
    return {"t": snap.t_s, "objects": objects, "places": places, "nodes": sorted(g.nodes), "edges": edges,
            "ego": ego, "up": tuple(snap.up_world), "changes": changes}
