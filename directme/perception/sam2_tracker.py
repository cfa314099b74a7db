"""SAM2 mask tracks on a live stream: one frame at a time, bounded memory.

SAM2's official video predictor loads the whole video and keeps every frame's outputs. Here
each frame's image features are computed once, every track runs SAM2's `track_step` with its
own memory bank, and the bank keeps only the last ``num_maskmem`` frames plus the last
``max_cond_frames`` prompted frames, so memory is constant on hours-long streams.
Re-detection (detections given on some frames): a detection overlapping a track's mask
(IoU >= ``match_iou``) re-prompts that track with the box (refresh) and votes for its label;
a detection overlapping the last box of a currently lost track with that track's voted label
revives it (same id); other detections start new tracks. Tracks absent for ``max_lost`` frames
are dropped; identity across long gaps is the memory's job (3D association).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .._compat.device import resolve_device
from .._compat.torchvision_cpu import import_torch_stack
from ..errors import InvalidInputError
from ..types import Frame, InstanceObservation
from .base import Detection
from .tracks import LabelVotes, box_iou, mask_box
from .weights import RANDOM, WeightSpec, find_weights

MODELS = {"tiny": ("sam2.1_hiera_t.yaml", "facebook/sam2.1-hiera-tiny", "sam2.1_hiera_tiny.pt"),
          "small": ("sam2.1_hiera_s.yaml", "facebook/sam2.1-hiera-small", "sam2.1_hiera_small.pt"),
          "base_plus": ("sam2.1_hiera_b+.yaml", "facebook/sam2.1-hiera-base-plus", "sam2.1_hiera_base_plus.pt"),
          "large": ("sam2.1_hiera_l.yaml", "facebook/sam2.1-hiera-large", "sam2.1_hiera_large.pt")}
_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
_STD = np.array([0.229, 0.224, 0.225], np.float32)


def build_sam2_model(model: str = "tiny", weights: Optional[str] = None, device: str = "auto",
                     image_size: int = 1024) -> Any:
    """SAM2 from its packaged config at ``image_size`` (multiple of 32; 1024 = trained size)."""
    if model not in MODELS:
        raise InvalidInputError(f"sam2 model must be one of {sorted(MODELS)}, got {model!r}")
    if image_size % 32:
        raise InvalidInputError(f"sam2 image_size must be a multiple of 32, got {image_size}")
    device = resolve_device(device, "tracker 'sam2' device")
    build_sam = import_torch_stack("sam2.build_sam", "perception", "sam2")
    cfg, repo, filename = MODELS[model]
    ckpt = None if weights == RANDOM else str(find_weights(WeightSpec(filename, repo), weights, f"tracker 'sam2' "
                                                                                              f"({model})"))
    side = image_size // 16
    overrides = [f"++model.image_size={image_size}",
                 f"++model.memory_attention.layer.self_attention.feat_sizes=[{side},{side}]",
                 f"++model.memory_attention.layer.cross_attention.feat_sizes=[{side},{side}]"]
    return build_sam.build_sam2(f"configs/sam2.1/{cfg}", ckpt_path=ckpt, device=device,
                                hydra_overrides_extra=overrides)


class Sam2StreamTracker:
    name = "sam2"

    def __init__(self, model: str = "tiny", weights: Optional[str] = None, device: str = "auto",
                 image_size: int = 1024, match_iou: float = 0.5, max_lost: int = 10, max_tracks: int = 32,
                 max_cond_frames: int = 4, min_mask_pixels: int = 16):
        self.torch = import_torch_stack("torch", "perception")
        device = resolve_device(device, "tracker 'sam2' device")
        self.model = build_sam2_model(model, weights, device, image_size)
        self.device, self.image_size = device, image_size
        self.match_iou, self.max_lost, self.max_tracks = match_iou, max_lost, max_tracks
        self.max_cond_frames, self.min_mask_pixels = max_cond_frames, min_mask_pixels
        self.reset()

    def reset(self) -> None:
        self._tracks: dict[int, dict[str, Any]] = {}
        self._next_id, self._t = 1, -1

    def _features(self, rgb: np.ndarray) -> tuple[Any, Any, Any]:
        from PIL import Image

        img = Image.fromarray(rgb).resize((self.image_size, self.image_size), Image.BILINEAR)
        x = (np.asarray(img, np.float32) / 255.0 - _MEAN) / _STD
        t = self.torch.from_numpy(x.transpose(2, 0, 1)[None]).to(self.device)
        _, feats, pos, sizes = self.model._prepare_backbone_features(self.model.forward_image(t))
        return feats, pos, sizes

    def _box_prompt(self, box: Sequence[float], shape_hw: tuple[int, int]) -> dict[str, Any]:
        h, w = shape_hw
        pts = np.array([[box[0], box[1]], [box[2], box[3]]], np.float32) / [w, h] * self.image_size
        return {"point_coords": self.torch.from_numpy(pts[None]).to(self.device),
                "point_labels": self.torch.tensor([[2, 3]], dtype=self.torch.int32, device=self.device)}

    def _step(self, tr: dict[str, Any], feats: tuple[Any, Any, Any], prompt: Optional[dict[str, Any]]) -> Any:
        first = not tr["out"]["cond_frame_outputs"]
        out = self.model.track_step(frame_idx=self._t, is_init_cond_frame=first, current_vision_feats=feats[0],
                                    current_vision_pos_embeds=feats[1], feat_sizes=feats[2], point_inputs=prompt,
                                    mask_inputs=None, output_dict=tr["out"], num_frames=self._t + 2)
        slim = {k: out[k] for k in ("maskmem_features", "maskmem_pos_enc", "pred_masks", "obj_ptr",
                                    "object_score_logits") if k in out}
        kind = "cond_frame_outputs" if prompt is not None else "non_cond_frame_outputs"
        tr["out"][kind][self._t] = slim
        self._prune(tr["out"])
        return out

    def _prune(self, out: dict[str, dict[int, Any]]) -> None:
        """Bounded memory: keep the frames SAM2 can still attend to, drop the rest."""
        horizon = self._t - self.model.num_maskmem * self.model.memory_temporal_stride_for_eval
        for k in [k for k in out["non_cond_frame_outputs"] if k < horizon]:
            del out["non_cond_frame_outputs"][k]
        for k in sorted(out["cond_frame_outputs"])[:-self.max_cond_frames]:
            del out["cond_frame_outputs"][k]

    def _mask(self, out: Any, shape_hw: tuple[int, int]) -> tuple[np.ndarray, bool]:
        logits = self.torch.nn.functional.interpolate(out["pred_masks"].float(), size=shape_hw, mode="bilinear",
                                                      align_corners=False)[0, 0]
        present = float(out["object_score_logits"].flatten()[0]) > 0 if "object_score_logits" in out else True
        return (logits > 0).cpu().numpy(), present

    def update(self, frame: Frame, detections: Optional[Sequence[Detection]]) -> list[InstanceObservation]:
        self._t += 1
        hw = frame.shape_hw
        with self.torch.inference_mode():
            feats = self._features(frame.rgb)
            prompts = self._match(detections or [], hw)
            for tid, tr in list(self._tracks.items()):
                mask, present = self._mask(self._step(tr, feats, prompts.pop(tid, None)), hw)
                present = present and int(mask.sum()) >= self.min_mask_pixels
                tr["mask"] = mask if present else None
                if present:
                    tr["box"] = mask_box(mask)
                tr["lost"] = 0 if present else tr["lost"] + 1
                if tr["lost"] > self.max_lost:
                    del self._tracks[tid]
        return [InstanceObservation(tid, tr["votes"].label, min(1.0, tr["score"]), tr["mask"],
                                    box_xyxy=tr["box"])
                for tid, tr in sorted(self._tracks.items()) if tr["mask"] is not None]

    def _match(self, detections: Sequence[Detection], hw: tuple[int, int]) -> dict[int, dict[str, Any]]:
        """Box prompts per track id: refreshed tracks (visible ones by their mask box, lost ones by
        their last box and only with their voted label) and new tracks from unmatched detections."""
        prompts: dict[int, dict[str, Any]] = {}
        boxes = {tid: (tr["box"], None if tr["mask"] is not None else tr["votes"].label)
                 for tid, tr in self._tracks.items()}
        for det in sorted(detections, key=lambda d: -d.score):
            ious = {tid: box_iou(b, det.box_xyxy) for tid, (b, label) in boxes.items()
                    if b is not None and tid not in prompts and label in (None, det.label)}
            tid = max(ious, key=ious.get, default=None)
            if tid is None or ious[tid] < self.match_iou:
                if len(self._tracks) >= self.max_tracks:
                    continue
                tid, self._next_id = self._next_id, self._next_id + 1
                self._tracks[tid] = {"votes": LabelVotes(), "lost": 0, "mask": None, "box": None, "score": 0.0,
                                     "out": {"cond_frame_outputs": {}, "non_cond_frame_outputs": {}}}
            tr = self._tracks[tid]
            tr["votes"].add(det.label, det.score)
            tr["score"] = float(det.score)
            prompts[tid] = self._box_prompt(det.box_xyxy, hw)
        return prompts

    def memory_frames(self) -> int:
        """How many per-frame SAM2 outputs are held in total (bounded; for tests and monitoring)."""
        return sum(len(tr["out"]["cond_frame_outputs"]) + len(tr["out"]["non_cond_frame_outputs"])
                   for tr in self._tracks.values())


def build(cfg: Mapping[str, Any]) -> Sam2StreamTracker:
    return Sam2StreamTracker(**{k: v for k, v in cfg.items() if k != "name"})
