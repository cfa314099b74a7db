"""Track bookkeeping shared by trackers: confidence-weighted label votes, box IoU, and a
weight-free box tracker (greedy IoU matching, box-shaped masks) for when SAM2 is not used."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..geometry import mask_box as pixel_box
from ..types import Frame, InstanceObservation
from .base import Detection


class LabelVotes:
    """Track name = label with the largest sum of detection confidences (the paper's voting)."""

    def __init__(self) -> None:
        self._votes: dict[str, float] = defaultdict(float)
        self.best_score = 0.0

    def add(self, label: str, score: float) -> None:
        self._votes[label] += float(score)
        self.best_score = max(self.best_score, float(score))

    @property
    def label(self) -> str:
        return max(self._votes.items(), key=lambda kv: (kv[1], kv[0]))[0] if self._votes else "object"

    @property
    def confidence(self) -> float:
        total = sum(self._votes.values())
        return self._votes[self.label] / total if total > 0 else 0.0


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def box_ious(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """``box_iou`` of one (x0, y0, x1, y1) box with each row of ``boxes`` (N, 4), at once."""
    w = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    h = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    union = (box[2] - box[0]) * (box[3] - box[1]) + (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return np.where(union - w * h > 0, w * h / np.maximum(union - w * h, 1e-12), 0.0)


def mask_box(mask: np.ndarray) -> Optional[tuple[float, float, float, float]]:
    """``geometry.mask_box`` as a float (x0, y0, x1, y1) box, the detector boxes' type."""
    box = pixel_box(mask)
    return None if box is None else (float(box[0]), float(box[1]), float(box[2]), float(box[3]))


def box_mask(box: Sequence[float], shape_hw: tuple[int, int]) -> np.ndarray:
    h, w = shape_hw
    x0, y0 = int(np.clip(np.floor(box[0]), 0, w)), int(np.clip(np.floor(box[1]), 0, h))
    x1, y1 = int(np.clip(np.ceil(box[2]), 0, w)), int(np.clip(np.ceil(box[3]), 0, h))
    m = np.zeros((h, w), dtype=bool)
    m[y0:y1, x0:x1] = True
    return m


class BoxTracker:
    """Greedy IoU tracker over detection boxes; masks are the boxes. Between detections the last
    boxes are reported for ``hold_frames`` frames. No weights; a fallback to SAM2."""

    name = "box"

    def __init__(self, iou_match: float = 0.3, hold_frames: int = 4):
        self.iou_match, self.hold_frames = iou_match, hold_frames
        self.reset()

    def reset(self) -> None:
        self._tracks: dict[int, dict[str, Any]] = {}
        self._next_id = 1

    def update(self, frame: Frame, detections: Optional[Sequence[Detection]]) -> list[InstanceObservation]:
        for tr in self._tracks.values():
            tr["age"] += 1
        if detections is not None:
            self._associate(detections)
        self._tracks = {k: v for k, v in self._tracks.items() if v["age"] <= self.hold_frames}
        return [InstanceObservation(tid, tr["votes"].label, tr["score"], box_mask(tr["box"], frame.shape_hw),
                                    box_xyxy=tuple(tr["box"])) for tid, tr in sorted(self._tracks.items())]

    def _associate(self, detections: Sequence[Detection]) -> None:
        free = set(self._tracks)
        for det in sorted(detections, key=lambda d: -d.score):
            best = max(free, key=lambda t: box_iou(self._tracks[t]["box"], det.box_xyxy), default=None)
            if best is None or box_iou(self._tracks[best]["box"], det.box_xyxy) < self.iou_match:
                best, self._next_id = self._next_id, self._next_id + 1
                self._tracks[best] = {"votes": LabelVotes()}
            else:
                free.discard(best)
            tr = self._tracks[best]
            tr["votes"].add(det.label, det.score)
            tr.update(box=det.box_xyxy, score=float(det.score), age=0)


def build(cfg: Mapping[str, Any]) -> BoxTracker:
    return BoxTracker(**{k: v for k, v in cfg.items() if k != "name"})
