"""Object answers by spatial relation: "what is to the left of / on / under / next to / between / opposite
the Y?" - the objects memory holds in that relation to the reference, in the wearer's orientation at the
asked time (left = the wearer's left)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..geometry import azimuth_deg
from ..memory.snapshot import ObjectNode
from ..query.ego import ego_frame_at, object_place, position_at
from ..query.types import QueryContext
from ..query.vocab import label_keys
from .geometric_config import ConfidenceConfig, MetricConfig, RelationConfig
from .prediction import Prediction, PredictionKind
from .prediction import angle_diff as _angle_diff
from .prediction import best_node as _best_node
from .prediction import known_place as _known_place
from .prediction import no_answer as _none


def _open_side_deg(ctx: QueryContext, R: np.ndarray, p_ref: np.ndarray, t: float,
                   radius_m: float) -> Optional[float]:
    """Azimuth (ego-aligned axes ``R``) from the reference to where the wearer stood within ``radius_m`` of it
    up to ``t``: the open side a piece of furniture faces, so "opposite" lies that way (None: never near it)."""
    ego = ctx.snapshot.ego
    pos = ego.T_world_cam[ego.times_s <= t][:, :3, 3].astype(np.float64)
    d = (pos - p_ref) @ R.T
    d = d[np.hypot(d[:, 0], d[:, 1]) <= radius_m]
    if not len(d):
        return None
    return azimuth_deg(d.mean(axis=0))


def objects_around(ctx: QueryContext, cfg: RelationConfig, conf: ConfidenceConfig,
                   metric: MetricConfig) -> Prediction:
    """"What is to the left of / on / under / next to / between the Y?": the objects in memory in that
    relation to the reference, in the wearer's orientation at t (left = the wearer's left); the thresholds
    of each relation are ``cfg``'s; which instance a name means: ``metric`` (prediction.best_node)."""
    intent, t = ctx.intent, ctx.facts.time.t_eval
    frame = ego_frame_at(ctx.snapshot, t)
    refs = [_best_node(ctx, intent.index_of(r), metric.nearest_min_obs, metric.doubt_m) for r in intent.references]
    if frame is None or not refs or any(r is None for r in refs):
        return _none("the reference object is not in memory")
    rel = intent.relation or "near"
    if rel == "between" and len(refs) < 2:
        return _none(f"'{rel}' needs a second object")
    R = frame.T_world_ego.R.T  # world -> ego-aligned axes (x forward, y left, z up)
    p_ref = [np.asarray(position_at(r, t), dtype=np.float64) for r in refs]
    az_open = _open_side_deg(ctx, R, p_ref[0], t, cfg.open_side_radius_m) if rel == "opposite" else None
    if rel == "opposite" and az_open is None:
        return _none("'opposite' needs the wearer to have walked near the reference (its open side)")
    ref_room = _known_place(object_place(ctx.snapshot, refs[0], -1, ctx.facts.rooms)) if rel == "opposite" else None
    half = float(np.max(np.asarray(refs[0].extent_m)[:2]) / 2) if refs[0].extent_m is not None else \
        cfg.default_half_size_m
    found: dict[str, tuple[float, ObjectNode]] = {}
    for n in ctx.snapshot.objects.values():
        if not n.present or any(n is r for r in refs):
            continue
        d = R @ (np.asarray(position_at(n, t), dtype=np.float64) - p_ref[0])
        ground = float(np.hypot(d[0], d[1]))
        az = azimuth_deg(d)
        if rel == "between":
            ab = R @ (p_ref[1] - p_ref[0])
            length = float(np.hypot(ab[0], ab[1])) or 1e-6
            s = float((d[0] * ab[0] + d[1] * ab[1]) / length ** 2)
            off = abs(float(d[0] * ab[1] - d[1] * ab[0])) / length
            within = cfg.between_margin < s < 1.0 - cfg.between_margin
            ok, score = within and off <= max(cfg.between_off_min_m, cfg.between_off_frac * length), off
        elif rel in ("left", "right", "front", "behind"):
            centre = {"left": 90.0, "right": -90.0, "front": 180.0, "behind": 0.0}[rel]
            ok = ground <= cfg.side_range_m and _angle_diff(az, centre) <= cfg.side_half_angle_deg and ground > half
            score = ground
        elif rel in ("on", "above", "under"):
            up = d[2] > cfg.on_min_rise_m if rel != "under" else d[2] < -cfg.on_min_rise_m
            near = ground <= max(cfg.on_range_min_m, half + cfg.on_range_margin_m)
            ok, score = near and up and abs(d[2]) <= cfg.on_max_rise_m, ground + abs(d[2])
        elif rel in ("in", "at"):
            ok, score = ground <= max(cfg.in_range_min_m, half) and abs(d[2]) <= cfg.in_max_height_m, ground
        elif rel == "opposite":  # across the room: beyond the open floor in front of the reference
            off = _angle_diff(az, az_open)
            room = _known_place(object_place(ctx.snapshot, n, -1, ctx.facts.rooms)) if ref_room else None
            far = ground >= max(cfg.opposite_min_m, 2 * half)
            ok, score = far and off <= cfg.opposite_half_angle_deg and room in (None, ref_room), off
        else:  # near, next to, beside, by, around, against
            ok, score = ground <= cfg.near_m, ground
        if ok and (n.label not in found or score < found[n.label][0]):
            found[n.label] = (score, n)
    ranked = sorted(found.values(), key=lambda x: x[0])
    scores: dict[str, float] = {}
    for rank, (_, n) in enumerate(ranked):
        for key in label_keys(n.label):
            scores[key] = max(scores.get(key, 0.0), 1.0 / (1.0 + cfg.rank_decay * rank))
    what = f"{rel} the " + " and the ".join(r.label for r in refs)
    names = ", ".join(n.label for _, n in ranked[:6])
    pred = Prediction(PredictionKind.TARGETS, f"Objects {what} (from where you stand): {names}." if ranked else
                      f"Memory has no object {what}.", 1.0 if ranked else conf.several_found, target_scores=scores)
    asked = [a.key for a in intent.asked]
    found = any(k in scores for k in asked) if asked else bool(ranked)
    pred.p_yes = conf.found_p_yes if found else conf.missed_p_yes
    return pred
