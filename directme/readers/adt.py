"""Aria Digital Twin (ADT) ground truth for the RGB camera: depth and instance masks.

An ADT sequence folder ships, beside ``video.vrs``, ``depth_images.vrs`` (uint16 millimetres along the
camera's z axis, 0 = no surface) and ``segmentations.vrs`` (uint64 instance ids, 0 = none) rendered from
the digital twin for each camera, and ``instances.json`` (id -> name, category). The RGB camera's GT
stream is the one of the RGB image's size. GT images are rectified with the RGB image (the same
`AriaRectifier`), so depth and masks line up with ``Frame.rgb`` pixel for pixel.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from ..errors import InvalidInputError
from ..types import InstanceObservation
from .aria_folder import open_vrs

PathLike = Union[str, Path]


@dataclass(frozen=True)
class AdtGroundTruthConfig:
    """How ADT ground truth is attached to RGB frames."""

    max_gap_s: float = 0.001  # GT image used for an RGB frame only within this time (ADT GT: ~0.1 ms apart)
    min_instance_frac: float = 2.5e-4  # masks under this fraction of the image are not reported (64 px at 512x512)
    skip_categories: tuple[str, ...] = ("person",)  # GT categories never reported as objects


class AdtGroundTruth:
    """Ground-truth depth and instances of an ADT sequence for the RGB camera, looked up by device time."""

    def __init__(self, depth_vrs: PathLike, rectifier: Any, rgb_size: tuple[int, int],
                 segmentation_vrs: Optional[PathLike] = None, instances_json: Optional[PathLike] = None,
                 config: AdtGroundTruthConfig = AdtGroundTruthConfig()):
        self.rectifier, self.config = rectifier, config
        self.depth = _GtStream(open_vrs(depth_vrs), Path(depth_vrs), rgb_size)
        self.segmentation = (_GtStream(open_vrs(segmentation_vrs), Path(segmentation_vrs), rgb_size)
                             if segmentation_vrs is not None else None)
        self.names: dict[int, str] = read_adt_categories(instances_json) if instances_json is not None else {}
        if self.segmentation is not None and not self.names:
            raise InvalidInputError(f"{segmentation_vrs}: instance masks need the sequence's instances.json")

    def covers(self, t_device_s: float) -> bool:
        """Whether a GT depth image exists within ``max_gap_s`` of this device time."""
        return self.depth.nearest(t_device_s, self.config.max_gap_s) is not None

    def depth_m(self, t_device_s: float) -> Optional[np.ndarray]:
        """Rectified GT depth (float32 metres, 0 = invalid) at this device time, or None."""
        raw = self.depth.image(t_device_s, self.config.max_gap_s)
        if raw is None:
            return None
        return (self.rectifier.depth(raw).astype(np.float32) / 1000.0).astype(np.float32)

    def instances(self, t_device_s: float) -> tuple[InstanceObservation, ...]:
        """GT instances visible at this device time: track id = ADT instance id, label = ADT category."""
        raw = None if self.segmentation is None else self.segmentation.image(t_device_s, self.config.max_gap_s)
        if raw is None:
            return ()
        ids = self.rectifier.labels(raw)
        uids, counts = np.unique(ids, return_counts=True)
        min_px = self.config.min_instance_frac * ids.size
        out = []
        for uid, n in zip(uids.tolist(), counts.tolist()):
            label = self.names.get(int(uid))
            if uid == 0 or label is None or n < min_px or label in self.config.skip_categories:
                continue
            out.append(InstanceObservation(track_id=int(uid), label=label, score=1.0, mask=ids == uid))
        return tuple(out)


class _GtStream:
    """The image stream of a GT VRS file whose image size is the RGB camera's (ADT: 345-1, 400-1)."""

    def __init__(self, provider: Any, path: Path, rgb_size: tuple[int, int]):
        from projectaria_tools.core.sensor_data import TimeDomain

        self.provider, self.path = provider, path
        for sid in provider.get_all_streams():
            cfg = provider.get_image_configuration(sid)
            if (int(cfg.image_width), int(cfg.image_height)) == tuple(rgb_size):
                self.stream_id = sid
                break
        else:
            raise InvalidInputError(f"{path} has no stream of the RGB camera's size {rgb_size[0]}x{rgb_size[1]}")
        self.t_s = np.asarray(provider.get_timestamps_ns(self.stream_id, TimeDomain.DEVICE_TIME), np.int64) * 1e-9

    def nearest(self, t_s: float, max_gap_s: float) -> Optional[int]:
        if not len(self.t_s):
            return None
        i = int(np.argmin(np.abs(self.t_s - t_s)))
        return i if abs(self.t_s[i] - t_s) <= max_gap_s else None

    def image(self, t_s: float, max_gap_s: float) -> Optional[np.ndarray]:
        i = self.nearest(t_s, max_gap_s)
        if i is None:
            return None
        data, _ = self.provider.get_image_data_by_index(self.stream_id, i)
        return data.to_numpy_array()


def read_adt_categories(path: PathLike) -> dict[int, str]:
    """ADT ``instances.json``: instance id -> category ("refrigerator", "dining table", ...)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {int(k): str(v.get("category") or v.get("prototype_name") or v["instance_name"]).strip()
                for k, v in data.items()}
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as exc:
        raise InvalidInputError(f"{path}: not an ADT instances.json ({exc})") from exc
