"""Oracle perception: replays a simulator episode's ground truth (depth, pose, instance masks,
labels, room tag) as FramePerception, with seeded noise so that the memory and reasoning layers
can be measured without model weights. Presets: ``none`` (exact) and ``realistic``.

Part of the simulator (it reads the episode's ground truth and catalog); the agent's 'oracle'
perception backend gets it from ``Episode.oracle_perception``, so the pipeline never imports it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Pose, rotation_about_axis
from ..types import Frame, FramePerception, InstanceObservation
from .catalog import CATALOG, similar_labels

FALSE_POSITIVE_ID_BASE = 1_000_000  # track ids of false positives start here
SWITCHED_ID_BASE = 2_000_000  # track ids given after an identity switch start here


@dataclass(frozen=True)
class NoisePreset:
    """Noise of the oracle. Rates are per frame; sigmas are 1 standard deviation."""

    name: str
    depth_pixel_sigma: float = 0.0  # relative per-pixel depth noise (0.05 = 5%)
    depth_scale_sigma: float = 0.0  # relative per-frame depth scale error
    heading_drift_deg_per_min: float = 0.0  # random-walk heading error: sigma after 1 min of stream
    translation_drift_frac: float = 0.0  # position error grows by this fraction of each step walked
    miss_rate: float = 0.0  # probability that a visible object is not reported in a frame
    false_positives_per_frame: float = 0.0  # Poisson mean of spurious detections per frame
    label_confusion_rate: float = 0.0  # probability a detection gets a similar class's label
    id_switch_rate: float = 0.0  # per track and frame: the track gets a new id from then on
    mask_jitter_px: int = 0  # masks are eroded or dilated (50/50) by this many pixels
    score_range: tuple[float, float] = (0.95, 0.95)  # true detections' scores ~ U(range)
    false_positive_score_range: tuple[float, float] = (0.3, 0.6)
    min_mask_pixels: int = 20  # smaller (after jitter) instance masks are not reported
    scene_tag_error: float = 0.0  # probability the frame's scene tag is another room type of the episode


NOISE_PRESETS = {
    "none": NoisePreset("none"),
    "realistic": NoisePreset(
        "realistic", depth_pixel_sigma=0.05, depth_scale_sigma=0.03, heading_drift_deg_per_min=1.0,
        translation_drift_frac=0.02, miss_rate=0.25, false_positives_per_frame=0.5, label_confusion_rate=0.10,
        id_switch_rate=0.02, mask_jitter_px=2, score_range=(0.5, 0.95), scene_tag_error=0.05),
}


def get_preset(noise: Union[str, NoisePreset]) -> NoisePreset:
    if isinstance(noise, NoisePreset):
        return noise
    if noise not in NOISE_PRESETS:
        raise InvalidInputError(f"unknown oracle noise preset {noise!r}; choose one of {sorted(NOISE_PRESETS)}")
    return NOISE_PRESETS[noise]


class OraclePerception:
    """Perception backend that replays a simulator episode's ground truth with seeded noise.

    Stateless per frame (all random choices depend on ``seed`` and the frame index; drift and
    identity switches are precomputed), so frames may be processed in any order and ``process``
    returns exactly one FramePerception per frame. GT fields of ``frame.meta`` are not passed on.
    """

    name = "oracle"

    def __init__(self, episode, noise: Union[str, NoisePreset] = "none", seed: int = 0):
        self.episode, self.preset, self.seed = episode, get_preset(noise), int(seed)
        self.fp_labels = tuple(sorted(CATALOG))
        self._poses = self._drifted_poses()
        self._switches = self._identity_switches()
        h, w = episode.intrinsics.shape_hw
        bank_rng = np.random.default_rng([self.seed, 1])
        self._noise_bank = bank_rng.standard_normal((4, h + 32, w + 32), dtype=np.float32) \
            if self.preset.depth_pixel_sigma > 0 else None

    # ------------------------------------------------------------ precomputed noise
    def _drifted_poses(self) -> list[Pose]:
        """Odometry-style drift: heading error random walk; position integrates the true steps rotated
        by it plus ``translation_drift_frac`` of each step along a slowly turning direction."""
        p, gts = self.preset, self.episode.frames_gt
        if p.heading_drift_deg_per_min == 0 and p.translation_drift_frac == 0:
            return [g.T_world_cam for g in gts]
        rng = np.random.default_rng([self.seed, 2])
        dt = 1.0 / self.episode.fps
        sigma = math.radians(p.heading_drift_deg_per_min) * math.sqrt(dt / 60.0)
        theta, phi = 0.0, float(rng.uniform(-math.pi, math.pi))
        est, out, prev = None, [], None
        for g in gts:
            t = g.T_world_cam.t
            if prev is None:
                est = t.copy()
            else:
                theta += float(rng.normal(0.0, sigma))
                phi += float(rng.normal(0.0, 0.02))  # drift direction turns slowly: error ~ frac * distance
                step = t - prev
                Rz = rotation_about_axis(np.array([0.0, 0.0, 1.0]), theta)
                dist = float(np.linalg.norm(step[:2]))
                est = est + Rz @ step + p.translation_drift_frac * dist * np.array([math.cos(phi), math.sin(phi), 0.0])
            Rz = rotation_about_axis(np.array([0.0, 0.0, 1.0]), theta)
            out.append(Pose.from_Rt(Rz @ g.T_world_cam.R, est))
            prev = t
        return out

    def _identity_switches(self) -> dict[int, list[int]]:
        """Per object: sorted frame indices where its track gets a new id (while it is in view)."""
        out: dict[int, list[int]] = {}
        if self.preset.id_switch_rate <= 0:
            return out
        rng = np.random.default_rng([self.seed, 3])
        for g in self.episode.frames_gt:
            draws = rng.random(len(g.visible_ids))
            for oid, u in zip(g.visible_ids, draws):
                if u < self.preset.id_switch_rate:
                    out.setdefault(oid, []).append(g.index)
        return out

    def track_id(self, object_id: int, index: int) -> int:
        """Track id of GT object ``object_id`` at frame ``index`` (changes after each identity switch)."""
        sw = self._switches.get(object_id)
        if not sw:
            return object_id
        n = int(np.searchsorted(sw, index, side="right"))
        return object_id if n == 0 else SWITCHED_ID_BASE + object_id * 1000 + n

    # ------------------------------------------------------------ per frame
    def _gt_images(self, frame: Frame) -> tuple[np.ndarray, np.ndarray]:
        ids = frame.meta.get("instance_ids") if frame.meta else None
        if ids is None or frame.depth_m is None:
            img = self.episode.render(frame.index)
            return img.instance_ids, img.depth_m
        return np.asarray(ids), frame.depth_m

    def perceive(self, frame: Frame) -> FramePerception:
        ep = self.episode
        if not 0 <= frame.index < ep.n_frames or abs(ep.frames_gt[frame.index].t_s - frame.t_s) > 1e-6:
            raise InvalidInputError(
                f"frame {frame.index} at t={frame.t_s}s is not a frame of episode {ep.video_uid}; "
                "feed the frames of episode.frames() to its OraclePerception")
        p, gt = self.preset, ep.frames_gt[frame.index]
        rng = np.random.default_rng([self.seed, 4, frame.index])
        ids, depth = self._gt_images(frame)
        depth = self._noisy_depth(depth, rng)
        from scipy import ndimage

        boxes = ndimage.find_objects(ids)  # per object id: slices of its bounding box (one C pass)
        instances = [inst for oid in np.nonzero(np.bincount(ids.ravel()) >= p.min_mask_pixels)[0] if oid > 0
                     for inst in [self._detection(int(oid), ids, boxes[oid - 1], frame.index, rng)]
                     if inst is not None]
        for j in range(int(rng.poisson(p.false_positives_per_frame)) if p.false_positives_per_frame > 0 else 0):
            instances.append(self._false_positive(ids.shape, frame.index, j, rng))
        tag = gt.room
        if p.scene_tag_error > 0 and rng.random() < p.scene_tag_error:
            others = sorted({r.room_type for r in ep.layout.rooms} - {tag})
            tag = others[int(rng.integers(len(others)))] if others else tag
        out_frame = Frame(t_s=frame.t_s, rgb=frame.rgb, depth_m=depth, T_world_cam=self._poses[frame.index],
                          intrinsics=ep.intrinsics, index=frame.index, source=frame.source)
        return FramePerception(out_frame, tuple(instances), tag, 1.0)

    def _noisy_depth(self, depth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = self.preset
        if p.depth_pixel_sigma <= 0 and p.depth_scale_sigma <= 0:
            return depth
        scale = np.float32(1.0 + rng.normal(0.0, p.depth_scale_sigma)) if p.depth_scale_sigma > 0 else np.float32(1)
        if self._noise_bank is None:
            return depth * scale
        h, w = depth.shape
        b, r, c = int(rng.integers(len(self._noise_bank))), int(rng.integers(32)), int(rng.integers(32))
        factor = self._noise_bank[b, r:r + h, c:c + w] * np.float32(p.depth_pixel_sigma * scale)
        factor += scale
        np.maximum(factor, 0, out=factor)  # a >20 sigma draw must not make depth negative
        factor *= depth
        return factor

    def _detection(self, oid: int, ids: np.ndarray, box: tuple[slice, slice], index: int,
                   rng: np.random.Generator) -> Optional[InstanceObservation]:
        p = self.preset
        obj = self.episode.object(oid)
        if p.miss_rate > 0 and rng.random() < p.miss_rate:
            return None
        pad = p.mask_jitter_px + 1
        win = tuple(slice(max(b.start - pad, 0), min(b.stop + pad, n)) for b, n in zip(box, ids.shape))
        crop = ids[win] == oid
        if p.mask_jitter_px:
            crop = _jitter_mask(crop, p.mask_jitter_px, rng)
        if crop.sum() < p.min_mask_pixels:
            return None
        mask = np.zeros(ids.shape, bool)
        mask[win] = crop
        label = obj.label
        if p.label_confusion_rate > 0 and rng.random() < p.label_confusion_rate:
            similar = similar_labels(label)
            label = similar[int(rng.integers(len(similar)))] if similar else label
        score = float(rng.uniform(*p.score_range))
        return InstanceObservation(self.track_id(oid, index), label, score, mask, box_xyxy=_box(mask))

    def _false_positive(self, shape: tuple[int, int], index: int, j: int,
                        rng: np.random.Generator) -> InstanceObservation:
        h, w = shape
        cy, cx = rng.uniform(0.1 * h, 0.9 * h), rng.uniform(0.1 * w, 0.9 * w)
        ry, rx = rng.uniform(0.03, 0.12) * h, rng.uniform(0.03, 0.12) * w
        y0, y1, x0, x1 = max(int(cy - ry), 0), min(int(cy + ry) + 2, h), max(int(cx - rx), 0), min(int(cx + rx) + 2, w)
        yy, xx = np.ogrid[y0:y1, x0:x1]
        mask = np.zeros(shape, bool)
        mask[y0:y1, x0:x1] = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1.0
        label = self.fp_labels[int(rng.integers(len(self.fp_labels)))]
        score = float(rng.uniform(*self.preset.false_positive_score_range))
        return InstanceObservation(FALSE_POSITIVE_ID_BASE + index * 16 + j, label, score, mask, box_xyxy=_box(mask))

    # ------------------------------------------------------------ Perception protocol
    def process(self, frame: Frame) -> list[FramePerception]:
        return [self.perceive(frame)]

    def flush(self) -> list[FramePerception]:
        return []

    def reset(self) -> None:
        """Nothing to reset: every output depends only on the seed and the frame index."""


def _extent(mask: np.ndarray) -> Optional[tuple[int, int, int, int]]:
    """(x0, y0, x1, y1) pixel bounds of a mask (exclusive upper bounds), None if empty."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if len(rows) == 0:
        return None
    return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1


def _box(mask: np.ndarray) -> tuple[float, float, float, float]:
    return tuple(float(v) for v in _extent(mask))


def _jitter_mask(crop: np.ndarray, px: int, rng: np.random.Generator) -> np.ndarray:
    """Erode or dilate (50/50) a mask crop (padded by > ``px``) by ``px`` pixels, square element."""
    from scipy import ndimage

    struct = np.ones((2 * px + 1, 2 * px + 1), bool)
    op = ndimage.binary_dilation if rng.random() < 0.5 else ndimage.binary_erosion
    return op(crop, structure=struct, border_value=0)
