"""Solvers of the measurement kinds (query/kinds): an object's longest dimension, a room's floor area, the
first-appearance order of categories, the turns of a route between objects and the distance between two objects'
closest points. Every figure comes from what memory observed (docs/memory.md, "Measurements"), never from a size
per class."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..memory.snapshot import EgoTrack, ObjectNode
from ..query.parsed import SequenceEnd
from ..query.ego import current_place, ego_frame_at, object_place, position_at, settled_tags
from ..query.types import QueryContext
from ..query.vocab import canonical, label_keys
from ..types import Flag
from .floor_area import wall_rectangle_m2
from .geometric_config import MeasureConfig
from .prediction import Prediction, PredictionKind, angle_diff
from .prediction import best_node as _best_node
from .prediction import known_place as _known_place
from .prediction import no_answer as _none
from .prediction import target_nodes as _target_nodes

TURN_AZIMUTH_DEG = {"left": 90.0, "right": -90.0, "back": 180.0}  # the heading change each turn word means


def size_m(node: ObjectNode) -> np.ndarray:
    """The object's measured extent (world axes; memory/extent.py), or its points' box where memory has none
    (a save from before it)."""
    ext = node.measured_extent_m if node.measured_extent_m is not None else node.extent_m
    return np.zeros(3) if ext is None else np.asarray(ext, dtype=np.float64)


def box_corners_w(node: ObjectNode, t_s: float, max_half_m: float = np.inf) -> np.ndarray:
    """The 8 corners (world) of the object's axis-aligned box (its measured extent, ``size_m``, about its
    position) at its placement at ``t_s`` (each at most ``max_half_m`` from the centre along an axis)."""
    half = np.minimum(0.5 * size_m(node), max_half_m)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
    return position_at(node, t_s)[None, :] + signs * half[None, :]


def box_gap_m(a: ObjectNode, b: ObjectNode, t_s: float) -> float:
    """Distance between the closest points of two objects' axis-aligned boxes (``size_m``; 0 when they overlap)."""
    gap = np.abs(position_at(a, t_s) - position_at(b, t_s)) - (size_m(a) + size_m(b)) / 2
    return float(np.linalg.norm(np.maximum(gap, 0.0)))


def min_area_rectangle_m2(points_xy: np.ndarray, step_deg: float = 1.0, trim: float = 0.0) -> float:
    """Area of the smallest rectangle (any orientation, searched in ``step_deg`` steps) holding the points (with
    ``trim`` > 0: their [trim, 1 - trim] quantiles along its sides)."""
    if len(points_xy) < 3:
        return 0.0
    best = math.inf
    for a in np.radians(np.arange(0.0, 90.0, step_deg)):
        c, s = math.cos(a), math.sin(a)
        r = points_xy @ np.array([[c, -s], [s, c]])
        lo, hi = (r.min(axis=0), r.max(axis=0)) if trim <= 0 else np.quantile(r, [trim, 1.0 - trim], axis=0)
        best = min(best, float(np.prod(hi - lo)))
    return best


def names_key(label: str, key: str) -> bool:
    """Whether a label names the asked category ``key`` (one of its keys is it, or ends in it: "gas stove")."""
    return any(k == key or k.endswith(" " + key) for k in label_keys(label))


def class_nodes(ctx: QueryContext, i: int, min_obs: int = 2) -> list[ObjectNode]:
    """The nodes matched to target ``i`` that are of its class by their label and were observed at least
    ``min_obs`` times (a false detection or a confused label is rarely both); all matched nodes when none is."""
    nodes = _target_nodes(ctx, i)
    key = ctx.intent.targets[i].key
    own = [n for n in nodes if n.n_obs >= min_obs and names_key(n.label, key)]
    return own or nodes


def vote_share(node: ObjectNode, key: str) -> float:
    """The share of the node's label votes (summed detection scores) given to labels naming ``key``."""
    total = sum(node.label_votes.values())
    return sum(w for lab, w in node.label_votes.items() if names_key(lab, key)) / total if total > 0 else 0.0


def category_nodes(ctx: QueryContext, i: int, cfg: MeasureConfig) -> list[ObjectNode]:
    """The nodes that show target ``i``'s category: those of its class (``class_nodes``) and any other observed at
    least ``cfg.class_min_obs`` times whose label votes give the category at least ``cfg.order_vote_share``. An
    object the detector called by a confused label in most of its first sightings (a trash can read as a barrel)
    is a node of that label, yet it showed the category from its first sighting on."""
    nodes = class_nodes(ctx, i, cfg.class_min_obs)
    key = ctx.intent.targets[i].key
    if cfg.order_vote_share >= 1.0:
        return nodes
    seen = {id(n) for n in nodes}
    return nodes + [n for n in ctx.snapshot.objects.values() if id(n) not in seen and n.n_obs >= cfg.class_min_obs
                    and vote_share(n, key) >= cfg.order_vote_share]


def object_size(ctx: QueryContext, cfg: MeasureConfig) -> Prediction:
    """The longest dimension of the asked object's measured extent (cm, ``size_m``): it grows as views show more
    of it. The node is the best seen of the asked class (``class_nodes``: "side table" is not the coffee table)."""
    nodes = class_nodes(ctx, 0, min_obs=1) if ctx.intent.targets else []
    node = max(nodes, key=lambda n: (n.present, n.n_obs, n.last_seen_s)) if nodes else None
    if node is None or (node.extent_m is None and node.measured_extent_m is None):
        return _none("the object is not in memory")
    cm = 100.0 * float(np.max(size_m(node)))
    return Prediction(PredictionKind.NUMBER, f"The {node.label} measures about {cm:.0f} cm along its longest side.",
                      value=cm, unit="cm")


def room_size(ctx: QueryContext, cfg: MeasureConfig) -> Prediction:
    """Floor area (m2) of the wearer's room (or the asked object's), from the frames whose settled scene tag
    (flicker taken out) is that room's (at least ``cfg.room_min_frames``): the rectangle of the walls fitted to
    the far edges those frames saw (memory/outline.py; floor_area.py: what a door shows of the next room lies
    beyond them). Without enough far edges (a save made before they were logged, frames without depth): the
    rectangle around the walk and the room's objects (``walked_area_m2``)."""
    snap, t = ctx.snapshot, ctx.facts.time.t_eval
    rooms = ctx.facts.rooms
    if ctx.intent.targets:
        node = _best_node(ctx, 0, cfg.class_min_obs)
        tag = _known_place(object_place(snap, node, -1, rooms)) if node is not None else None
    else:
        tag = _known_place(current_place(snap, t))
    if not tag:
        return _none("the room is not known: memory has no room name for it", Flag.NO_PLACES)
    key = canonical(tag)
    ego = snap.ego
    n_t = int(np.searchsorted(ego.times_s, t, side="right"))
    inside = np.array([bool(s) and canonical(s) == key for s in settled_tags(snap, rooms)[:n_t]], dtype=bool)
    walked = ego.T_world_cam[:n_t][inside, :3, 3].astype(np.float64)
    if len(walked) < cfg.room_min_frames:
        return _none(f"too little of the {tag} seen to measure it")
    frame = ego_frame_at(snap, t)
    edges = None if ego.far_edges_m is None else ego.far_edges_m[:n_t][inside].astype(np.float64)
    if edges is not None:
        edges = (walked[:, None, :] + edges).reshape(-1, 3)
        edges = edges[np.isfinite(edges).all(axis=1)]
    walked_xy = frame.to_ego(walked)[:, :2]
    area = wall_rectangle_m2(frame.to_ego(edges)[:, :2], walked_xy, cfg) \
        if edges is not None and len(edges) >= max(cfg.room_min_edges, 1) else None
    if area is None:
        area = walked_area_m2(ctx, cfg, key, walked_xy)
    return Prediction(PredictionKind.NUMBER, f"The {tag} covers about {area:.1f} square metres.", value=area,
                      unit="m2")


def walked_area_m2(ctx: QueryContext, cfg: MeasureConfig, key: str, walked_xy: np.ndarray) -> float:
    """The smallest rectangle around the walk in a room (``walked_xy``, ego ground plane) and the boxes of the
    objects memory places in it whose centre lies within ``cfg.room_object_reach_m`` of the walk (an object seen
    through a door and placed in the wrong room lies farther), each box at most ``cfg.room_half_extent_cap_m``
    from its centre (stray points inflate extents)."""
    snap, t, rooms = ctx.snapshot, ctx.facts.time.t_eval, ctx.facts.rooms
    frame = ego_frame_at(snap, t)
    boxes = []
    for n in snap.objects.values():
        if n.first_seen_s <= t and canonical(object_place(snap, n, -1, rooms) or "") == key:
            corners_xy = frame.to_ego(box_corners_w(n, t, cfg.room_half_extent_cap_m))[:, :2]
            if np.min(np.linalg.norm(walked_xy - corners_xy.mean(axis=0), axis=1)) <= cfg.room_object_reach_m:
                boxes.append(corners_xy)
    return min_area_rectangle_m2(np.concatenate([walked_xy] + boxes), cfg.rect_step_deg, cfg.room_trim)


def closest_distance(ctx: QueryContext, cfg: MeasureConfig) -> Prediction:
    """Distance (m) between the closest points of the two asked objects; of several instances (``class_nodes``), the
    closest pair."""
    t = ctx.facts.time.t_eval
    if len(ctx.intent.targets) < 2:
        return _none("two objects are needed")
    pair = closest_pair(class_nodes(ctx, 0, cfg.class_min_obs), class_nodes(ctx, 1, cfg.class_min_obs), t)
    if pair is None:
        return _none("the objects are not in memory")
    d, a, b = pair
    return Prediction(PredictionKind.DISTANCE, f"The {a.label} and the {b.label} are {d:.2f} m apart at their "
                      "closest points.", metres=d, value=d, unit="m")


def closest_distances(ctx: QueryContext, cfg: MeasureConfig) -> dict[str, float]:
    """Distance (m) from each asked object to the reference ("which of these is the closest to the bed,
    measuring from the closest point of each object"): between closest points, of the closest instances of
    each class (``class_nodes``); objects or a reference not in memory are left out."""
    t, intent = ctx.facts.time.t_eval, ctx.intent
    ref_i = intent.index_of(intent.references[0]) if intent.references else None
    refs = class_nodes(ctx, ref_i, cfg.class_min_obs) if ref_i is not None else []
    out = {}
    for target in intent.asked:
        pair = closest_pair(class_nodes(ctx, intent.index_of(target), cfg.class_min_obs), refs, t)
        if pair is not None:
            out[target.key] = pair[0]
    return out


def closest_pair(a_nodes: list[ObjectNode], b_nodes: list[ObjectNode], t_s: float
                 ) -> Optional[tuple[float, ObjectNode, ObjectNode]]:
    """The gap between closest points (``box_gap_m``) of the nearest pair of two different nodes, one of each
    list, with the pair; None when there is no such pair."""
    pairs = [(box_gap_m(a, b, t_s), a, b) for a in a_nodes for b in b_nodes if a is not b]
    return min(pairs, key=lambda p: p[0]) if pairs else None


def points_in_view(ego: EgoTrack, points_w: np.ndarray, start: int, stop: int, range_m: float) -> np.ndarray:
    """Per ego frame in [start, stop): whether any of ``points_w`` lay in front of the camera (at most ``range_m``
    along its axis) and inside the image (frames of unknown intrinsics: never)."""
    if ego.K is None or stop <= start:
        return np.zeros(max(stop - start, 0), dtype=bool)
    T = np.asarray(ego.T_world_cam[start:stop], dtype=np.float64)
    K = np.asarray(ego.K[start:stop], dtype=np.float64)
    p = np.einsum("nji,nkj->nki", T[:, :3, :3], points_w[None, :, :] - T[:, None, :3, 3])  # camera frame (n, k, 3)
    z = p[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = K[:, None, 0] * p[..., 0] / z + K[:, None, 2]
        v = K[:, None, 1] * p[..., 1] / z + K[:, None, 3]
    inside = (z > 0) & (z <= range_m) & (u >= 0) & (u < K[:, None, 4]) & (v >= 0) & (v < K[:, None, 5])
    return (K[:, 0] > 0) & inside.any(axis=1)


def first_sighting_s(node: ObjectNode, key: str) -> float:
    """When the node first showed the category ``key``: the earlier of its own first observation (an object read by
    a confused label at first was of its category all along) and the first sighting of a label naming ``key``,
    its own or one of an object merged into it (``ObjectNode.label_first_seen_s``). An object merged in under other
    labels (a false detection, another object beside it) does not date it; ``first_seen_s`` where it has neither."""
    named = [t for lab, t in node.label_first_seen_s.items() if names_key(lab, key)]
    own = [float(node.obs_times_s[0])] if len(node.obs_times_s) else []
    return min(named + own) if named or own else node.first_seen_s


def first_view_s(ego: EgoTrack, node: ObjectNode, t0: float, cfg: MeasureConfig) -> float:
    """When the node first came into view: its first sighting ``t0``, back-dated over the run of views just before it
    that had its (first placement's) box in the image within ``cfg.first_view_range_m``, each at most
    ``cfg.first_view_gap_s`` after the one before, over at most ``cfg.first_view_window_s``. A detector misses an
    object in some frames and reports it only once enough of it shows; the frames leading up to that sighting
    already showed it. Occlusion is not known here: the run stops at the first gap, so a view of the place from
    long before (another room, before the object was put there) does not count."""
    if cfg.first_view_gap_s <= 0 or ego.K is None:
        return t0
    times = np.asarray(ego.times_s)
    start = int(np.searchsorted(times, t0 - cfg.first_view_window_s, side="left"))
    stop = int(np.searchsorted(times, t0, side="left"))
    corners = box_corners_w(node, t0, cfg.room_half_extent_cap_m)
    seen = times[start:stop][points_in_view(ego, np.vstack([corners, corners.mean(axis=0)]), start, stop,
                                            cfg.first_view_range_m)]
    run = np.append(seen, t0)
    gaps = np.flatnonzero(np.diff(run) > cfg.first_view_gap_s)
    return float(run[gaps[-1] + 1] if len(gaps) else run[0])


def appearance_order(ctx: QueryContext, cfg: MeasureConfig) -> Prediction:
    """The asked categories ordered by when any node showing each (``category_nodes``) first showed it
    (``first_sighting_s``; with ``cfg.first_view_gap_s`` back-dated over the views leading up to it, ``first_view_s``);
    options (orders)
    scored by their pairwise disagreements with it (``cfg.inversion_penalty`` log-units each); without options, the
    one seen first (or, ``Intent.sequence_end`` LAST, the one whose first sighting came last)."""
    first: dict[str, float] = {}
    for i, target in enumerate(ctx.intent.targets):
        nodes = category_nodes(ctx, i, cfg)
        if nodes:
            first[target.key] = min(first_view_s(ctx.snapshot.ego, n, first_sighting_s(n, target.key), cfg)
                                    for n in nodes)
    if not first:
        return _none("none of the objects is in memory")
    order = sorted(first, key=first.get)
    text = "First seen: " + ", ".join(f"{k} ({first[k]:.0f} s)" for k in order) + "."
    seqs = ctx.intent.sequences
    if seqs:
        fit = []
        for seq in seqs:
            times = [first.get(k, math.inf) for k in seq]
            inversions = sum(1 for i in range(len(times)) for j in range(i + 1, len(times)) if times[i] > times[j])
            fit.append(math.exp(-cfg.inversion_penalty * inversions) if seq else 0.0)
        return Prediction(PredictionKind.SEQUENCE, text, option_fit=tuple(fit))
    last = ctx.intent.sequence_end == SequenceEnd.LAST
    ranked = order[::-1] if last else order
    scores = {k: math.exp(-cfg.inversion_penalty * r) for r, k in enumerate(ranked)}
    return Prediction(PredictionKind.TARGETS, f"The {ranked[0]} was seen {'last' if last else 'first'}. " + text,
                      target_scores=scores)


def route_turns(ctx: QueryContext, cfg: MeasureConfig) -> Optional[list[float]]:
    """The heading change (deg, + left) at each inner stop of the route through the asked objects, or None."""
    t = ctx.facts.time.t_eval
    frame = ego_frame_at(ctx.snapshot, t)
    nodes = [_best_node(ctx, i, cfg.class_min_obs) for i in range(len(ctx.intent.targets))]
    if frame is None or len(nodes) < 3 or any(n is None for n in nodes):
        return None
    xy = frame.to_ego(np.array([position_at(n, t) for n in nodes]))[:, :2]
    heads = [math.degrees(math.atan2(*(b - a)[::-1])) for a, b in zip(xy, xy[1:])]
    return [(h1 - h0 + 180.0) % 360.0 - 180.0 for h0, h1 in zip(heads, heads[1:])]


def route_plan(ctx: QueryContext, cfg: MeasureConfig) -> Prediction:
    """The turn at each step of the route; each option (a turn sequence) scored by how well every turn word fits
    the heading change (Gaussian of the angle to the word's, ``cfg.turn_sigma_deg`` wide)."""
    turns = route_turns(ctx, cfg)
    if turns is None:
        return _none("an object of the route is not in memory")
    words = ["back" if abs(a) > cfg.turn_back_deg else "left" if a > 0 else "right" for a in turns]
    text = "Turns: " + ", ".join(f"turn {w} ({a:+.0f} deg)" for w, a in zip(words, turns)) + "."
    fit = []
    for seq in ctx.intent.sequences:
        ok = len(seq) == len(turns) and all(w in TURN_AZIMUTH_DEG for w in seq)
        fit.append(float(np.prod([math.exp(-0.5 * (angle_diff(a, TURN_AZIMUTH_DEG[w]) / cfg.turn_sigma_deg) ** 2)
                                  for w, a in zip(seq, turns)])) if ok else 0.0)
    return Prediction(PredictionKind.SEQUENCE, text, option_fit=tuple(fit))
