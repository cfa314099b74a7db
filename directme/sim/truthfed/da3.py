"""Truth-fed stand-in for Depth Anything 3's network inside our DA3 backend.

``install(backend, truth)`` replaces the forward of DA3's inner network (``backend.model.model``, and
the metric-scale model's when the backend has one). DA3's ``inference`` still preprocesses the
images (resize to ``process_res``), our ``_fp32_forward`` still calls the network, and DA3's output
conversion still builds the ``Prediction``; the stand-in returns the simulator's ground truth exactly
as the trained network returns it for the images it is given:

- the processed image: DA3 resizes the longest side to ``process_res`` and then each side to the
  nearest multiple of 14 (``*_resize`` methods; ``*_crop`` methods centre-crop to the multiple
  instead), so the truth is rendered through the episode intrinsics resized / cropped the same way;
- multi-view presets: z-depth and world-to-camera extrinsics (OpenCV, (N, 3, 4)) in the chunk's own
  frame: the reference view's camera (view 0 for ``ref_view_strategy`` "first", N // 2 for "middle",
  a seeded random view for DA3's feature-based default), lengths times one arbitrary scale per chunk
  (log-uniform in ``scale_range``); the metric nested preset: in metres. Intrinsics as DA3's camera
  head gives them: focal lengths of the processed image, principal point at (W / 2, H / 2);
- da3metric-large: canonical depth, metres * 300 / mean focal (DA3's ``apply_metric_scaling`` inverts it);
- da3mono-large: relative depth, each image times its own arbitrary scale.
Pixels seeing nothing get the frame's farthest depth and the sky flag, as DA3's sky handling does.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ...errors import InvalidInputError
from ...geometry import Intrinsics
from .source import TruthSource

PATCH = 14  # DA3's ViT patch: processed sides are multiples of it
CANONICAL_FOCAL_PX = 300.0  # da3metric-large: metres = canonical * focal_px / 300


def processed_intrinsics(K: Intrinsics, process_res: int, method: str) -> Intrinsics:
    """Intrinsics of the image DA3's InputProcessor makes from an image with intrinsics ``K``: a boundary
    resize (longest side for "upper_bound_*", shortest for "lower_bound_*") to ``process_res``, then each
    side to a multiple of 14 by a small resize ("*_resize") or a centre crop ("*_crop")."""
    w, h = K.width, K.height
    side = max(w, h) if method.startswith("upper_bound") else min(w, h)
    if not method.startswith(("upper_bound", "lower_bound")) or not method.endswith(("resize", "crop")):
        raise InvalidInputError(f"truth-fed da3: unknown process_res_method {method!r}")
    if side != process_res:
        s = process_res / float(side)
        K = K.resized(max(1, int(round(w * s))), max(1, int(round(h * s))))
    if method.endswith("resize"):
        def nearest(x: int) -> int:
            down = (x // PATCH) * PATCH
            return down + PATCH if abs(down + PATCH - x) <= abs(x - down) else down
        return K.resized(max(1, nearest(K.width)), max(1, nearest(K.height)))
    nw, nh = (K.width // PATCH) * PATCH, (K.height // PATCH) * PATCH
    return K.cropped((K.width - nw) // 2, (K.height - nh) // 2, nw, nh)


class _Stand:
    """The truth the network would return for the chunks it is given (one per DA3 model)."""

    def __init__(self, truth: TruthSource, kind: str, scale_range: tuple[float, float], seed: int):
        self.truth, self.kind, self.scale_range = truth, kind, scale_range
        self.rng = np.random.default_rng(seed)
        self.indices: list[int] = []
        self.process: tuple[int, str] = (504, "upper_bound_resize")

    def _scale(self, n: int = 1) -> np.ndarray:
        lo, hi = self.scale_range
        return np.exp(self.rng.uniform(math.log(lo), math.log(hi), size=n))

    def inference_spy(self, real: Any) -> Any:
        """Wrap DA3's ``inference``: note which frames (by image identity) and preprocessing it was given."""
        def inference(image: list, *args: Any, **kwargs: Any) -> Any:
            self.indices = [self.truth.index_of(im) for im in image]
            self.process = (kwargs.get("process_res", 504), kwargs.get("process_res_method", "upper_bound_resize"))
            return real(image, *args, **kwargs)
        return inference

    def forward(self, x: Any, extrinsics: Any = None, intrinsics: Any = None, export_feat_layers: Any = None,
                infer_gs: bool = False, use_ray_pose: bool = False, ref_view_strategy: str = "saddle_balanced") -> Any:
        import torch
        from addict import Dict

        n, (h, w) = x.shape[1], x.shape[-2:]
        if n != len(self.indices):
            raise InvalidInputError(f"truth-fed da3: the network got {n} images, inference {len(self.indices)}")
        K = processed_intrinsics(self.truth.intrinsics, *self.process)
        if (K.height, K.width) != (h, w):
            raise InvalidInputError(f"truth-fed da3: processed image {h}x{w}, derived {K.height}x{K.width}")
        depth = np.stack([self.truth.render(i, K).depth_m for i in self.indices]).astype(np.float64)
        sky = depth <= 0
        for d, s in zip(depth, sky):
            d[s] = d[~s].max() if (~s).any() else 1.0
        out = Dict()
        if self.kind == "metric":
            depth = depth * CANONICAL_FOCAL_PX / ((K.fx + K.fy) / 2)
        elif self.kind == "mono":
            depth = depth * self._scale(n)[:, None, None]
        else:
            ref = 0 if ref_view_strategy == "first" or n < 3 else (
                n // 2 if ref_view_strategy == "middle" else int(self.rng.integers(n)))
            scale = 1.0 if self.kind == "nested" else float(self._scale()[0])
            T_ref = np.linalg.inv(self.truth.T_world_cam(self.indices[ref]).matrix)
            E = []
            for i in self.indices:
                T_ref_cam = T_ref @ self.truth.T_world_cam(i).matrix
                T_ref_cam[:3, 3] *= scale
                E.append(np.linalg.inv(T_ref_cam)[:3, :4])
            depth = depth * scale
            out.extrinsics = torch.tensor(np.stack(E)[None], dtype=torch.float32)
            Kp = np.array([[K.fx, 0, w / 2], [0, K.fy, h / 2], [0, 0, 1.0]])
            out.intrinsics = torch.tensor(np.tile(Kp, (1, n, 1, 1)), dtype=torch.float32)
            out.depth_conf = torch.tensor(np.where(sky, 1.0, 2.0)[None], dtype=torch.float32)
            if self.kind == "nested":
                out.is_metric, out.scale_factor = 1, 1.0
        out.depth = torch.tensor(depth[None], dtype=torch.float32)
        if self.kind in ("metric", "mono"):
            out.sky = torch.tensor(sky[None], dtype=torch.float32)
        out.aux = Dict()
        return out


def _kind(preset: str) -> str:
    return {"da3metric-large": "metric", "da3mono-large": "mono", "da3nested-giant-large": "nested"}.get(preset, "any")


def _install_one(api_model: Any, preset: str, truth: TruthSource, scale_range: tuple[float, float], seed: int) -> None:
    stand = _Stand(truth, _kind(preset), scale_range, seed)
    real = api_model.__dict__.get("_inference_before_truthfed", api_model.inference)  # installing again: rewrap
    api_model._inference_before_truthfed = real
    api_model.inference = stand.inference_spy(real)
    api_model.model.forward = stand.forward


def install(backend: Any, truth: TruthSource, scale_range: tuple[float, float] = (0.3, 3.0), seed: int = 0,
            metric_model_preset: Optional[str] = None) -> None:
    """Replace DA3's network in ``backend`` (a DepthAnything3Backend) by the ground truth of ``truth``.

    ``scale_range``: bounds of the arbitrary per-chunk scale (up-to-scale presets) and per-image scale
    (da3mono-large), drawn log-uniformly with ``seed``; ``metric_model_preset``: the preset of the
    backend's metric-scale model (default: "da3metric-large", the only one)."""
    lo, hi = scale_range
    if not 0 < lo <= hi:
        raise InvalidInputError(f"truth-fed da3: scale_range must be 0 < lo <= hi, got {scale_range}")
    _install_one(backend.model, backend.preset, truth, scale_range, seed)
    if getattr(backend, "metric_model", None) is not None:
        _install_one(backend.metric_model, metric_model_preset or "da3metric-large", truth, scale_range, seed + 1)
