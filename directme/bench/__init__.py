"""Benchmark adapters and the streaming evaluation runner.

Each benchmark module exposes ``load(path, **opts) -> list[BenchEpisode]``,
``run_episode(runner, episode, opts) -> list[dict]`` and ``summarize(results) -> dict``.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import InvalidInputError
from ..types import TextEnum


class Benchmark(TextEnum):
    """The benchmarks with an adapter: each is the module directme.bench.<value>."""

    UCSBENCH = "ucsbench"
    TELEEGO = "teleego"
    PHOSTREAM = "phostream"
    EGOSAT = "egosat"
    XLEBENCH = "xlebench"
    SIM = "sim"


BENCHMARKS = tuple(b.value for b in Benchmark)  # ("ucsbench", "teleego", "phostream", "egosat", "xlebench", "sim")


def get_benchmark(name: str) -> ModuleType:
    """The module implementing benchmark ``name`` (imported on demand)."""
    if name not in BENCHMARKS:
        raise InvalidInputError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    return importlib.import_module(f"directme.bench.{Benchmark(name).value}")


def count_items(episodes) -> int:
    """Number of questions / queries over all episodes."""
    return sum(len(e.items) for e in episodes)
