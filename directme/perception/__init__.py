"""Perception: frames -> metric depth, camera pose, instance masks, scene tags (one file per backend).

`build_perception(cfg)` builds a pipeline from a plain dict (see pipeline.py); backends are
imported only when chosen, so `import directme.perception` stays light.
"""
from .pipeline import PRESETS, REGISTRY, PerceptionPipeline, build_perception, build_stage

__all__ = ["PRESETS", "REGISTRY", "PerceptionPipeline", "build_perception", "build_stage"]
