"""Depth Anything 3: depth + camera poses from RGB, streamed over a long video in chunks, in metres.

Frames are buffered into chunks of ``chunk_size`` that overlap the previous chunk by ``overlap``
frames. Each chunk is one multi-view DA3 forward pass, expressed in its own frame (DA3's reference
view) and its own scale; it is mapped into the stream's world frame (first camera = identity) by a
Sim(3) fitted on the overlap frames (rotation: chordal mean / Umeyama on the camera centres). Depth
and intrinsics come back at DA3's processed resolution and are resized to the input resolution here.

Metres (da3_scale.py): each chunk's scale blends the scale chained through the overlap (consistent
with what was already emitted) with the chunk's own metric evidence, so it cannot drift:
- da3nested-giant-large: DA3 gives each chunk in metres (evidence 1);
- da3-small/base/large/giant with ``metric_scale="da3metric-large"`` (the default pipeline): that
  metric model runs on ``metric_frames`` keyframes of each chunk; evidence = median ratio of its
  metric depth (DA3's rule: canonical * focal_px / 300) to the chunk's depth;
- given poses (device poses, a TUM / Aria MPS trajectory; ``pose_source`` "given", or "auto" when the
  first chunk carries poses): evidence = ratio of the camera-centre spreads, given / predicted, when
  the given centres span ``min_baseline_m`` (else the metric model's, if configured).
Until a stream has evidence its depth and poses are up to scale (times ``depth_scale``) and every
DepthPose says so (``metric=False``); the first evidence is then adopted whole.

Depth-only presets need given poses and use the frame's intrinsics (or ``hfov_deg``):
da3metric-large gives metres (canonical depth converted as above); da3mono-large gives relative
depth per image, so it runs only on frames carrying metric depth (``depth_m``), scaled per frame.
"""
from __future__ import annotations

import logging
import sys
import types
from typing import Any, Mapping, Optional

import numpy as np

from .._compat.device import resolve_device
from .._compat.torchvision_cpu import import_torch_stack
from ..errors import BackendError, InvalidInputError, MissingWeightsError
from ..geometry import Intrinsics, Pose
from ..types import Frame
from .base import DepthPose, PoseSource
from .da3_scale import (ScaleKeeper, apply_sim3, centre_spread_scale, depth_ratio, first_chunk_to_world,
                        fit_chunk_to_world, overlap_depth_ratio, per_frame_scale)
from .given import GivenDepthPose
from .weights import RANDOM, find_hf_model_dir, load_state_checked

__all__ = ["DepthAnything3Backend", "apply_sim3", "centre_spread_scale", "fit_chunk_to_world", "overlap_depth_ratio",
           "build", "import_da3", "load_da3"]

# the current release of each preset first; older repositories still load from a local cache
PRESETS = {"da3-small": "depth-anything/DA3-SMALL", "da3-base": "depth-anything/DA3-BASE",
           "da3-large": "depth-anything/DA3-LARGE-1.1", "da3-giant": "depth-anything/DA3-GIANT-1.1",
           "da3metric-large": "depth-anything/DA3METRIC-LARGE", "da3mono-large": "depth-anything/DA3MONO-LARGE",
           "da3nested-giant-large": "depth-anything/DA3NESTED-GIANT-LARGE-1.1"}
LEGACY_REPOS = {"da3-large": "depth-anything/DA3-LARGE", "da3-giant": "depth-anything/DA3-GIANT",
                "da3nested-giant-large": "depth-anything/DA3NESTED-GIANT-LARGE"}
DEPTH_ONLY = frozenset({"da3mono-large", "da3metric-large"})  # no camera head: poses must be given
CANONICAL_METRIC = frozenset({"da3metric-large"})  # raw output * focal_px / 300 = metres
RELATIVE = frozenset({"da3mono-large"})  # relative depth per image: scaled per frame to given depth
METRIC_CHUNKS = frozenset({"da3nested-giant-large"})  # each chunk's depth and poses in metres
METRIC_SCALE_MODELS = frozenset(CANONICAL_METRIC)  # models usable as ``metric_scale``
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


class DepthAnything3Backend:
    """Streaming DA3 (see module docstring). ``weights``: local model folder, None (Hugging Face
    cache of the preset's repo) or "random"; ``process_res``: DA3's processing resolution;
    ``pose_source``: "model" (DA3's poses), "given" (the frames' T_world_cam, or ``trajectory`` looked
    up at ``frame.meta[time_key]`` with ``T_x_cam`` as in the 'given' backend) or "auto";
    ``depth_scale``: factor on up-to-scale output until metric evidence arrives;
    ``metric_scale``: a metric DA3 preset ("da3metric-large") run on keyframes to put chunks in metres,
    with ``metric_weights`` (as ``weights``) and ``metric_frames`` keyframes per chunk;
    ``scale_gain``: weight of a chunk's metric evidence against the scale chained through the overlap."""

    name = "da3"

    def __init__(self, preset: str = "da3-large", weights: Optional[str] = None, device: str = "auto",
                 chunk_size: int = 16, overlap: int = 4, process_res: int = 504, depth_scale: float = 1.0,
                 fp32: Optional[bool] = None, pose_source: str = PoseSource.AUTO, hfov_deg: float = 60.0,
                 min_baseline_m: float = 0.05, trajectory: Any = None, time_key: str = "t_s",
                 T_x_cam: Optional[np.ndarray] = None, max_pose_gap_s: float = 0.05,
                 metric_scale: Optional[str] = None, metric_weights: Optional[str] = None, metric_frames: int = 2,
                 scale_gain: float = 0.5):
        if preset not in PRESETS:
            raise InvalidInputError(f"da3 preset must be one of {sorted(PRESETS)}, got {preset!r}")
        if not (0 < overlap < chunk_size):
            raise InvalidInputError(f"da3 needs 0 < overlap < chunk_size, got overlap={overlap}, "
                                    f"chunk_size={chunk_size}")
        if pose_source not in POSE_SOURCES:
            raise InvalidInputError(f"da3 pose_source must be one of {POSE_SOURCES}, got {pose_source!r}")
        if metric_scale is not None and (metric_scale not in METRIC_SCALE_MODELS
                                         or preset in DEPTH_ONLY | METRIC_CHUNKS):
            raise InvalidInputError(f"da3 metric_scale must be one of {sorted(METRIC_SCALE_MODELS)} and only with an "
                                    "up-to-scale preset (da3-small/base/large/giant), got "
                                    f"{metric_scale!r} for {preset!r}")
        if metric_frames < 1:
            raise InvalidInputError(f"da3 metric_frames must be >= 1, got {metric_frames}")
        pose_source = PoseSource(pose_source)
        if pose_source == PoseSource.MODEL and preset in DEPTH_ONLY:
            raise InvalidInputError(_depth_only_message(preset))
        self.poses = GivenDepthPose(trajectory, time_key=time_key, T_x_cam=T_x_cam, max_pose_gap_s=max_pose_gap_s)
        device = resolve_device(device, "depth_pose 'da3' device")
        api = import_da3()
        self.torch = import_torch_stack("torch", "perception")
        fp32 = fp32 if fp32 is not None else device == "cpu"
        self.model = load_da3(api, preset, weights, device, fp32)
        self.metric_model = None if metric_scale is None else load_da3(api, metric_scale, metric_weights, device, fp32)
        self.preset, self.chunk_size, self.overlap = preset, chunk_size, overlap
        self.process_res, self.depth_scale, self.pose_source = process_res, depth_scale, pose_source
        self.hfov_deg, self.min_baseline_m = hfov_deg, min_baseline_m
        self.metric_frames, self.scale_gain = metric_frames, scale_gain
        self.reset()

    def reset(self) -> None:
        self._buffer: list[Frame] = []
        self._kept: list[tuple[np.ndarray, np.ndarray]] = []  # (T_world_cam, depth at processed res) of overlap
        self._done = 0  # leading buffered frames already emitted (the overlap)
        self._S: Optional[np.ndarray] = None
        self._mode: Optional[PoseSource] = None  # MODEL or GIVEN, fixed by the first chunk
        self.scale = ScaleKeeper(self.scale_gain, self.depth_scale)

    def push(self, frame: Frame) -> list[tuple[Frame, DepthPose]]:
        if self._buffer and frame.shape_hw != self._buffer[0].shape_hw:
            raise InvalidInputError(f"da3: frame {frame.index} ({frame.source}) is {frame.shape_hw}, earlier frames "
                                    f"{self._buffer[0].shape_hw}; resize the stream to one size")
        if self.preset in RELATIVE and frame.depth_m is None:
            raise InvalidInputError(
                f"da3: frame {frame.index} ({frame.source}) has no depth_m, but da3mono-large predicts relative "
                "depth per image (unknown scale, different for every frame) and is scaled to metres only by the "
                "frame's own metric depth; for RGB-only video use da3-large with metric_scale 'da3metric-large' "
                "(the default pipeline), da3nested-giant-large, or da3metric-large with given poses")
        self._buffer.append(frame)
        if len(self._buffer) < self.chunk_size:
            return []
        return self._run()

    def flush(self) -> list[tuple[Frame, DepthPose]]:
        return self._run() if len(self._buffer) > self._done else []

    @property
    def metric(self) -> bool:
        """Whether the output so far is in metres (False: up to an unknown scale)."""
        return self.preset in DEPTH_ONLY or self.scale.metric

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
        if self.preset in RELATIVE:
            depth = np.stack([d * per_frame_scale(_resize(d, f.shape_hw), f.depth_m) for d, f in zip(depth, frames)])
        if mode == PoseSource.GIVEN:
            T_world = [self._given_pose(f) for f in frames]
            if self.preset not in DEPTH_ONLY:
                depth = depth * self._given_scale(pred, T_world, depth, frames, K_p)
        else:
            T_world, depth = self._chain(pred, depth, frames, K_p)
        out = []
        for j in range(self._done, len(frames)):
            frame = frames[j]
            conf = None if pred.conf is None else _resize(np.asarray(pred.conf[j]), frame.shape_hw)
            K = K_p[j].resized(frame.shape_hw[1], frame.shape_hw[0])
            out.append((frame, DepthPose(_resize(depth[j], frame.shape_hw), Pose(T_world[j]), K, conf,
                                         metric=self.metric)))
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

    def _metric_evidence(self, frames: list[Frame], depth: np.ndarray, K_p: list[Intrinsics],
                         conf: Optional[np.ndarray] = None) -> Optional[float]:
        """Chunk units -> metres from the metric model on keyframes of the chunk's new frames (None without one):
        median ratio of its metric depth (canonical * focal / 300, the chunk's focal) to the chunk's depth, on
        pixels that are not sky and, as DA3's nested model does, whose chunk confidence is at least the median."""
        if self.preset in METRIC_CHUNKS:
            return 1.0
        if self.metric_model is None:
            return None
        keys = sorted({int(round(x)) for x in np.linspace(self._done, len(frames) - 1, self.metric_frames)})
        pred = self.metric_model.inference([frames[j].rgb for j in keys], process_res=self.process_res)
        metric = canonical_to_metric(np.asarray(pred.depth, np.float32), [K_p[j] for j in keys])
        if metric.shape[1:] != depth.shape[1:]:
            raise BackendError(f"da3: metric model depth {metric.shape[1:]} != chunk depth {depth.shape[1:]}")
        valid = [np.ones(depth.shape[1:], bool) if pred.sky is None else ~np.asarray(pred.sky[i], bool)
                 for i in range(len(keys))]
        if conf is not None:
            valid = [v & (conf[j] >= np.median(conf[j])) for v, j in zip(valid, keys)]
        return depth_ratio(list(metric), [depth[j] for j in keys], valid)

    def _chain(self, pred: Any, depth: np.ndarray, frames: list[Frame],
               K_p: list[Intrinsics]) -> tuple[list[np.ndarray], np.ndarray]:
        """DA3's chunk poses mapped into the stream's world frame by the overlap Sim(3), its scale reconciled
        with the chunk's metric evidence."""
        T_chunk = _cam_to_chunk(pred)
        evidence = self._metric_evidence(frames, depth, K_p, pred.conf)
        if self._S is None:
            self._S = first_chunk_to_world(T_chunk[0], self.scale.next(None, evidence))
        else:
            T_prev, d_prev = [k[0] for k in self._kept], [k[1] for k in self._kept]
            s = self.scale.next(overlap_depth_ratio(d_prev, list(depth[:self._done])), evidence)
            self._S = fit_chunk_to_world(T_prev, T_chunk[:self._done], d_prev, list(depth[:self._done]), scale=s)
        posed = [apply_sim3(self._S, T) for T in T_chunk]
        return [T for T, _ in posed], np.stack([d * s for d, (_, s) in zip(depth, posed)])

    def _given_scale(self, pred: Any, T_world: list[np.ndarray], depth: np.ndarray, frames: list[Frame],
                     K_p: list[Intrinsics]) -> float:
        """Scale taking this chunk's raw depth to the given poses' metres: the camera-centre spreads (else
        the metric model) as evidence, reconciled with the overlap ratio to the previous chunk."""
        c_pred = np.array([T[:3, 3] for T in _cam_to_chunk(pred)])
        evidence = centre_spread_scale(c_pred, np.array([T[:3, 3] for T in T_world]), self.min_baseline_m)
        if evidence is None:
            evidence = self._metric_evidence(frames, depth, K_p, pred.conf)
        chained = overlap_depth_ratio([k[1] for k in self._kept], list(depth[:self._done])) if self._done else None
        return self.scale.next(chained, evidence)


def load_da3(api: Any, preset: str, weights: Optional[str], device: str, fp32: bool) -> Any:
    """The DA3 model of ``preset``: random weights, or the checkpoint of a local folder / the Hugging Face
    cache (current repository, else the older one), loaded with missing / unexpected tensors reported."""
    model = api.DepthAnything3(model_name=preset)
    if weights != RANDOM:
        what = f"depth_pose 'da3' ({preset})"
        folder = _model_folder(preset, weights, what)
        load_state_checked(model, folder / "model.safetensors", what)
    if fp32:
        model.forward = types.MethodType(_fp32_forward, model)
    return model.to(device).eval()


def _model_folder(preset: str, weights: Optional[str], what: str) -> Any:
    """The preset's model folder: ``weights``, else the cached current repository, else the older one."""
    errors = []
    for repo in (PRESETS[preset], LEGACY_REPOS.get(preset)):
        if repo is not None:
            try:
                return find_hf_model_dir(repo, weights, what, required="model.safetensors")
            except MissingWeightsError as exc:
                errors.append(exc)
    raise errors[0]


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


def metres_summary() -> str:
    """Which presets give metres, in one line (`directme doctor`)."""
    return ("da3nested-giant-large (depth+poses); da3-small/base/large/giant with metric_scale da3metric-large "
            "(the default) or given poses; da3metric-large with given poses; da3mono-large with given poses and "
            "depth; otherwise up to scale, flagged")


def _depth_only_message(preset: str) -> str:
    return (f"da3 preset {preset!r} predicts depth only (no camera head): give a pose with each frame (device "
            "poses, or a TUM / Aria MPS trajectory via the reader or the 'trajectory' option) and pose_source "
            "'given' or 'auto', or choose a preset that predicts poses (da3-small/base/large/giant)")


def build(cfg: Mapping[str, Any]) -> DepthAnything3Backend:
    return DepthAnything3Backend(**{k: v for k, v in cfg.items() if k != "name"})
