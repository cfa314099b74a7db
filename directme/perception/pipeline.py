"""Compose depth+pose, detector, tracker and scene tagger into one streaming `Perception`.

Config (a plain dict; every stage is ``{"name": <backend>, ...backend options}``)::

    {"depth_pose": {"name": "da3", "preset": "da3-small", "weights": "random"},
     "detector": {"name": "grounding_dino", "weights": "random"},   # or None: no objects
     "tracker": {"name": "sam2", "weights": "random"},              # or "box", or None
     "scene_tagger": {"name": "fallback"},                          # or "clip"
     "redetect_every_s": 1.0, "vocabulary": "objects365"}           # or a list of labels

Image-only stages (detector, tracker, tagger) run when a frame arrives; their outputs wait
for the (possibly chunked, delayed) depth+pose of that frame, then leave as FramePerception.

``build_pipeline(cfg)`` builds it; the one entry point for every backend (the agent's too) is
``directme.perception.build_perception`` (factory.py), which also handles 'given' and 'oracle'.
"""
from __future__ import annotations

import copy
import dataclasses
import importlib
import logging
import time
from typing import Any, Mapping, Optional, Sequence, Union

from .._compat.device import check_device
from ..errors import InvalidInputError
from ..types import Frame, FramePerception, InstanceObservation, TextEnum
from .base import Detection, DepthPose, DepthPoseBackend, Detector, SceneTagger, Tracker
from .weights import RANDOM

# one line per stage built ("loading detector: grounding_dino tiny (random weights) ... 2.4 s"); the CLI shows it
loading_log = logging.getLogger("directme.loading")
_WARNED_RANDOM: set[tuple[str, ...]] = set()

# stage -> backend name -> module with build(cfg) (imported only when chosen)
REGISTRY: dict[str, dict[str, str]] = {
    "depth_pose": {"given": "directme.perception.given", "rgbd_odometry": "directme.perception.rgbd_odometry",
                   "da3": "directme.perception.da3"},
    "detector": {"grounding_dino": "directme.perception.grounding_dino",
                 "grounding_dino_ida": "directme.perception.grounding_dino_ida",
                 "yolo_world": "directme.perception.yolo_world", "yoloe": "directme.perception.yolo_world"},
    "tracker": {"sam2": "directme.perception.sam2_tracker", "box": "directme.perception.tracks"},
    "scene_tagger": {"fallback": "directme.perception.scene_tag", "clip": "directme.perception.scene_tag"},
}

PRESETS: dict[str, dict[str, Any]] = {
    # the paper's pipeline (needs weights; a GPU for real time)
    "default": {"depth_pose": {"name": "da3", "preset": "da3-large", "metric_scale": "da3metric-large"},
                "detector": {"name": "grounding_dino", "model": "tiny"},
                "tracker": {"name": "sam2", "model": "tiny"}, "scene_tagger": {"name": "clip"}},
    # RGB-D input (7-Scenes, TUM, ScanNet): sensor depth, odometry poses
    "rgbd": {"depth_pose": {"name": "rgbd_odometry"}, "detector": {"name": "grounding_dino", "model": "tiny"},
             "tracker": {"name": "sam2", "model": "tiny"}, "scene_tagger": {"name": "clip"}},
    # poses and depth from the device / files; objects from the models
    "sensors": {"depth_pose": {"name": "given"}, "detector": {"name": "grounding_dino", "model": "tiny"},
                "tracker": {"name": "sam2", "model": "tiny"}, "scene_tagger": {"name": "clip"}},
    "pipeline": {},
}


OPTIONS = ("redetect_every", "redetect_every_s", "validate", "vocabulary")  # pipeline keys besides the stages


class Stage(TextEnum):
    """The pipeline's stages, in the order a frame goes through them (also the config's keys)."""

    DEPTH_POSE = "depth_pose"
    DETECTOR = "detector"
    TRACKER = "tracker"
    SCENE_TAGGER = "scene_tagger"


STAGES = tuple(Stage)


def build_stage(stage: str, cfg: Optional[Mapping[str, Any]]) -> Any:
    """Build one stage's backend from ``{"name": ..., options}`` (None -> no backend)."""
    if cfg is None:
        return None
    if isinstance(cfg, str):
        cfg = {"name": cfg}
    name = cfg.get("name")
    known = REGISTRY[stage]
    if name not in known:
        raise InvalidInputError(f"unknown {stage} backend {name!r}; known: {sorted(known)}")
    return importlib.import_module(known[name]).build(dict(cfg))


class PerceptionPipeline:
    """Streaming perception: frames in one at a time, FramePerception out in input order."""

    name = "pipeline"

    def __init__(self, depth_pose: DepthPoseBackend, detector: Optional[Detector] = None,
                 tracker: Optional[Tracker] = None, scene_tagger: Optional[SceneTagger] = None,
                 redetect_every: Optional[int] = None, vocabulary: Union[str, Sequence[str]] = "objects365",
                 validate: bool = True, random_weights: Sequence[str] = (), redetect_every_s: Optional[float] = 1.0):
        if redetect_every is not None and (isinstance(redetect_every, bool) or not isinstance(redetect_every, int)
                                           or redetect_every < 1):
            raise InvalidInputError(f"redetect_every must be an integer >= 1 frame (or None), got {redetect_every!r}")
        if redetect_every_s is not None and (isinstance(redetect_every_s, bool)
                                             or not isinstance(redetect_every_s, (int, float))
                                             or not 0 <= redetect_every_s < float("inf")):
            raise InvalidInputError(f"redetect_every_s must be a finite number >= 0 (seconds) or None, "
                                    f"got {redetect_every_s!r}")
        if tracker is None and detector is not None:
            tracker = importlib.import_module("directme.perception.tracks").BoxTracker()
        self.depth_pose, self.detector, self.tracker, self.scene_tagger = depth_pose, detector, tracker, scene_tagger
        # the detector runs on the first frame, then whenever redetect_every frames or redetect_every_s seconds of
        # stream time have passed since it last ran (tracks only propagate what it found: at 1 fps an object
        # can enter and leave the view between two detections that are 5 frames apart)
        self.redetect_every, self.redetect_every_s, self.validate = redetect_every, redetect_every_s, validate
        self.random_weights = tuple(random_weights)  # stages built with random weights: answers are meaningless
        if detector is not None:
            detector.set_vocabulary(_vocabulary(vocabulary))
        self.name = "+".join(getattr(b, "name", "?") for b in (depth_pose, detector, tracker, scene_tagger) if b)
        self.reset()

    def reset(self) -> None:
        self.depth_pose.reset()
        if self.tracker is not None:
            self.tracker.reset()
        self._pending: dict[int, tuple[tuple[InstanceObservation, ...], Optional[str], float]] = {}
        self._n = 0
        self._last_detection: Optional[tuple[int, float]] = None  # (frame count, t_s) when the detector last ran

    def _image_stages(self, frame: Frame) -> tuple[tuple[InstanceObservation, ...], Optional[str], float]:
        instances: tuple[InstanceObservation, ...] = ()
        if self.tracker is not None:
            dets: Optional[list[Detection]] = None
            if self.detector is not None and self._detection_due(frame.t_s):
                dets = self.detector.detect(frame.rgb)
                self._last_detection = (self._n, frame.t_s)
            instances = tuple(self.tracker.update(frame, dets))
        tag, score = (None, 1.0)
        if self.scene_tagger is not None:
            tag, score = self.scene_tagger.tag(frame.rgb)
            tag = None if tag in ("", "unknown") else tag
        return instances, tag, float(score)

    def _detection_due(self, t_s: float) -> bool:
        if self._last_detection is None:
            return True
        n, t = self._last_detection
        by_frames = self.redetect_every is not None and self._n - n >= self.redetect_every
        by_time = self.redetect_every_s is not None and t_s - t >= self.redetect_every_s - 1e-6
        return by_frames or by_time or (self.redetect_every is None and self.redetect_every_s is None)

    def process(self, frame: Frame) -> list[FramePerception]:
        key = id(frame)
        self._pending[key] = self._image_stages(frame)
        self._n += 1
        return self._emit(self.depth_pose.push(frame))

    def flush(self) -> list[FramePerception]:
        return self._emit(self.depth_pose.flush())

    def _emit(self, ready: list[tuple[Frame, DepthPose]]) -> list[FramePerception]:
        out = []
        for frame, dp in ready:
            instances, tag, score = self._pending.pop(id(frame))
            if dp.depth_m.shape != frame.shape_hw:
                raise InvalidInputError(
                    f"{self.depth_pose.name}: depth {dp.depth_m.shape} for frame {frame.index} "
                    f"({frame.source}) of size {frame.shape_hw}; the backend must resize to the input resolution")
            full = dataclasses.replace(frame, depth_m=dp.depth_m, T_world_cam=dp.T_world_cam,
                                       intrinsics=dp.intrinsics)
            fp = FramePerception(full, instances, tag, score if tag is not None else 1.0, metric=dp.metric)
            if self.validate:
                fp.validate()
            out.append(fp)
        return out


def _vocabulary(vocab: Union[str, Sequence[str]]) -> list[str]:
    if isinstance(vocab, str):
        if vocab != "objects365":
            raise InvalidInputError(f"vocabulary must be 'objects365' or a list of labels, got {vocab!r}")
        from ..data import objects365_labels

        return list(objects365_labels())
    labels = [str(v) for v in vocab]
    if not labels:
        raise InvalidInputError("vocabulary is empty; give at least one label")
    return labels


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(base))
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else v
    return out


def resolve_config(cfg: Any) -> dict[str, Any]:
    """A plain pipeline dict from a dict (optionally with ``"preset"``) or an object with
    ``backend`` (a preset name) and ``options`` (like directme.config.PerceptionConfig)."""
    if hasattr(cfg, "backend") and hasattr(cfg, "options"):
        d = {"preset": cfg.backend, **dict(cfg.options or {})}
    elif isinstance(cfg, Mapping):
        d = dict(cfg)
    else:
        raise InvalidInputError(f"perception config must be a dict, got {type(cfg).__name__}")
    preset = d.pop("preset", "pipeline")
    if preset not in PRESETS:
        raise InvalidInputError(f"unknown perception preset {preset!r}; known: {sorted(PRESETS)}")
    d = _merge(PRESETS[preset], d)
    unknown = set(d) - set(STAGES) - set(OPTIONS)
    if unknown:
        known = sorted(s.value for s in STAGES) + ["preset", *OPTIONS]
        raise InvalidInputError(f"unknown perception config keys {sorted(unknown)}; known: {known}")
    if not d.get("depth_pose"):
        raise InvalidInputError("perception config needs a 'depth_pose' stage, e.g. {'name': 'given'}")
    for stage in STAGES:
        if isinstance(d.get(stage), Mapping) and "device" in d[stage]:
            check_device(d[stage]["device"], f"perception {stage} device")
    return d


def has_random_weights(stage_cfg: Any) -> bool:
    """Whether a stage config asks for random weights (``weights: random``)."""
    return isinstance(stage_cfg, Mapping) and stage_cfg.get("weights") == RANDOM


def _load_stage(stage: Stage, cfg: Any) -> Any:
    """``build_stage`` with one "loading STAGE: BACKEND ... N s" line (logger ``directme.loading``)."""
    if cfg is None:
        return None
    t0 = time.perf_counter()
    backend = build_stage(stage, cfg)
    spec = {"name": cfg} if isinstance(cfg, str) else cfg
    what = " ".join(str(spec[k]) for k in ("name", "preset", "model") if spec.get(k))
    loading_log.info("loading %s: %s%s ... %.1f s", stage.value, what,
                     " (random weights)" if has_random_weights(spec) else "", time.perf_counter() - t0)
    return backend


def build_pipeline(cfg: Any, outputs_replaced: bool = False) -> PerceptionPipeline:
    """Build the configured pipeline; each backend's heavy imports happen here, lazily.
    ``outputs_replaced``: the caller replaces the networks' outputs (truth-fed stand-ins), so random
    weights do not make the output meaningless: no warning, no 'random_weights' flag."""
    d = resolve_config(cfg)
    stages = {s: _load_stage(s, d.get(s)) for s in STAGES}
    random_weights = () if outputs_replaced else tuple(s.value for s in STAGES if has_random_weights(d.get(s)))
    if random_weights and random_weights not in _WARNED_RANDOM:  # once per process and set of stages
        _WARNED_RANDOM.add(random_weights)
        logging.getLogger(__name__).warning(
            "random weights in %s: perception output and every answer are meaningless (answers are flagged "
            "'random_weights'); give real weights for real answers (`directme doctor` says which are missing)",
            ", ".join(random_weights))
    return PerceptionPipeline(**stages, random_weights=random_weights,
                              **{k: d[k] for k in OPTIONS if k in d})
