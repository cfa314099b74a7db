"""Depth Anything 3: depth + camera poses from RGB, streamed over a long video in chunks.

Frames are buffered into chunks of ``chunk_size`` that overlap the previous chunk by
``overlap`` frames. Each chunk is one multi-view DA3 forward pass, expressed in its own
frame and scale; it is mapped into the stream's world frame (first camera = identity) by a
Sim(3) fitted on the overlap frames: scale = median ratio of the already-emitted depth to
the new depth on the overlap pixels, rotation = chordal mean of R_prev R_new^T, translation
from the camera centres (Umeyama on the centres when they span enough). Depth and intrinsics
come back at DA3's processed resolution and are resized to the input resolution here.

Poses given with the frames (device poses, an Aria MPS / TUM trajectory; ``pose_source``
"given", or "auto" when the first chunk carries poses) replace DA3's: each chunk's depth is
scaled to the given poses (ratio of the camera-centre spreads, given / predicted, when the
given centres span ``min_baseline_m``; else the overlap depth ratio to the previous chunk).

Presets: da3-small/base/large/giant predict depth + pose (up to scale); da3nested-giant-large
gives metres; da3mono-large (relative depth) and da3metric-large (canonical depth, converted
to metres with DA3's own rule: focal_px * raw / 300 at the processed resolution) predict
depth only, so they need given poses, and use the frame's intrinsics (or ``hfov_deg``).
For up-to-scale output the first chunk's scale is kept (set ``depth_scale`` if it is known).
"""
from __future__ import annotations

import logging
import sys
import types
from typing import Any, Mapping, Optional

import numpy as np

from .._compat.device import resolve_device
from .._compat.torchvision_cpu import import_torch_stack
from ..errors import BackendError, InvalidInputError
from ..geometry import Intrinsics, Pose
from ..types import Frame
from .alignment import sim3_matrix, umeyama
from .base import DepthPose, PoseSource
from .given import GivenDepthPose
from .weights import RANDOM, find_hf_model_dir

PRESETS = {"da3-small": "depth-anything/DA3-SMALL", "da3-base": "depth-anything/DA3-BASE",
           "da3-large": "depth-anything/DA3-LARGE", "da3-giant": "depth-anything/DA3-GIANT",
           "da3metric-large": "depth-anything/DA3METRIC-LARGE", "da3mono-large": "depth-anything/DA3MONO-LARGE",
           "da3nested-giant-large": "depth-anything/DA3NESTED-GIANT-LARGE"}
DEPTH_ONLY = frozenset({"da3mono-large", "da3metric-large"})  # no camera head: poses must be given
CANONICAL_METRIC = frozenset({"da3metric-large"})  # raw output * focal_px / 300 = metres
POSE_SOURCES = tuple(s.value for s in PoseSource)  # ("auto", "model", "given")


def import_da3() -> Any:
    """Import depth_anything_3.api; moviepy 2.x lacks `moviepy.editor`, which DA3 imports at module
    load for its Gaussian-splat video export (unused here): alias it to `moviepy`."""
    try:
        import moviepy.editor  # noqa: F401
    except ImportError:
        try:
            import moviepy

            sys.modules.setdefault("moviepy.editor", moviepy)
        except ImportError:
            sys.modules.setdefault("moviepy.editor", types.ModuleType("moviepy.editor"))
    return import_torch_stack("depth_anything_3.api", "perception", "depth-anything-3")


def _fp32_forward(self: Any, image: Any, extrinsics: Any = None, intrinsics: Any = None,
                  export_feat_layers: Any = None, infer_gs: bool = False, use_ray_pose: bool = False,
                  ref_view_strategy: str = "saddle_balanced") -> Any:
    """DA3's forward without its fp16 autocast (3.7x slower on CPU than fp32)."""
    import torch

    with torch.inference_mode():
        return self.model(image, extrinsics, intrinsics, export_feat_layers, infer_gs, use_ray_pose,
                          ref_view_strategy)


def _resize(a: np.ndarray, hw: tuple[int, int], nearest: bool = False) -> np.ndarray:
    import cv2

    interp = cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR
    return cv2.resize(np.ascontiguousarray(a, np.float32), (hw[1], hw[0]), interpolation=interp)


def overlap_depth_ratio(depth_prev: list[np.ndarray], depth_new: list[np.ndarray]) -> float:
    """Median per-pixel ratio previous / new depth on the overlap frames (the new chunk's scale)."""
    ratios = [dp[(dp > 0) & (dn > 0)] / dn[(dp > 0) & (dn > 0)] for dp, dn in zip(depth_prev, depth_new)]
    ratios = np.concatenate(ratios) if ratios else np.zeros(0)
    ratios = ratios[np.isfinite(ratios)]
    if not len(ratios):
        raise BackendError("da3: no valid depth on the chunk overlap; cannot align the chunk scale")
    return float(np.median(ratios))


def centre_spread_scale(c_pred: np.ndarray, c_given: np.ndarray, min_baseline_m: float) -> Optional[float]:
    """Scale s with c_given ~ s R c_pred + t from the RMS spreads of the camera centres (rotation-
    free, works from 2 frames); None when the given centres span less than ``min_baseline_m``."""
    cg, cp = np.asarray(c_given, np.float64).reshape(-1, 3), np.asarray(c_pred, np.float64).reshape(-1, 3)
    baseline = np.linalg.norm(cg[:, None] - cg[None], axis=-1).max() if len(cg) >= 2 else 0.0
    spread_p = float(np.sqrt(((cp - cp.mean(0)) ** 2).sum()))
    if baseline < min_baseline_m or spread_p <= 1e-9:
        return None
    return float(np.sqrt(((cg - cg.mean(0)) ** 2).sum()) / spread_p)


def fit_chunk_to_world(T_world_prev: list[np.ndarray], T_chunk_new: list[np.ndarray],
                       depth_prev: list[np.ndarray], depth_new: list[np.ndarray]) -> np.ndarray:
    """Sim(3) S (4x4, scale in the rotation block) with T_world_cam ~ S @ T_chunk_cam on the overlap."""
    s = overlap_depth_ratio(depth_prev, depth_new)
    M = sum(a[:3, :3] @ b[:3, :3].T for a, b in zip(T_world_prev, T_chunk_new))
    u, _, vt = np.linalg.svd(M)
    R = u @ np.diag([1, 1, np.linalg.det(u @ vt)]) @ vt
    c_prev = np.array([a[:3, 3] for a in T_world_prev])
    c_new = np.array([b[:3, 3] for b in T_chunk_new])
    spread = np.linalg.svd(c_new - c_new.mean(0), compute_uv=False) if len(c_new) >= 3 else np.zeros(3)
    if len(c_new) >= 3 and spread[1] > 1e-2 * max(spread[0], 1e-9) and spread[0] > 1e-3:
        s_u, R_u, _ = umeyama(c_new, c_prev, with_scale=True)
        if 0.5 < s_u / s < 2.0:  # centres agree with the depth scale: use their rotation
            R = R_u
    t = (c_prev - s * c_new @ R.T).mean(axis=0)
    return sim3_matrix(s, R, t)


def apply_sim3(S: np.ndarray, T_chunk_cam: np.ndarray) -> tuple[np.ndarray, float]:
    """Rigid pose S o T (scale moved out of the rotation) and the scale to apply to depth."""
    s = float(np.cbrt(np.linalg.det(S[:3, :3])))
    out = np.eye(4)
    out[:3, :3] = (S[:3, :3] / s) @ T_chunk_cam[:3, :3]
    out[:3, 3] = S[:3, :3] @ T_chunk_cam[:3, 3] + S[:3, 3]
    return out, s


class DepthAnything3Backend:
    """Streaming DA3 (see module docstring). ``weights``: local model folder, None (Hugging Face
    cache of the preset's repo) or "random"; ``process_res``: DA3's processing resolution;
    ``pose_source``: "model" (DA3's poses), "given" (the frames' T_world_cam, or ``trajectory`` looked
    up at ``frame.meta[time_key]`` with ``T_x_cam`` as in the 'given' backend) or "auto"."""

    name = "da3"

    def __init__(self, preset: str = "da3-large", weights: Optional[str] = None, device: str = "auto",
                 chunk_size: int = 16, overlap: int = 4, process_res: int = 504, depth_scale: float = 1.0,
                 fp32: Optional[bool] = None, pose_source: str = PoseSource.AUTO, hfov_deg: float = 60.0,
                 min_baseline_m: float = 0.05, trajectory: Any = None, time_key: str = "t_s",
                 T_x_cam: Optional[np.ndarray] = None, max_pose_gap_s: float = 0.05):
        if preset not in PRESETS:
            raise InvalidInputError(f"da3 preset must be one of {sorted(PRESETS)}, got {preset!r}")
        if not (0 < overlap < chunk_size):
            raise InvalidInputError(f"da3 needs 0 < overlap < chunk_size, got overlap={overlap}, "
                                    f"chunk_size={chunk_size}")
        if pose_source not in POSE_SOURCES:
            raise InvalidInputError(f"da3 pose_source must be one of {POSE_SOURCES}, got {pose_source!r}")
        pose_source = PoseSource(pose_source)
        if pose_source == PoseSource.MODEL and preset in DEPTH_ONLY:
            raise InvalidInputError(_depth_only_message(preset))
        self.poses = GivenDepthPose(trajectory, time_key=time_key, T_x_cam=T_x_cam, max_pose_gap_s=max_pose_gap_s)
        device = resolve_device(device, "depth_pose 'da3' device")
        api = import_da3()
        self.torch = import_torch_stack("torch", "perception")
        if weights == RANDOM:
            model = api.DepthAnything3(model_name=preset)
        else:
            folder = find_hf_model_dir(PRESETS[preset], weights, f"depth_pose 'da3' ({preset})")
            model = api.DepthAnything3.from_pretrained(str(folder))
        if fp32 if fp32 is not None else device == "cpu":
            model.forward = types.MethodType(_fp32_forward, model)
        self.model = model.to(device).eval()
        self.preset, self.chunk_size, self.overlap = preset, chunk_size, overlap
        self.process_res, self.depth_scale, self.pose_source = process_res, depth_scale, pose_source
        self.hfov_deg, self.min_baseline_m = hfov_deg, min_baseline_m
        self.reset()

    def reset(self) -> None:
        self._buffer: list[Frame] = []
        self._kept: list[tuple[np.ndarray, np.ndarray]] = []  # (T_world_cam, depth at processed res) of overlap
        self._done = 0  # leading buffered frames already emitted (the overlap)
        self._S: Optional[np.ndarray] = None
        self._mode: Optional[PoseSource] = None  # MODEL or GIVEN, fixed by the first chunk

    def push(self, frame: Frame) -> list[tuple[Frame, DepthPose]]:
        if self._buffer and frame.shape_hw != self._buffer[0].shape_hw:
            raise InvalidInputError(f"da3: frame {frame.index} ({frame.source}) is {frame.shape_hw}, earlier frames "
                                    f"{self._buffer[0].shape_hw}; resize the stream to one size")
        self._buffer.append(frame)
        if len(self._buffer) < self.chunk_size:
            return []
        return self._run()

    def flush(self) -> list[tuple[Frame, DepthPose]]:
        return self._run() if len(self._buffer) > self._done else []

    def _resolve_mode(self, frames: list[Frame]) -> PoseSource:
        if self._mode is None:
            has_poses = self.poses.trajectory is not None or all(f.T_world_cam is not None for f in frames)
            mode = self.pose_source if self.pose_source != PoseSource.AUTO else (
                PoseSource.GIVEN if has_poses else PoseSource.MODEL)
            if mode == PoseSource.MODEL and self.preset in DEPTH_ONLY:
                raise InvalidInputError(_depth_only_message(self.preset))
            self._mode = mode
        return self._mode

    def _given_pose(self, frame: Frame) -> np.ndarray:
        if self.poses.trajectory is None and frame.T_world_cam is None:
            raise InvalidInputError(f"da3: frame {frame.index} ({frame.source}) has no pose, but the stream uses "
                                    "given poses (pose_source 'given', or 'auto' with posed first frames)")
        return self.poses.pose(frame).matrix

    def _run(self) -> list[tuple[Frame, DepthPose]]:
        frames = self._buffer
        mode = self._resolve_mode(frames)
        pred = self.model.inference([f.rgb for f in frames], process_res=self.process_res)
        depth = np.asarray(pred.depth, np.float32)
        h_p, w_p = depth.shape[1:]
        if self.preset in DEPTH_ONLY:  # no intrinsics predicted: the frame's, else the hfov_deg default
            K_p = [(f.intrinsics if f.intrinsics is not None else
                    Intrinsics.from_fov(f.shape_hw[1], f.shape_hw[0], self.hfov_deg)).resized(w_p, h_p) for f in frames]
        else:
            K_p = [f.intrinsics.resized(w_p, h_p) if mode == PoseSource.GIVEN and f.intrinsics is not None
                   else self._predicted_K(f, k, w_p, h_p) for f, k in zip(frames, pred.intrinsics)]
        if self.preset in CANONICAL_METRIC:
            depth = canonical_to_metric(depth, K_p)
        if mode == PoseSource.GIVEN:
            T_world = [self._given_pose(f) for f in frames]
            s = self.depth_scale if self.preset in DEPTH_ONLY else self._given_scale(pred, T_world, depth)
            depth = depth * s
        else:
            T_world, depth = self._chain(pred, depth * self.depth_scale)
        out = []
        for j in range(self._done, len(frames)):
            frame = frames[j]
            conf = None if pred.conf is None else _resize(np.asarray(pred.conf[j]), frame.shape_hw)
            K = K_p[j].resized(frame.shape_hw[1], frame.shape_hw[0])
            out.append((frame, DepthPose(_resize(depth[j], frame.shape_hw), Pose(T_world[j]), K, conf)))
        self._kept = list(zip(T_world, depth))[-self.overlap:]
        self._buffer = frames[-self.overlap:]
        self._done = len(self._buffer)
        return out

    def _predicted_K(self, frame: Frame, k: Any, w_p: int, h_p: int) -> Intrinsics:
        """The model's intrinsics for ``frame``; implausible ones (a field of view outside directme.geometry's
        bounds, non-finite) are replaced by the frame's own, else the ``hfov_deg`` default, with a warning."""
        try:
            return Intrinsics.from_K(np.asarray(k), w_p, h_p)
        except InvalidInputError as exc:
            if not getattr(self, "_warned_K", False):
                self._warned_K = True
                logging.getLogger(__name__).warning(
                    "da3: implausible predicted intrinsics (%s); using the frame's intrinsics, else hfov_deg=%g "
                    "(warned once per stream)", exc, self.hfov_deg)
            own = frame.intrinsics or Intrinsics.from_fov(frame.shape_hw[1], frame.shape_hw[0], self.hfov_deg)
            return own.resized(w_p, h_p)

    def _chain(self, pred: Any, depth: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """DA3's chunk poses mapped into the stream's world frame by the overlap Sim(3)."""
        T_chunk = _cam_to_chunk(pred)
        if self._S is None:
            self._S = np.linalg.inv(T_chunk[0])
        else:
            self._S = fit_chunk_to_world([k[0] for k in self._kept], T_chunk[:self._done],
                                         [k[1] for k in self._kept], list(depth[:self._done]))
        posed = [apply_sim3(self._S, T) for T in T_chunk]
        return [T for T, _ in posed], np.stack([d * s for d, (_, s) in zip(depth, posed)])

    def _given_scale(self, pred: Any, T_world: list[np.ndarray], depth: np.ndarray) -> float:
        """Scale taking this chunk's raw depth to the given poses' units: camera-centre spreads, else
        the overlap with the previous chunk, else ``depth_scale`` (a first chunk without baseline)."""
        c_pred = np.array([T[:3, 3] for T in _cam_to_chunk(pred)])
        s = centre_spread_scale(c_pred, np.array([T[:3, 3] for T in T_world]), self.min_baseline_m)
        if s is None and self._done:
            s = overlap_depth_ratio([k[1] for k in self._kept], list(depth[:self._done]))
        return self.depth_scale if s is None else s


def _cam_to_chunk(pred: Any) -> list[np.ndarray]:
    """Camera-to-chunk 4x4 poses from DA3's world-to-camera (N, 3, 4) extrinsics."""
    return [np.linalg.inv(np.vstack([e[:3, :4], [0, 0, 0, 1]])) for e in np.asarray(pred.extrinsics, np.float64)]


def canonical_to_metric(depth: np.ndarray, K_processed: list[Intrinsics]) -> np.ndarray:
    """da3metric-large's canonical depth to metres with DA3's own conversion (apply_metric_scaling:
    depth * mean(fx, fy) / 300, focal in pixels of the processed image the network saw)."""
    import torch
    from depth_anything_3.utils.alignment import apply_metric_scaling

    K = torch.from_numpy(np.stack([k.K for k in K_processed]).astype(np.float32))[None]
    return apply_metric_scaling(torch.from_numpy(np.ascontiguousarray(depth, np.float32))[None], K)[0].numpy()


def _depth_only_message(preset: str) -> str:
    return (f"da3 preset {preset!r} predicts depth only (no camera head): give a pose with each frame (device "
            "poses, or a TUM / Aria MPS trajectory via the reader or the 'trajectory' option) and pose_source "
            "'given' or 'auto', or choose a preset that predicts poses (da3-small/base/large/giant)")


def build(cfg: Mapping[str, Any]) -> DepthAnything3Backend:
    return DepthAnything3Backend(**{k: v for k, v in cfg.items() if k != "name"})
