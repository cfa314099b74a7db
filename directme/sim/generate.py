"""generate_episode: layout -> furniture -> wearer scenario -> per-frame ground truth
(poses, rooms, visibility) -> questions. Deterministic for a seed."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Intrinsics, Pose
from .episode import Episode, FrameGT, ObjectGT
from .layout import make_layout
from .scene import SceneSource
from .wearer import Scenario
from .world import World

DEFAULT_HFOV_DEG = 70.0
VISIBILITY_DOWNSCALE = 2  # the visibility pass renders ids at 1/2 resolution


def camera_pose(x: float, y: float, z: float, yaw_rad: float, pitch_deg: float) -> Pose:
    """Camera-to-world pose (OpenCV camera) at (x, y, z) heading ``yaw`` (from +x, CCW), pitched up by ``pitch``."""
    p = math.radians(pitch_deg)
    fwd = np.array([math.cos(p) * math.cos(yaw_rad), math.cos(p) * math.sin(yaw_rad), math.sin(p)])
    right = np.array([math.sin(yaw_rad), -math.cos(yaw_rad), 0.0])
    down = np.cross(fwd, right)
    return Pose.from_Rt(np.stack([right, down, fwd], axis=1), [x, y, z])


def _objects_gt(world: World) -> tuple[ObjectGT, ...]:
    out = []
    for o in world.objects:
        out.append(ObjectGT(
            object_id=o.object_id, label=o.label, size_m=tuple(float(v) for v in o.extent_m),
            positions_w=tuple((float(t), None if c is None else tuple(float(v) for v in c)) for t, c in o.history),
            colour_rgb=o.colour_rgb, movable=o.kind.movable, present=tuple((float(a), float(b)) for a, b in o.present)))
    return tuple(out)


def visibility(source: SceneSource, poses: list[Pose], times: np.ndarray, intrinsics: Intrinsics,
               objects: tuple[ObjectGT, ...]) -> tuple[list, dict[int, float]]:
    """Low-resolution id pass. Per frame: ids of every object showing at least one pixel and their
    pixel counts. Also, per removed object, the first time its former place was in view, unoccluded
    (the wearer saw that it is gone)."""
    small = intrinsics.resized(intrinsics.width // VISIBILITY_DOWNSCALE, intrinsics.height // VISIBILITY_DOWNSCALE)
    vis_source = source.with_intrinsics(small)
    removals = [(o, end, o.position_at(end - 1e-6)) for o in objects for _, end in o.present if math.isfinite(end)]
    removal_seen: dict[int, float] = {}
    out = []
    for i, (pose, t) in enumerate(zip(poses, times)):
        img = vis_source.render_pose(pose, float(t), i, with_rgb=False)
        counts = np.bincount(img.instance_ids.ravel())
        vis = np.nonzero(counts)[0]
        vis = vis[vis > 0]
        out.append((tuple(int(v) for v in vis), tuple(int(counts[v]) for v in vis)))
        for o, end, c in removals:
            if end <= t and o.object_id not in removal_seen and c is not None \
                    and _place_in_view(pose, small, img.depth_m, c, o):
                removal_seen[o.object_id] = float(t)
    return out, removal_seen


def _place_in_view(pose: Pose, K: Intrinsics, depth_m: np.ndarray, center_w: np.ndarray, obj: ObjectGT) -> bool:
    p = pose.inverse().apply(center_w)
    if p[2] < 0.3 or p[2] > 6.0:
        return False
    uv, _ = K.project(p[None])
    u, v = uv[0]
    if not (0.05 * K.width <= u < 0.95 * K.width and 0.05 * K.height <= v < 0.95 * K.height):
        return False
    return bool(depth_m[int(v), int(u)] >= p[2] - obj.half_extent_xy_m)


def generate_episode(seed: int = 0, minutes: float = 5.0, width: int = 320, height: int = 240, fps: float = 1.0,
                     hfov_deg: float = DEFAULT_HFOV_DEG, with_questions: bool = True,
                     questions_per_minute: float = 16.0, video_uid: Optional[str] = None,
                     phrasings: str = "templates", spatial_questions: bool = False,
                     size_jitter: Optional[float] = None) -> Episode:
    """Generate a synthetic egocentric episode (see docs/simulator.md). Deterministic for ``seed``.
    ``phrasings``: the words of its questions ("templates", "dev" or "heldout"; sim/questions.py).
    ``spatial_questions``: also ask the measurement kinds (object and room sizes, appearance order, routes,
    closest-point distances, counts in this room; sim/question_gen_spatial.py). ``size_jitter``: instance sizes
    vary by up to this fraction around their class size (None: questions.SPATIAL_SIZE_JITTER with the spatial
    questions, else 0, which leaves the episode exactly as without the option)."""
    if not (minutes > 0 and math.isfinite(minutes)):
        raise InvalidInputError(f"minutes must be > 0, got {minutes}")
    from .questions import PHRASING_SETS, SPATIAL_SIZE_JITTER

    if phrasings not in PHRASING_SETS:
        raise InvalidInputError(f"phrasings must be one of {PHRASING_SETS}, got {phrasings!r}")
    if width < 16 or height < 16 or not fps > 0:
        raise InvalidInputError(f"need width, height >= 16 and fps > 0, got {width}x{height} at {fps} fps")
    rng = np.random.default_rng(seed)
    layout = make_layout(rng)
    jitter = (SPATIAL_SIZE_JITTER if spatial_questions else 0.0) if size_jitter is None else float(size_jitter)
    world = World(layout, rng, jitter, np.random.default_rng([seed, 7]))
    world.furnish()
    eye_m = float(rng.uniform(1.55, 1.65))
    duration_s = minutes * 60.0
    scenario = Scenario(world, rng, duration_s, eye_m)
    scenario.run()
    n = int(round(duration_s * fps))
    times = np.arange(n) / fps
    xyyp = scenario.poses_at(times)
    jitter = np.random.default_rng(seed + 1).normal(0, 1.0, size=(n, 2))  # head jitter, degrees
    poses = [camera_pose(x, y, eye_m, yaw + math.radians(j[0]), pitch + j[1])
             for (x, y, yaw, pitch), j in zip(xyyp, jitter)]
    intrinsics = Intrinsics.from_fov(width, height, hfov_deg)
    objects = _objects_gt(world)
    source = SceneSource(layout, objects, intrinsics, seed)
    vis, removal_seen = visibility(source, poses, times, intrinsics, objects)
    frames_gt = []
    for i in range(n):
        room = layout.room_at(xyyp[i, 0], xyyp[i, 1])
        frames_gt.append(FrameGT(i, float(times[i]), poses[i], room.room_id, room.room_type, vis[i][0], vis[i][1]))
    source.frames_gt = tuple(frames_gt)
    ep = Episode(video_uid=video_uid or f"sim_seed{seed}_{minutes:g}min", seed=seed, fps=float(fps),
                 intrinsics=intrinsics, layout=layout, objects=objects, frames_gt=tuple(frames_gt),
                 events=tuple(sorted(scenario.events, key=lambda e: e.t_s)), questions=(), source=source,
                 meta={"eye_height_m": eye_m, "hfov_deg": hfov_deg})
    if with_questions:
        from .question_gen import generate_questions

        qs = generate_questions(ep, np.random.default_rng(seed + 2), questions_per_minute, removal_seen, phrasings)
        if spatial_questions:
            from .question_gen_spatial import generate_spatial_questions

            qs = qs + generate_spatial_questions(ep, np.random.default_rng([seed, 3]), phrasings)
        object.__setattr__(ep, "questions", tuple(qs))
    return ep
