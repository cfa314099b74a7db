"""``TruthFedPerception``: the real perception pipeline on a simulator episode, each network's forward
replaced by a stand-in that returns the ground truth in that network's own output format.

The frames enter as a plain video would (RGB and time only; with ``"poses": "given"`` also the camera
pose and intrinsics, as a device or trajectory file gives them), and everything after the networks -
preprocessing, DA3 chunking and scale, detection post-processing and suppression, SAM2 track
bookkeeping, label votes, scene tags - is the production code. Answers from it therefore show whether
that code carries geometry and identities end to end; with exact stand-ins they should match the
oracle's (``noise="none"``) up to what the pipeline itself loses (objects between detections, masks at
the network's resolution, chunk alignment, new track ids after an object was long out of view).
"""
from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional

from ...errors import InvalidInputError
from ...perception.pipeline import PRESETS, Stage, build_pipeline
from ...types import Frame, FramePerception, TextEnum
from ...validation import parse_options
from .source import TruthSource

if TYPE_CHECKING:  # pragma: no cover - the episode builds its truth-fed perception (a runtime import would cycle)
    from ..episode import Episode

# backend name -> module with install(backend, truth, **options) (the stand-in of that network)
STAND_INS: dict[str, str] = {
    "da3": "directme.sim.truthfed.da3",
    "grounding_dino": "directme.sim.truthfed.grounding_dino",
    "sam2": "directme.sim.truthfed.sam2",
    "clip": "directme.sim.truthfed.clip",
}


class PoseInput(TextEnum):
    """What the truth-fed frames carry besides RGB: nothing (a plain video: poses and scale from the
    model) or the camera pose and intrinsics (a device or a trajectory file gives them)."""

    NONE = "none"
    GIVEN = "given"


@dataclass(frozen=True)
class TruthFedConfig:
    """``depth_pose``: a DA3 preset name ("default": the default pipeline's depth stage); ``poses``: see
    PoseInput; ``seed``: the stand-ins' seeded randomness (chunk scales, score jitter); ``pipeline``:
    overrides merged into the default pipeline dict (e.g. ``{"redetect_every": 3}``); ``stand_in``:
    options per backend name passed to its ``install``."""

    depth_pose: str = "default"
    poses: PoseInput = PoseInput.NONE
    seed: int = 0
    pipeline: Mapping[str, Any] = field(default_factory=dict)
    stand_in: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @staticmethod
    def from_options(options: Optional[Mapping[str, Any]], seed: int = 0) -> "TruthFedConfig":
        opts = {"seed": seed, **dict(options or {})}
        poses = opts.get("poses", PoseInput.NONE)
        if poses not in tuple(p.value for p in PoseInput):
            raise InvalidInputError(f"perception.options.poses (truth-fed perception): must be one of "
                                    f"{[p.value for p in PoseInput]}, got {poses!r}")
        opts["poses"] = PoseInput(poses)
        return parse_options(TruthFedConfig, opts, "options of the truth-fed perception", "perception.options")


def pipeline_config(cfg: TruthFedConfig) -> dict[str, Any]:
    """The default pipeline dict with random weights in every model stage (the stand-ins replace their
    forward passes) and the smallest architectures that keep each wrapper's code path."""
    d = copy.deepcopy(PRESETS["default"])
    if cfg.depth_pose != "default":  # another DA3 preset, with the default's metric-scale model
        d[Stage.DEPTH_POSE.value] = {**d[Stage.DEPTH_POSE.value], "preset": cfg.depth_pose}
    if cfg.poses == PoseInput.GIVEN:
        d[Stage.DEPTH_POSE.value]["pose_source"] = "given"
    for k, v in cfg.pipeline.items():  # a stage's options merge into it; another backend name replaces it
        old = d.get(k)
        same = isinstance(v, Mapping) and isinstance(old, Mapping) and v.get("name", old.get("name")) == old.get("name")
        d[k] = {**old, **v} if same else copy.deepcopy(v)
    for stage in Stage:
        spec = d.get(stage.value)
        if isinstance(spec, Mapping) and spec.get("name") in STAND_INS:
            spec["weights"] = "random"
            if spec.get("metric_scale"):
                spec["metric_weights"] = "random"
            spec.setdefault("device", "cpu")
    return d


class TruthFedPerception:
    """The Perception protocol over one simulator episode (see module docstring)."""

    def __init__(self, episode: "Episode", config: Optional[TruthFedConfig] = None):
        self.config = config or TruthFedConfig()
        self.truth = TruthSource(episode)
        spec = pipeline_config(self.config)
        for stage in Stage:
            stage_spec = spec.get(stage.value)
            model_stage = isinstance(stage_spec, Mapping) and bool(stage_spec.get("weights"))
            if model_stage and stage_spec.get("name") not in STAND_INS:
                raise InvalidInputError(f"truth-fed perception: no ground-truth stand-in for the {stage.value} backend "
                                        f"{stage_spec.get('name')!r}; stand-ins exist for {sorted(STAND_INS)}")
        self.pipeline = build_pipeline(spec, outputs_replaced=True)  # stand-ins replace every network's output
        self.random_weights = ()
        for stage in Stage:
            backend, stage_spec = getattr(self.pipeline, stage.value), spec.get(stage.value)
            name = stage_spec.get("name") if isinstance(stage_spec, Mapping) else None
            if backend is None or name not in STAND_INS:
                continue
            install = importlib.import_module(STAND_INS[name]).install
            seeded = "seed" in inspect.signature(install).parameters  # stand-ins without randomness take none
            opts = {**({"seed": self.config.seed} if seeded else {}), **dict(self.config.stand_in.get(name, {}))}
            install(backend, self.truth, **opts)
        self.name = f"truth-fed({self.pipeline.name})"

    def _input(self, frame: Frame) -> Frame:
        """What a camera gives: RGB and time (and pose + intrinsics when given); no ground truth."""
        given = self.config.poses == PoseInput.GIVEN
        return dataclasses.replace(frame, depth_m=None, meta={},
                                   T_world_cam=frame.T_world_cam if given else None,
                                   intrinsics=frame.intrinsics if given else None)

    def process(self, frame: Frame) -> list[FramePerception]:
        self.truth.register(frame)
        return self.pipeline.process(self._input(frame))

    def flush(self) -> list[FramePerception]:
        return self.pipeline.flush()

    def reset(self) -> None:
        self.pipeline.reset()
