"""Simulator episodes as a benchmark: the episode's ground-truth questions (UCS-Bench's eight
subtasks) asked through the streaming runner, the model being the Agent with oracle
perception of that episode (as `directme demo` does).

``load(DIR)`` reads an episode folder written by ``directme sim``; scoring and metrics are
UCS-Bench's (accuracy overall, per category, subtask and qtype).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

from .annotations import BenchEpisode
from .models import ModelSpec
from .ucsbench import run_episode, summarize  # noqa: F401  (same protocol and metrics)

NAME = "sim"


def load(path: str, **_: Any) -> list[BenchEpisode]:
    from ..sim import load_episode

    ep = load_episode(path)
    return [BenchEpisode(episode_id=ep.video_uid, video=str(path),
                         items=tuple(sorted(ep.questions, key=lambda q: q.t_s)), duration_s=ep.duration_s,
                         meta={"sim_dir": str(Path(path).resolve())})]


@dataclass(frozen=True)
class SimFrames:
    """Rendered frames of a saved episode (``sim_dir``, or the episode's own folder)."""

    sim_dir: Optional[str] = None

    def __call__(self, episode: BenchEpisode) -> Iterator[Any]:
        from ..sim import load_episode

        return load_episode(self.sim_dir or episode.meta["sim_dir"]).frames()


def oracle_agent(config: Optional[Mapping[str, Any]] = None, sim_dir: str = "", noise: str = "none", seed: int = 0):
    """The Agent with oracle perception of the episode in ``sim_dir`` (the demo's setting)."""
    from ..agent import Agent
    from ..config import oracle_config
    from ..sim import load_episode

    return Agent(oracle_config(noise, seed, config), episode=load_episode(sim_dir))


def oracle_spec(sim_dir: str, config: Any = None, noise: str = "none", seed: int = 0) -> ModelSpec:
    """A picklable ModelSpec for :func:`oracle_agent`."""
    return ModelSpec(target="directme.bench.sim:oracle_agent", config=config,
                     kwargs={"sim_dir": str(Path(sim_dir).resolve()), "noise": noise, "seed": seed})
