"""The one perception factory: ``build_perception(cfg, episode=None)``.

``cfg`` is a ``directme.config.PerceptionConfig`` (or any object with ``backend``, ``noise``, ``seed``
and ``options``) or a plain pipeline dict (see pipeline.py). Backends:

- "given": frames carry depth, pose and intrinsics (``GivenPerception``, given.py);
- "aria_gt": an Aria recording's own poses, ADT ground-truth depth and objects, no weights (aria_gt.py);
- "oracle": a simulator episode's ground truth, which the EPISODE provides
  (``episode.oracle_perception(noise=, seed=)``, the ``OracleEpisode`` protocol): perception never
  imports ``directme.sim``;
- "truth-fed": the model pipeline on a simulator episode with each network's forward replaced by a stand-in
  returning the ground truth in that network's output format, which the EPISODE provides
  (``episode.truthfed_perception(options, seed=)``, the ``TruthFedEpisode`` protocol);
- any other name: a preset of the model pipeline (``build_pipeline``), built with ``options``.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..errors import InvalidInputError
from .base import OracleEpisode, Perception, TruthFedEpisode

GIVEN = "given"  # frames carry depth and pose: no model
ORACLE = "oracle"  # a simulator episode's ground truth (needs the episode)
ARIA_GT = "aria_gt"  # an Aria recording's poses (MPS / ADT) and ADT ground truth: no model
TRUTH_FED = "truth-fed"  # the model pipeline, networks replaced by ground-truth stand-ins (needs the episode)
STANDALONE = (GIVEN, ORACLE, ARIA_GT, TRUTH_FED)  # backends that are not a model pipeline preset


def build_perception(cfg: Any, episode: Optional[OracleEpisode] = None) -> Perception:
    """The configured perception backend ("given", "oracle", "aria_gt" or a model pipeline preset / dict)."""
    backend = None if isinstance(cfg, Mapping) else getattr(cfg, "backend", None)
    if backend == GIVEN:
        from .given import GivenPerception

        return GivenPerception()
    if backend == ORACLE:
        return _oracle(cfg, episode)
    if backend == TRUTH_FED:
        return _truth_fed(cfg, episode)
    if backend == ARIA_GT:
        from .aria_gt import build

        return build(getattr(cfg, "options", None))
    from .pipeline import build_pipeline

    return build_pipeline(cfg)


def _oracle(cfg: Any, episode: Any) -> Perception:
    if episode is None:
        raise InvalidInputError("perception backend 'oracle' replays a simulator episode: "
                                "pass it as Agent(config, episode=episode)")
    if not isinstance(episode, OracleEpisode):
        raise InvalidInputError(
            f"perception backend 'oracle' replays a simulator episode; the episode given ({type(episode).__name__}) "
            "has no oracle_perception(noise=, seed=): pass a directme.sim.Episode (generate_episode / load_episode)")
    return episode.oracle_perception(noise=cfg.noise, seed=cfg.seed)


def _truth_fed(cfg: Any, episode: Any) -> Perception:
    if not isinstance(episode, TruthFedEpisode):
        raise InvalidInputError(
            f"perception backend 'truth-fed' runs the model pipeline on a simulator episode's ground truth; "
            f"pass a directme.sim.Episode as Agent(config, episode=episode), got {type(episode).__name__}")
    return episode.truthfed_perception(getattr(cfg, "options", None), seed=getattr(cfg, "seed", 0))
