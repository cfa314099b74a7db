"""The one perception factory: ``build_perception(cfg, episode=None)``.

``cfg`` is a ``directme.config.PerceptionConfig`` (or any object with ``backend``, ``noise``, ``seed``
and ``options``) or a plain pipeline dict (see pipeline.py). Backends:

- "given": frames carry depth, pose and intrinsics (``GivenPerception``, given.py);
- "aria_gt": an Aria recording's own poses, ADT ground-truth depth and objects, no weights (aria_gt.py);
- "oracle": a simulator episode's ground truth, which the EPISODE provides
  (``episode.oracle_perception(noise=, seed=)``, the ``OracleEpisode`` protocol): perception never
  imports ``directme.sim``;
- any other name: a preset of the model pipeline (``build_pipeline``), built with ``options``.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..errors import InvalidInputError
from .base import OracleEpisode, Perception

GIVEN = "given"  # frames carry depth and pose: no model
ORACLE = "oracle"  # a simulator episode's ground truth (needs the episode)
ARIA_GT = "aria_gt"  # an Aria recording's poses (MPS / ADT) and ADT ground truth: no model
STANDALONE = (GIVEN, ORACLE, ARIA_GT)  # backends that are not a model pipeline preset


def build_perception(cfg: Any, episode: Optional[OracleEpisode] = None) -> Perception:
    """The configured perception backend ("given", "oracle", "aria_gt" or a model pipeline preset / dict)."""
    backend = None if isinstance(cfg, Mapping) else getattr(cfg, "backend", None)
    if backend == GIVEN:
        from .given import GivenPerception

        return GivenPerception()
    if backend == ORACLE:
        return _oracle(cfg, episode)
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
