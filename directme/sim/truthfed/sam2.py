"""Truth-fed SAM2: the stream tracker's network pieces return what a trained SAM2 returns on a
simulator episode, so the tracker's own code - preprocessing, SAM2's ``track_step``, the per-track
memory bank and its pruning, hole filling, resizing, re-detection and ids - runs unchanged on it.

Replaced on the tracker's model (this instance only): the image encoder, the memory attention, the
SAM heads and the memory encoder. The truth flows through the tracker's own data path:

- image encoder: the frame's instance ids, rendered at the low-resolution mask grid (``image_size/4``
  square: the frame squeezed as the preprocessing resizes it), in channel 0 of the finest feature
  level (SAM2 hands that level to its heads);
- heads on a prompted frame: the followed object is the instance whose bounding box best overlaps
  the box prompt (IoU on the mask grid); its id goes into the object pointer (channel 0);
- memory attention on the other frames: the id is read back from the object pointers SAM2 would
  attend to in the track's memory (its conditioning frames and the last ``max_obj_ptrs_in_encoder``
  frames; the newest pointer that carries an id) and passed to the heads in the memory-conditioned
  feature (channel 0). No side table: a track whose memory lost its pointers loses its object;
- heads: mask logits ``+mask_logit`` inside the object's instance mask and ``-mask_logit`` outside;
  object score ``+score_logit`` when at least ``min_visible_pixels`` mask-grid pixels show it, else
  ``-score_logit`` with SAM2's no-object mask (``NO_OBJ_SCORE``) and a no-object pointer (id 0);
- memory encoder: zero memory features of SAM2's shape (identity lives in the pointers).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...errors import InvalidInputError
from ...perception.tracks import box_iou
from .source import TruthSource

NO_OBJ_SCORE = -1024.0  # SAM2's mask score of a frame where the object is absent (sam2_base.NO_OBJ_SCORE)


def install(backend: Any, truth: TruthSource, mask_logit: float = 10.0, score_logit: float = 10.0,
            min_visible_pixels: int = 1) -> None:
    """Replace the networks of ``backend`` (a ``Sam2StreamTracker``) with ground-truth stand-ins.

    ``mask_logit``: magnitude of the low-res mask logits (a trained SAM2 gives about 5-20);
    ``score_logit``: magnitude of the object score logits; ``min_visible_pixels``: mask-grid pixels of
    the object needed to call it visible. ``truth.register(frame)`` must be called before each
    ``backend.update(frame, ...)`` (the image encoder renders ``truth.current_index``).
    """
    model = getattr(backend, "model", None)
    if model is None or not hasattr(model, "track_step"):
        raise InvalidInputError("truth-fed sam2: install() needs a Sam2StreamTracker")
    if mask_logit <= 0 or score_logit <= 0 or min_visible_pixels < 1:
        raise InvalidInputError("truth-fed sam2: mask_logit and score_logit must be > 0, min_visible_pixels >= 1")
    stand_in = _TruthSam2(model, truth, mask_logit, score_logit, min_visible_pixels)
    model.forward_image = stand_in.forward_image
    model._prepare_memory_conditioned_features = stand_in.read_memory
    model._forward_sam_heads = stand_in.heads
    model._encode_new_memory = stand_in.encode_memory


class _TruthSam2:
    def __init__(self, model: Any, truth: TruthSource, mask_logit: float, score_logit: float,
                 min_visible_pixels: int):
        import torch

        self.torch, self.model, self.truth = torch, model, truth
        self.mask_logit, self.score_logit, self.min_visible_pixels = mask_logit, score_logit, min_visible_pixels
        self.grid = model.image_size // 4
        self._rendered: tuple[Optional[int], Any] = (None, None)

    def _ids(self) -> Any:
        """Instance ids of the current frame on the mask grid, as float32 (exact for ids < 2**24)."""
        index = self.truth.current_index
        if index is None:
            raise InvalidInputError("truth-fed sam2: no frame registered (call truth.register(frame) first)")
        if self._rendered[0] != index:
            K = self.truth.intrinsics.resized(self.grid, self.grid)
            ids = self.truth.render(index, K).instance_ids
            self._rendered = (index, self.torch.from_numpy(ids.astype(np.float32)))
        return self._rendered[1]

    def forward_image(self, img_batch: Any) -> dict[str, Any]:
        """Backbone output of SAM2's shapes (levels at 1/4, 1/8, 1/16) with the ids in level 0."""
        B, dev, S, C = img_batch.shape[0], img_batch.device, self.model.image_size, self.model.hidden_dim
        fpn = [self.torch.zeros(B, ch, S // s, S // s, device=dev) for ch, s in ((C // 8, 4), (C // 4, 8), (C, 16))]
        fpn[0][:, 0] = self._ids().to(dev)
        pos = [self.torch.zeros(B, C, S // s, S // s, device=dev) for s in (4, 8, 16)]
        return {"vision_features": fpn[-1], "vision_pos_enc": pos, "backbone_fpn": fpn}

    def read_memory(self, frame_idx: int, is_init_cond_frame: bool, current_vision_feats: Any,
                    current_vision_pos_embeds: Any, feat_sizes: Any, output_dict: dict[str, dict[int, Any]],
                    num_frames: int, track_in_reverse: bool = False) -> Any:
        """The memory-conditioned feature: the followed id (from the pointers in memory) in channel 0."""
        B, C = current_vision_feats[-1].shape[1], self.model.hidden_dim
        H, W = feat_sizes[-1]
        feat = self.torch.zeros(B, C, H, W, device=current_vision_feats[-1].device)
        if not is_init_cond_frame:
            window = min(num_frames, self.model.max_obj_ptrs_in_encoder)
            seen = {t: out for t, out in output_dict["cond_frame_outputs"].items() if t <= frame_idx}
            seen.update({t: out for t, out in output_dict["non_cond_frame_outputs"].items()
                         if frame_idx - window < t < frame_idx})
            for t in sorted(seen, reverse=True):
                ptr_id = seen[t]["obj_ptr"][:, 0]
                if bool((ptr_id > 0).all()):
                    feat[:, 0] = ptr_id[:, None, None]
                    break
        return feat

    def heads(self, backbone_features: Any, point_inputs: Optional[dict[str, Any]] = None, mask_inputs: Any = None,
              high_res_features: Any = None, multimask_output: bool = False) -> tuple[Any, ...]:
        """SAM2's ``_forward_sam_heads`` outputs for the followed object."""
        torch = self.torch
        ids = high_res_features[0][:, 0].round()  # (B, grid, grid)
        B = ids.shape[0]
        if point_inputs is not None:
            target = torch.tensor([self._prompted_id(ids[b], point_inputs["point_coords"][b, :2])
                                   for b in range(B)], dtype=ids.dtype, device=ids.device)
        else:
            target = backbone_features[:, 0, 0, 0].round()
        inside = (ids == target[:, None, None]) & (target[:, None, None] > 0)
        visible = inside.flatten(1).sum(1) >= self.min_visible_pixels
        low = torch.where(inside, self.mask_logit, -self.mask_logit)
        low = torch.where(visible[:, None, None], low, NO_OBJ_SCORE)[:, None].float()
        high = torch.nn.functional.interpolate(low, size=(self.model.image_size,) * 2, mode="bilinear",
                                               align_corners=False)
        n = 3 if multimask_output else 1
        obj_ptr = torch.zeros(B, self.model.hidden_dim, device=ids.device)
        obj_ptr[:, 0] = torch.where(visible, target, 0.0)
        score = torch.where(visible, self.score_logit, -self.score_logit)[:, None].float()
        ious = torch.ones(B, n, device=ids.device)
        return low.expand(-1, n, -1, -1), high.expand(-1, n, -1, -1), ious, low, high, obj_ptr, score

    def _prompted_id(self, ids: Any, box_pts: Any) -> float:
        """The instance whose bounding box on the mask grid best overlaps the box prompt (0: none)."""
        x0, y0, x1, y1 = (box_pts.flatten() * self.grid / self.model.image_size).tolist()
        grid = ids.cpu().numpy().astype(np.int64)
        best, best_iou = 0, 0.0
        for oid in np.unique(grid[grid > 0]):
            ys, xs = np.nonzero(grid == oid)
            iou = box_iou((x0, y0, x1, y1), (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1))
            if iou > best_iou:
                best, best_iou = int(oid), iou
        return float(best)

    def encode_memory(self, current_vision_feats: Any, feat_sizes: Any, pred_masks_high_res: Any,
                      object_score_logits: Any, is_mask_from_pts: bool) -> tuple[Any, list[Any]]:
        """Memory features and their position encoding in SAM2's shapes (zeros)."""
        B, (H, W) = current_vision_feats[-1].shape[1], feat_sizes[-1]
        zeros = self.torch.zeros(B, self.model.mem_dim, H, W, device=current_vision_feats[-1].device)
        return zeros, [zeros.clone()]
