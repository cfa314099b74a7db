"""Hand-built MemorySnapshots for query / answerer tests (no memory or simulator needed)."""
from __future__ import annotations

from typing import Optional, Sequence

import networkx as nx
import numpy as np

from directme.geometry import Pose, rotation_about_axis
from directme.memory.snapshot import EgoTrack, KeyframeRef, MemorySnapshot, ObjectNode, PlaceNode

# camera looking along world +x, level: OpenCV z forward = world x, x right = world -y, y down = world -z
_R_CAM_X = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def cam_pose(x: float, y: float, heading_deg: float, z: float = 1.6) -> np.ndarray:
    """Camera-to-world 4x4 of a level camera at (x, y, z) facing ``heading_deg`` (0 = +x, 90 = +y)."""
    R = rotation_about_axis(np.array([0.0, 0.0, 1.0]), np.deg2rad(heading_deg)) @ _R_CAM_X
    return Pose.from_Rt(R, [x, y, z]).matrix


def obj(node_id: str, label: str, xy: Sequence[float], t0: float = 0.0, t1: Optional[float] = None, n_obs: int = 5,
        history: Sequence[tuple[float, Sequence[float]]] = (), present: bool = True, color: Optional[str] = None,
        keyframes: Sequence[float] = ()) -> ObjectNode:
    pos = np.array([xy[0], xy[1], 0.8])
    hist = tuple((float(t), np.array([p[0], p[1], 0.8])) for t, p in history) or ((t0, pos),)
    return ObjectNode(node_id=node_id, label=label, label_votes={label: float(n_obs)}, position_w=pos,
                      first_seen_s=t0, last_seen_s=t0 if t1 is None else t1, n_obs=n_obs, position_history=hist,
                      keyframes=tuple(KeyframeRef(t, int(t), visibility=0.5) for t in keyframes), present=present,
                      presence_p=0.98 if present else 0.02,
                      attributes={"color": color} if color else {})


def snapshot(t_s: float, objects: Sequence[ObjectNode], track: Sequence[tuple[float, float, float, float, str]],
             places: Sequence[PlaceNode] = ()) -> MemorySnapshot:
    """``track``: (t, x, y, heading_deg, scene tag) per frame, up to and including t_s."""
    rows = [r for r in track if r[0] <= t_s]
    ego = EgoTrack(times_s=np.array([r[0] for r in rows], dtype=float),
                   T_world_cam=np.stack([cam_pose(r[1], r[2], r[3]) for r in rows]) if rows else np.zeros((0, 4, 4)),
                   scene_tags=tuple(r[4] for r in rows), frame_indices=tuple(range(len(rows))))
    return MemorySnapshot(t_s=t_s, objects={o.node_id: o for o in objects if o.first_seen_s <= t_s},
                          places={p.place_id: p for p in places}, ego=ego, graph=nx.Graph(),
                          up_world=np.array([0.0, 0.0, 1.0]))


def walk(segments: Sequence[tuple[float, float, float, float, str]], dt: float = 1.0):
    """Track rows from (t_start, x, y, heading, tag) waypoints, holding each until the next."""
    rows = []
    for (t0, x, y, h, tag), nxt in zip(segments, list(segments[1:]) + [None]):
        t_end = nxt[0] if nxt else t0 + dt
        t = t0
        while t < t_end - 1e-9:
            rows.append((t, x, y, h, tag))
            t += dt
    return rows
