"""One memory per video: each video is streamed once into its own Agent, kept in RAM while its questions
are answered and saved under a cache folder keyed by the video and the config, so that a rerun, a second
task on the same videos, or another process of a data-parallel run loads it instead of streaming again.

A video is a file or folder ``directme.readers.open_reader`` reads, or a simulator episode folder
(``directme sim``; ``episode.json`` inside), whose frames are rendered and whose perception can be the
episode's oracle (``perception="oracle"``) or the truth-fed pipeline (``perception="truth-fed"``).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from ...agent import Agent
from ...config import AgentConfig, oracle_config, truthfed_config
from ...errors import InvalidInputError, InvalidSaveError
from ...types import Frame

log = logging.getLogger(__name__)

SIM_PERCEPTION = ("oracle", "truth-fed")  # perception built from a simulator episode's ground truth
KEY_VERSION = 1  # bump when what a cached memory depends on changes


def is_sim_episode(video: str) -> bool:
    return (Path(video) / "episode.json").is_file()


def _stamp(path: Path) -> list:
    """What identifies a video's content cheaply: name, size and modification time of its file(s)."""
    files = [path] if path.is_file() else [p for p in (path / "episode.json", path / "frames.npz") if p.exists()]
    if not files:
        files = sorted(p for p in path.iterdir() if p.is_file())[:64]
    return [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files]


@dataclass(frozen=True)
class AgentFactory:
    """How a video becomes frames and an Agent: the agent config, the perception override for simulator
    episodes, the oracle's noise preset and seed, and the stream rate of real videos."""

    config: AgentConfig = field(default_factory=AgentConfig)
    perception: str = ""  # "", "oracle" or "truth-fed" ("": the config's own perception)
    noise: str = "none"  # oracle perception noise preset (directme.sim.NOISE_PRESETS)
    seed: int = 0  # oracle / truth-fed noise seed
    fps: float = 1.0  # frames per second streamed from a real video (simulator episodes: their own rate)

    def __post_init__(self) -> None:
        if self.perception not in ("",) + SIM_PERCEPTION:
            raise InvalidInputError(f"perception={self.perception!r}: expected one of {SIM_PERCEPTION} (simulator "
                                    "episodes), or leave it out to use the agent config's perception")
        if not self.fps > 0:
            raise InvalidInputError(f"fps must be > 0, got {self.fps!r}")

    def identity(self) -> dict[str, Any]:
        """Everything a memory depends on besides the video (the cache key)."""
        return {"config": self.config.to_dict(), "perception": self.perception, "noise": self.noise,
                "seed": self.seed, "fps": self.fps, "version": KEY_VERSION}

    def _config_for(self, episode: Any) -> AgentConfig:
        if self.perception == "oracle":
            return oracle_config(self.noise, self.seed, self.config.to_dict(secrets=True))
        if self.perception == "truth-fed":
            return truthfed_config(None, self.seed, self.config.to_dict(secrets=True))
        return self.config

    def _episode(self, video: str) -> Any:
        if not is_sim_episode(video):
            if self.perception:
                raise InvalidInputError(f"perception={self.perception} needs a simulator episode folder; {video} "
                                        "is not one (no episode.json): drop perception= for real videos")
            return None
        from ...sim import load_episode

        return load_episode(video)

    def frames(self, video: str) -> Iterable[Frame]:
        episode = self._episode(video)
        if episode is not None:
            return episode.frames()
        from ...readers import open_reader

        return open_reader(video, fps=self.fps)

    def new(self, video: str) -> Agent:
        episode = self._episode(video)
        return Agent(self._config_for(episode), episode=episode)

    def load(self, video: str, saved: Path) -> Agent:
        return Agent.load(saved, episode=self._episode(video))


class VideoMemories:
    """The Agent of each video, streamed at most once (see the module docstring). ``cache_dir`` None keeps
    memories in RAM only. With a cache, the first process to need a video streams it under a lock file; the
    others wait up to ``lock_wait_s`` for its save, then stream it themselves if it never came."""

    def __init__(self, factory: AgentFactory, cache_dir: Optional[os.PathLike] = None, lock_wait_s: float = 3600.0,
                 poll_s: float = 1.0) -> None:
        self.factory = factory
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else None
        self.lock_wait_s = lock_wait_s  # how long to wait for another process streaming the same video
        self.poll_s = poll_s  # how often to look for its save meanwhile
        self.frames_streamed = 0  # frames streamed by this object (a cached or kept memory streams none)
        self.videos_streamed: list[str] = []
        self._identity = json.dumps(factory.identity(), sort_keys=True, default=str)
        self._video: Optional[str] = None
        self._agent: Optional[Agent] = None

    def key(self, video: str) -> str:
        path = Path(video).expanduser().resolve()
        if not path.exists():
            raise InvalidInputError(f"video {video} does not exist")
        text = json.dumps([str(path), _stamp(path), self._identity])
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def agent(self, video: str) -> Agent:
        """The Agent holding ``video``'s memory (the one in RAM, a cached one, or a new one streamed now)."""
        if video == self._video and self._agent is not None:
            return self._agent
        self._agent, self._video = None, None  # one video in RAM at a time: callers group questions by video
        self._agent, self._video = self._obtain(video), video
        return self._agent

    def _saved(self, key: str) -> Optional[Path]:
        d = self.cache_dir / key if self.cache_dir else None
        return d if d is not None and (d / "agent.json").is_file() else None

    def _load(self, video: str, key: str) -> Optional[Agent]:
        saved = self._saved(key)
        if saved is None:
            return None
        try:
            return self.factory.load(video, saved)
        except InvalidSaveError as exc:
            log.warning("cached memory of %s unreadable (%s): streaming the video again", video, exc)
            return None

    def _obtain(self, video: str) -> Agent:
        key = self.key(video)
        agent = self._load(video, key)
        if agent is not None or self.cache_dir is None:
            return agent or self._stream(video, key)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        lock = self.cache_dir / f"{key}.lock"
        deadline = time.monotonic() + self.lock_wait_s
        while True:
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:  # another process streams this video: wait for its save
                if time.monotonic() > deadline:
                    log.warning("waited %.0f s for %s (lock %s): streaming it here", self.lock_wait_s, video, lock)
                    return self._stream(video, key)
                time.sleep(self.poll_s)
                agent = self._load(video, key)
                if agent is not None:
                    return agent
                continue
            os.close(fd)
            try:
                return self._load(video, key) or self._stream(video, key)
            finally:
                lock.unlink(missing_ok=True)

    def _stream(self, video: str, key: str) -> Agent:
        agent = self.factory.new(video)
        n = 0
        for frame in self.factory.frames(video):
            agent.observe(frame)
            n += 1
        agent.flush()
        self.frames_streamed += n
        self.videos_streamed.append(video)
        log.info("streamed %s: %d frames", video, n)
        if self.cache_dir is not None:
            agent.save(self.cache_dir / key)
        return agent
