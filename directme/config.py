"""Agent configuration: perception backend, memory parameters, question handling, answerer.

``AgentConfig.from_file("agent.yaml")`` reads YAML or JSON with the sections ``perception``,
``memory``, ``query`` and ``answerer``; unknown keys are an error naming the key. Values are parsed
strictly at load time (``directme.validation``): booleans only from booleans, integers only from
integers, numbers not from strings, each in its range, free-form ``options`` plain JSON data; an
error names the key path (``query.reach_m: expected a number, got '1.0'``). Config files may not use
YAML anchors/aliases and are at most 1 MiB."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from .answerers.geometric_config import GeometricConfig
from .answerers.policy import geometric_options
from .errors import InvalidInputError
from .memory.config import MemoryConfig
from .query.ego import RoomConfig
from .query.parsed import ParserConfig
from .validation import check_section, parse_dataclass


def _build(cls, section: str, d: Any):
    """Section ``section`` from ``d`` (a mapping, or None/empty for the defaults), strictly typed."""
    return parse_dataclass(cls, {} if d is None else d, section)


@dataclass(frozen=True)
class PerceptionConfig:
    """``backend``: "given" (frames carry depth and pose; instances and scene tag in ``frame.meta``),
    "oracle" (simulator ground truth with ``noise`` preset and ``seed``; needs the episode), or any
    name known to ``directme.perception.build_perception`` (real models; ``options`` are passed on)."""

    backend: str = "given"
    noise: str = "none"
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_options(self.options, "perception.options")
        check_section(self, "perception", non_negative=("seed",))
        if not self.seed < 2 ** 32:
            raise InvalidInputError(f"perception.seed must be an integer in [0, 2**32), got {self.seed!r:.60}")


@dataclass(frozen=True)
class QueryConfig:
    """Question handling: arm reach for "can I reach", the label-matching embedder
    (auto | minilm | string | none), keyframes handed to an answerer, "just now" window, and how far the
    question parser trusts each kind of evidence (``parser``: ``directme.query.parsed.ParserConfig``)."""

    reach_m: float = 1.0
    embedder: str = "auto"
    question_encoder: str = "auto"  # the kind classifier's int8 MiniLM: auto | onnx (ONNX Runtime) | torch
    max_keyframes: int = 4
    just_now_s: float = 10.0
    load_keyframe_images: bool = False
    parser: ParserConfig = field(default_factory=ParserConfig)  # the parser's trust in rules, meaning, options
    rooms: RoomConfig = field(default_factory=RoomConfig)  # how an object's room is read from the scene tags

    def __post_init__(self) -> None:
        from .query.embed import EMBEDDERS, QUESTION_ENCODERS

        check_section(self, "query", positive=("reach_m", "just_now_s"), non_negative=("max_keyframes",))
        if self.embedder not in EMBEDDERS:
            raise InvalidInputError(f"query.embedder must be one of {EMBEDDERS}, got {self.embedder!r:.60}")
        if self.question_encoder not in QUESTION_ENCODERS:
            raise InvalidInputError(f"query.question_encoder must be one of {QUESTION_ENCODERS}, got "
                                    f"{self.question_encoder!r:.60}")


@dataclass(frozen=True)
class AnswererConfig:
    """``name``: geometric (built in, no weights) | transformers | openai | policy; ``options`` go to its factory
    (the geometric answerer's: ``GeometricConfig`` as a mapping of sections, read back typed as ``geometric``)."""

    name: str = "geometric"
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_options(self.options, "answerer.options")

    @property
    def geometric(self) -> GeometricConfig:
        """The settings of the geometric answerer this config builds: the options of ``geometric``, the
        ``geometric_options`` of ``policy`` (whose ``min_parse_confidence`` it takes), else the defaults.
        InvalidInputError naming the key path for a bad one."""
        if self.name == "geometric":
            return GeometricConfig.from_options(self.options)
        if self.name == "policy":
            return GeometricConfig.from_options(geometric_options(self.options), "answerer.options.geometric_options")
        return GeometricConfig()

    def __repr__(self) -> str:  # options may hold an api_key: a repr is shown, so it is redacted
        from .redact import redact_config

        return f"AnswererConfig(name={self.name!r}, options={redact_config(dict(self.options))!r})"


def _check_options(options: Any, path: str) -> None:
    """A mapping with string keys; its values are checked as plain data when parsed from a dict or file
    (``from_dict``), since code may hand a backend objects (a client, an array) directly."""
    if not isinstance(options, Mapping):
        raise InvalidInputError(f"{path} must be a mapping, got {type(options).__name__}")
    bad = [k for k in options if not isinstance(k, str)]
    if bad:
        raise InvalidInputError(f"{path}: keys must be strings, got {bad[0]!r:.60}")


@dataclass(frozen=True)
class AgentConfig:
    perception: PerceptionConfig = field(default_factory=PerceptionConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    answerer: AnswererConfig = field(default_factory=AnswererConfig)

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "AgentConfig":
        """From a mapping with the four sections (each optional: null or absent means the defaults)."""
        if not isinstance(d, Mapping):
            raise InvalidInputError(f"agent config must be a mapping, got {type(d).__name__}")
        unknown = [k for k in d if k not in ("perception", "memory", "query", "answerer")]
        if unknown:
            raise InvalidInputError(f"unknown agent config sections {sorted(map(str, unknown))}; "
                                    "known: perception, memory, query, answerer")
        memory = d.get("memory")
        cfg = AgentConfig(perception=_build(PerceptionConfig, "perception", d.get("perception")),
                          memory=MemoryConfig.from_dict({} if memory is None else memory),
                          query=_build(QueryConfig, "query", d.get("query")),
                          answerer=_build(AnswererConfig, "answerer", d.get("answerer")))
        _check_names(cfg)
        return cfg

    @staticmethod
    def from_file(path: Union[str, Path]) -> "AgentConfig":
        """A YAML or JSON config file (UTF-8, at most 1 MiB, no YAML anchors/aliases, see the module docstring),
        or the name of a packaged one (``smoke-random``; see ``config_path``)."""
        from .validation import MAX_CONFIG_BYTES, load_json, load_yaml, read_text

        p = config_path(path)
        text = read_text(p, "config file", MAX_CONFIG_BYTES)
        data = load_json(text, f"config file {p}") if p.suffix.lower() == ".json" else \
            load_yaml(text, f"config file {p}")
        if data is None:
            data = {}
        try:
            return AgentConfig.from_dict(data)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{p}: {exc}") from exc

    def to_dict(self, secrets: bool = False) -> dict[str, Any]:
        """The four sections as plain data. Secrets (``api_key``, tokens, credentials in URLs) come out as
        ``<redacted>``, so what is written (saves, run records) never holds them; ``secrets=True`` keeps them,
        for handing the config on inside this process only (directme/redact.py)."""
        from .redact import redact_config

        d = {"perception": asdict(self.perception), "memory": self.memory.to_dict(),
             "query": asdict(self.query), "answerer": asdict(self.answerer)}
        return d if secrets else redact_config(d)


PACKAGED_CONFIGS = Path(__file__).resolve().parent / "configs"  # ready configs shipped with the package


def packaged_configs() -> list[str]:
    """The names of the packaged configs (``--config NAME`` from any folder)."""
    return sorted(p.stem for p in PACKAGED_CONFIGS.glob("*.yaml"))


def config_path(name_or_path: Union[str, Path]) -> Path:
    """The config file ``name_or_path`` names: an existing file, else the packaged config of that name
    ("smoke-random", "smoke-random.yaml", or "examples/configs/smoke-random.yaml" given from another
    folder); InvalidInputError listing the packaged names when there is neither."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    name = p.name[: -len(p.suffix)] if p.suffix.lower() in (".yaml", ".yml") else p.name
    packaged = PACKAGED_CONFIGS / f"{name}.yaml"
    if packaged.is_file() and (p.parent == Path(".") or p.parent.as_posix().endswith("examples/configs")):
        return packaged
    raise InvalidInputError(f"config file {p} not found; give a YAML/JSON file or the name of a packaged config: "
                            f"{', '.join(packaged_configs())}")


def _check_names(cfg: AgentConfig) -> None:
    """The answerer and the perception backend exist, and a model pipeline's options have its shape: a
    misspelt name fails when the config is loaded, not at the first frame or question."""
    from .answerers.registry import available_answerers
    from .perception.factory import STANDALONE
    from .perception.pipeline import resolve_config

    if cfg.answerer.name not in available_answerers():
        raise InvalidInputError(f"answerer.name: unknown answerer {cfg.answerer.name!r:.60}; choose one of "
                                f"{', '.join(available_answerers())} (register_answerer() adds one before loading)")
    if cfg.answerer.name in ("geometric", "policy"):  # built in: their options are parsed now, naming the key path
        _ = cfg.answerer.geometric  # (policy: its own options and its geometric_options)
    if cfg.perception.backend not in STANDALONE:
        try:
            resolve_config(cfg.perception)
        except InvalidInputError as exc:
            raise InvalidInputError(f"perception.backend / perception.options: {exc}") from None


def oracle_config(noise: str = "none", seed: int = 0,
                  base: Union[None, str, Path, Mapping[str, Any]] = None) -> AgentConfig:
    """The Agent config for replaying a simulator episode with oracle perception (demo, eval sim): ``base``
    (a file, a mapping or None for the defaults) with the perception replaced by the oracle."""
    if isinstance(base, (str, Path)):
        d = AgentConfig.from_file(base).to_dict(secrets=True)
    else:
        d = {k: dict(v) for k, v in (base or {}).items()}
    d["perception"] = {"backend": "oracle", "noise": noise, "seed": seed}
    return AgentConfig.from_dict(d)


def truthfed_config(options: Optional[Mapping[str, Any]] = None, seed: int = 0,
                    base: Union[None, str, Path, Mapping[str, Any]] = None) -> AgentConfig:
    """Like ``oracle_config``, with the 'truth-fed' perception: the model pipeline on a simulator episode,
    each network replaced by a ground-truth stand-in (``options``: directme.sim.truthfed.TruthFedConfig)."""
    d = oracle_config("none", seed, base).to_dict(secrets=True)
    d["perception"] = {"backend": "truth-fed", "seed": seed, "options": dict(options or {})}
    return AgentConfig.from_dict(d)
