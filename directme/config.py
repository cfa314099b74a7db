"""Agent configuration: perception backend, memory parameters, question handling, answerer.

``AgentConfig.from_file("agent.yaml")`` reads YAML or JSON with the sections ``perception``,
``memory``, ``query`` and ``answerer``; unknown keys are an error naming the key."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping, Union

from .errors import InvalidInputError
from .memory.config import MemoryConfig


def _build(cls, section: str, d: Mapping[str, Any]):
    if not isinstance(d, Mapping):
        raise InvalidInputError(f"config section '{section}' must be a mapping, got {type(d).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = set(d) - known
    if unknown:
        raise InvalidInputError(f"unknown keys {sorted(unknown)} in config section '{section}'; known: {sorted(known)}")
    return cls(**d)


@dataclass(frozen=True)
class PerceptionConfig:
    """``backend``: "given" (frames carry depth and pose; instances and scene tag in ``frame.meta``),
    "oracle" (simulator ground truth with ``noise`` preset and ``seed``; needs the episode), or any
    name known to ``directme.perception.build_perception`` (real models; ``options`` are passed on)."""

    backend: str = "given"
    noise: str = "none"
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QueryConfig:
    """Question handling: arm reach for "can I reach", the label-matching embedder
    (auto | minilm | string | none), keyframes handed to an answerer, "just now" window."""

    reach_m: float = 1.0
    embedder: str = "auto"
    max_keyframes: int = 4
    just_now_s: float = 10.0
    load_keyframe_images: bool = False

    def __post_init__(self) -> None:
        if not self.reach_m > 0:
            raise InvalidInputError(f"query.reach_m must be > 0 metres, got {self.reach_m}")
        if self.max_keyframes < 0:
            raise InvalidInputError(f"query.max_keyframes must be >= 0, got {self.max_keyframes}")


@dataclass(frozen=True)
class AnswererConfig:
    """``name``: geometric (built in, no weights) | transformers | openai | policy; ``options`` go to its factory."""

    name: str = "geometric"
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentConfig:
    perception: PerceptionConfig = field(default_factory=PerceptionConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    answerer: AnswererConfig = field(default_factory=AnswererConfig)

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "AgentConfig":
        if not isinstance(d, Mapping):
            raise InvalidInputError(f"agent config must be a mapping, got {type(d).__name__}")
        unknown = set(d) - {"perception", "memory", "query", "answerer"}
        if unknown:
            raise InvalidInputError(f"unknown agent config sections {sorted(unknown)}; "
                                    "known: perception, memory, query, answerer")
        return AgentConfig(perception=_build(PerceptionConfig, "perception", d.get("perception") or {}),
                           memory=MemoryConfig.from_dict(d.get("memory") or {}),
                           query=_build(QueryConfig, "query", d.get("query") or {}),
                           answerer=_build(AnswererConfig, "answerer", d.get("answerer") or {}))

    @staticmethod
    def from_file(path: Union[str, Path]) -> "AgentConfig":
        p = Path(path)
        if not p.is_file():
            raise InvalidInputError(f"config file {p} not found")
        text = p.read_text(encoding="utf-8")
        try:
            if p.suffix.lower() == ".json":
                data = json.loads(text)
            else:
                import yaml

                data = yaml.safe_load(text) or {}
        except (ValueError, ImportError) as exc:
            raise InvalidInputError(f"config file {p} could not be parsed: {exc}") from exc
        try:
            return AgentConfig.from_dict(data)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{p}: {exc}") from exc

    def to_dict(self) -> dict[str, Any]:
        return {"perception": asdict(self.perception), "memory": self.memory.to_dict(),
                "query": asdict(self.query), "answerer": asdict(self.answerer)}


def oracle_config(noise: str = "none", seed: int = 0, base: Union[None, str, Path, Mapping[str, Any]] = None) -> AgentConfig:
    """The Agent config for replaying a simulator episode with oracle perception (demo, eval sim).

    With exact perception (``noise="none"``) one sighting at a new place confirms a move, so the
    memory's two-frame move confirmation is set to 1 unless ``base`` sets it."""
    if isinstance(base, (str, Path)):
        d = AgentConfig.from_file(base).to_dict()
    else:
        d = {k: dict(v) for k, v in (base or {}).items()}
    if noise == "none":
        memory = dict(d.get("memory") or {})
        if "move_confirm" not in memory:  # a flat key of the older format wins as it did
            memory["association"] = {"move_confirm": 1, **(memory.get("association") or {})}
        d["memory"] = memory
    d["perception"] = {"backend": "oracle", "noise": noise, "seed": seed}
    return AgentConfig.from_dict(d)
