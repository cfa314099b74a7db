"""Perception: frames -> metric depth, camera pose, instance masks, scene tags (one file per backend).

`build_perception(cfg, episode=None)` (factory.py) builds the configured backend: "given", "oracle"
(asks the simulator episode for its ground truth) or a model pipeline from a plain dict / preset
(pipeline.py); backends are imported only when chosen, so `import directme.perception` stays light.
"""
from .base import OracleEpisode, Perception, PoseSource
from .factory import build_perception
from .pipeline import PRESETS, REGISTRY, PerceptionPipeline, Stage, build_pipeline, build_stage

__all__ = ["PRESETS", "REGISTRY", "OracleEpisode", "Perception", "PerceptionPipeline", "PoseSource", "Stage",
           "build_perception", "build_pipeline", "build_stage"]
