"""Resuming an evaluation safely: every result carries the hash of the configuration that
produced it, and a rerun into the same folder with a different configuration is refused (or
re-evaluates / keeps the old results when asked), so one metrics table never silently mixes
two configurations.

The fingerprint holds what decides a result: the benchmark, the model and its config (a config
file's contents, not its path), the model's keyword arguments, the kind of frame source and its
fps, and the protocol options (the judge by URL and model, never its key). Secrets (API keys, tokens,
credentials in URLs) are redacted before anything is hashed or written (directme/redact.py): results
do not depend on them, and config.json must not hold them.
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..errors import InvalidInputError
from ..types import TextEnum
from .models import agent_config

log = logging.getLogger(__name__)


class OnConfigChange(TextEnum):
    """What resuming does with finished results of another configuration: refuse, re-evaluate, keep."""

    ERROR = "error"
    RERUN = "rerun"
    KEEP = "keep"


ON_CONFIG_CHANGE = tuple(c.value for c in OnConfigChange)  # ("error", "rerun", "keep")


def job_fingerprint(job: Any) -> dict[str, Any]:
    """A JSON-able description of what decides ``job``'s results (see the module docstring)."""
    from ..redact import redact_config, redact_config_text, redact_url

    spec = job.model
    cfg = agent_config(spec)
    if cfg is not None:
        config: Any = cfg.to_dict()  # secrets redacted
    elif isinstance(spec.config, (str, Path)) and Path(spec.config).is_file():
        config = redact_config_text(Path(spec.config).read_text(encoding="utf-8"))
    else:
        config = redact_config(spec.config)
    opts = redact_config({k: v for k, v in job.opts.items() if k != "judge_spec"})
    judge = job.opts.get("judge_spec")
    return {"benchmark": job.benchmark, "model": spec.target, "config": config,
            "kwargs": redact_config(dict(spec.kwargs)), "frames": type(job.frames).__name__,
            "frames_fps": getattr(job.frames, "fps", None), "fps": job.fps, "opts": opts,
            "judge": [redact_url(judge.base_url), judge.model] if judge else None}


def config_hash(fingerprint: Mapping[str, Any]) -> str:
    text = json.dumps(fingerprint, sort_keys=True, default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _plain(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, (set, frozenset, tuple)):
        return sorted(x, key=str) if isinstance(x, (set, frozenset)) else list(x)
    return repr(x)


@dataclass(frozen=True)
class ResumePlan:
    """Which episodes to run, and which finished results came from another (or an unknown) config."""

    todo: tuple[Any, ...]
    changed: tuple[str, ...]  # finished with a different config hash
    unknown: tuple[str, ...]  # finished before results carried a hash


def plan_resume(episodes: Sequence[Any], saved_hashes: Mapping[str, Any], current: str,
                on_config_change: str = OnConfigChange.ERROR, out_dir: Any = "") -> ResumePlan:
    """``saved_hashes``: episode id -> config hash of its finished result (None: no hash stored).

    ``on_config_change``: "error" refuses to mix configurations, "rerun" re-evaluates the
    episodes finished with another one, "keep" keeps them (with a warning)."""
    if on_config_change not in ON_CONFIG_CHANGE:
        raise InvalidInputError(f"on_config_change must be one of {ON_CONFIG_CHANGE}, got {on_config_change!r}")
    on_config_change = OnConfigChange(on_config_change)
    done = dict(saved_hashes)
    finished = [e.episode_id for e in episodes if e.episode_id in done]
    changed = tuple(eid for eid in finished if done[eid] not in (None, current))
    unknown = tuple(eid for eid in finished if done[eid] is None)
    if changed and on_config_change == OnConfigChange.ERROR:
        others = sorted({str(done[eid]) for eid in changed})
        raise InvalidInputError(
            f"{len(changed)} finished result(s) in {out_dir} ({_some(changed)}) were produced with a different "
            f"configuration (hash {', '.join(others)}; now {current}): resuming would mix two configurations in "
            "one metrics table. Use another --out, or --on-config-change rerun (re-evaluate them) or keep")
    if changed and on_config_change == OnConfigChange.KEEP:
        log.warning("keeping %d result(s) produced with a different configuration: %s", len(changed), _some(changed))
    if unknown:
        log.warning("%d finished result(s) in %s carry no configuration hash (written by an older directme); "
                    "kept as they are: %s", len(unknown), out_dir, _some(unknown))
    rerun = set(changed) if on_config_change == OnConfigChange.RERUN else set()
    todo = tuple(e for e in episodes if e.episode_id not in done or e.episode_id in rerun)
    return ResumePlan(todo, changed, unknown)


def _some(ids: Iterable[str], n: int = 3) -> str:
    ids = list(ids)
    return ", ".join(ids[:n]) + (f" and {len(ids) - n} more" if len(ids) > n else "")
