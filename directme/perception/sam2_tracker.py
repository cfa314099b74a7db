"""SAM2 mask tracks on a live stream: one frame at a time, bounded memory.

Each track runs what SAM2's official video predictor (``SAM2VideoPredictor``, built with its video
settings) runs for one object when the frames arrive one by one: the same image preprocessing
(PIL's default bicubic resize to ``image_size``, ImageNet normalisation), a box prompt as a new
conditioning frame segmented without memory and encoded into memory from its binarised,
hole-filled mask, ``track_step`` on the other frames, mask memory stored in bfloat16, low-resolution
masks hole-filled (``fill_hole_area``) and resized bilinearly to the frame. Memory stays bounded on
hours-long streams: a track keeps the full memory of the frames SAM2 attends to (the last
``num_maskmem`` strided frames and its last ``max_cond_frames`` prompted frames; the official
predictor keeps every prompted frame) and only the small object pointers of the earlier frames that
SAM2 still reads (up to ``max_obj_ptrs_in_encoder`` back). As on a video longer than that window,
every frame reads up to ``max_obj_ptrs_in_encoder`` pointers.
Re-detection (detections given on some frames): every track first reads its memory on the frame;
a detection overlapping what a track shows there (mask box IoU >= ``match_iou``) re-prompts that
track with the box (a new conditioning frame; the memory-read result of the frame is dropped) and
votes for its label; a detection overlapping the last box of a track that does not see its object,
with that track's voted label, revives it (same id); other detections start new tracks. A track
that does not see its object keeps reading its memory and finds the object again under the same id;
tracks absent for ``max_lost`` frames are dropped; identity across long gaps is the memory's job
(3D association).
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
STREAM_FRAMES = 2 ** 31 - 1  # a stream's length as SAM2 sees it: unknown, longer than any pointer window
_MEMORY_KEYS = ("maskmem_features", "obj_ptr", "object_score_logits")


def build_sam2_model(model: str = "tiny", weights: Optional[str] = None, device: str = "auto",
                     image_size: int = 1024) -> Any:
    """SAM2's video predictor model (official video settings) from its packaged config at ``image_size``
    (multiple of 32; 1024 = trained size)."""
    if model not in MODELS:
        raise InvalidInputError(f"sam2 model must be one of {sorted(MODELS)}, got {model!r}")
    if image_size % 32:
        raise InvalidInputError(f"sam2 image_size must be a multiple of 32, got {image_size}")
    device = resolve_device(device, "tracker 'sam2' device")
    build_sam = import_torch_stack("sam2.build_sam", "perception", "sam2")
    cfg, repo, filename = MODELS[model]
    ckpt = None if weights == RANDOM else str(find_weights(WeightSpec(filename, repo), weights, f"tracker 'sam2' "
                                                                                              f"({model})"))
    return build_sam.build_sam2_video_predictor(f"configs/sam2.1/{cfg}", ckpt_path=ckpt, device=device,
                                                hydra_overrides_extra=size_overrides(image_size))


def size_overrides(image_size: int) -> list[str]:
    """Hydra overrides that run a packaged SAM2 config at ``image_size``."""
    side = image_size // 16
    return [f"++model.image_size={image_size}",
            f"++model.memory_attention.layer.self_attention.feat_sizes=[{side},{side}]",
            f"++model.memory_attention.layer.cross_attention.feat_sizes=[{side},{side}]"]


def fill_holes(logits: Any, max_area: int) -> Any:
    """SAM2's ``fill_holes_in_mask_scores`` on any device: background components (score <= 0,
    8-connected) of at most ``max_area`` pixels get the score 0.1. SAM2 ships this as a CUDA kernel
    and skips it where the kernel is missing; this computes it everywhere."""
    import cv2
    import torch

    if max_area <= 0:
        return logits
    background = (logits <= 0).to(torch.uint8).cpu().numpy()
    holes = np.zeros(background.shape, bool)
    for i in np.ndindex(*background.shape[:2]):
        _, labels, stats, _ = cv2.connectedComponentsWithStats(background[i], connectivity=8)
        small = stats[:, cv2.CC_STAT_AREA] <= max_area
        small[0] = False  # label 0: the foreground
        holes[i] = small[labels]
    return torch.where(torch.from_numpy(holes).to(logits.device), 0.1, logits)


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
        self.max_cond_frames, self.min_mask_pixels = max(1, max_cond_frames), min_mask_pixels
        self.reset()

    def reset(self) -> None:
        self._tracks: dict[int, dict[str, Any]] = {}
        self._next_id, self._t = 1, -1
        self._maskmem_pos_enc: Optional[list[Any]] = None  # the same for every frame and track: one copy

    def _features(self, rgb: np.ndarray) -> tuple[Any, Any, Any]:
        """The video predictor's frame loading (PIL's default resize, /255 in float64, ImageNet
        normalisation in float32), then the image encoder."""
        from PIL import Image

        img = np.asarray(Image.fromarray(rgb).resize((self.image_size, self.image_size), Image.BICUBIC))
        t = self.torch.from_numpy((img / 255.0).astype(np.float32).transpose(2, 0, 1))
        mean = self.torch.tensor(_MEAN)[:, None, None]
        std = self.torch.tensor(_STD)[:, None, None]
        t = ((t - mean) / std)[None].to(self.device)
        _, feats, pos, sizes = self.model._prepare_backbone_features(self.model.forward_image(t))
        return feats, pos, sizes

    def _box_prompt(self, box: Sequence[float], shape_hw: tuple[int, int]) -> dict[str, Any]:
        h, w = shape_hw
        pts = self.torch.tensor([float(v) for v in box], dtype=self.torch.float32).reshape(1, 2, 2)
        pts = pts / self.torch.tensor([w, h]) * self.image_size
        return {"point_coords": pts.to(self.device),
                "point_labels": self.torch.tensor([[2, 3]], dtype=self.torch.int32, device=self.device)}

    def _step(self, tr: dict[str, Any], feats: tuple[Any, Any, Any],
              prompt: Optional[dict[str, Any]]) -> tuple[Any, Any]:
        """One frame of one track, as the video predictor runs it: a prompted frame is a new
        conditioning frame (no memory read; memory encoded from its binarised hole-filled mask), any
        other frame reads the track's memory. Returns the hole-filled low-res mask logits and the
        object score logits."""
        m = self.model
        out = m.track_step(frame_idx=self._t, is_init_cond_frame=prompt is not None, current_vision_feats=feats[0],
                           current_vision_pos_embeds=feats[1], feat_sizes=feats[2], point_inputs=prompt,
                           mask_inputs=None, output_dict=tr["out"], num_frames=STREAM_FRAMES,
                           run_mem_encoder=prompt is None)
        low_res = fill_holes(out["pred_masks"], getattr(m, "fill_hole_area", 0))
        if prompt is not None:
            high_res = self.torch.nn.functional.interpolate(low_res, size=(m.image_size, m.image_size),
                                                            mode="bilinear", align_corners=False)
            out["maskmem_features"], out["maskmem_pos_enc"] = m._encode_new_memory(
                current_vision_feats=feats[0], feat_sizes=feats[2], pred_masks_high_res=high_res,
                object_score_logits=out["object_score_logits"], is_mask_from_pts=True)
        if self._maskmem_pos_enc is None:
            self._maskmem_pos_enc = [x[0:1].clone() for x in out["maskmem_pos_enc"]]
        entry = {k: out[k] for k in _MEMORY_KEYS}
        entry["maskmem_features"] = entry["maskmem_features"].to(self.torch.bfloat16)
        entry["maskmem_pos_enc"] = self._maskmem_pos_enc
        kind = "cond_frame_outputs" if prompt is not None else "non_cond_frame_outputs"
        tr["out"][kind][self._t] = entry
        self._prune(tr["out"])
        return low_res, out["object_score_logits"]

    def _prune(self, out: dict[str, dict[int, Any]]) -> None:
        """Bounded memory: full memory for the frames SAM2 can still attend to, only the object
        pointer for the older frames whose pointers it still reads, nothing before."""
        m = self.model
        horizon = self._t - m.num_maskmem * m.memory_temporal_stride_for_eval
        pointer_horizon = self._t - m.max_obj_ptrs_in_encoder
        frames = out["non_cond_frame_outputs"]
        for k in [k for k in frames if k < horizon]:
            if k <= pointer_horizon:
                del frames[k]
            elif "maskmem_features" in frames[k]:
                frames[k] = {"obj_ptr": frames[k]["obj_ptr"]}
        for k in sorted(out["cond_frame_outputs"])[:-self.max_cond_frames]:
            del out["cond_frame_outputs"][k]

    def _mask(self, low_res: Any, score: Any, shape_hw: tuple[int, int]) -> tuple[np.ndarray, bool]:
        logits = self.torch.nn.functional.interpolate(low_res.float(), size=shape_hw, mode="bilinear",
                                                      align_corners=False)[0, 0]
        mask = (logits > 0).cpu().numpy()
        return mask, float(score.flatten()[0]) > 0 and int(mask.sum()) >= self.min_mask_pixels

    def update(self, frame: Frame, detections: Optional[Sequence[Detection]]) -> list[InstanceObservation]:
        """Track every object on ``frame``; ``detections`` (on re-detection frames) are matched to what
        the tracks see on this frame, re-prompt the tracks they match and start the other tracks."""
        self._t += 1
        hw = frame.shape_hw
        with self.torch.inference_mode():
            feats = self._features(frame.rgb)
            seen = {tid: self._mask(*self._step(tr, feats, None), hw) for tid, tr in self._tracks.items()}
            for tid, prompt in self._match(detections or [], hw, seen).items():
                # a prompted frame is a new conditioning frame: its memory-read result is dropped
                self._tracks[tid]["out"]["non_cond_frame_outputs"].pop(self._t, None)
                seen[tid] = self._mask(*self._step(self._tracks[tid], feats, prompt), hw)
            for tid, (mask, present) in seen.items():
                tr = self._tracks[tid]
                tr["mask"] = mask if present else None
                if present:
                    tr["box"] = mask_box(mask)
                tr["lost"] = 0 if present else tr["lost"] + 1
                if tr["lost"] > self.max_lost:
                    del self._tracks[tid]
        return [InstanceObservation(tid, tr["votes"].label, min(1.0, tr["score"]), tr["mask"],
                                    box_xyxy=tr["box"])
                for tid, tr in sorted(self._tracks.items()) if tr["mask"] is not None]

    def _match(self, detections: Sequence[Detection], hw: tuple[int, int],
               seen: dict[int, tuple[np.ndarray, bool]]) -> dict[int, dict[str, Any]]:
        """Box prompts per track id: tracks that see their object on this frame by their mask box here,
        lost ones by their last box and only with their voted label; new tracks from unmatched detections."""
        prompts: dict[int, dict[str, Any]] = {}
        boxes = {}
        for tid, (mask, present) in seen.items():
            tr = self._tracks[tid]
            boxes[tid] = (mask_box(mask), None) if present else (tr["box"], tr["votes"].label)
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

    @property
    def n_tracks(self) -> int:
        """How many objects are being tracked now."""
        return len(self._tracks)

    def memory_frames(self) -> int:
        """How many frames' mask memories are held in total (bounded; for tests and monitoring)."""
        return sum(1 for tr in self._tracks.values() for kind in tr["out"].values() for e in kind.values()
                   if "maskmem_features" in e)

    def pointer_frames(self) -> int:
        """How many frames' object pointers are held in total (bounded; for tests and monitoring)."""
        return sum(len(kind) for tr in self._tracks.values() for kind in tr["out"].values())


def build(cfg: Mapping[str, Any]) -> Sam2StreamTracker:
    return Sam2StreamTracker(**{k: v for k, v in cfg.items() if k != "name"})
