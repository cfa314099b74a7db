"""benchmarks/count_ceiling.py: which Quantity Change questions a memory can answer from what the oracle
detector reported. With perfect perception every counted object was reported; with a detector that reports
nothing, no question with a present object can be answered."""
from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

from directme.sim import generate_episode
from directme.sim.oracle import get_preset

_SPEC = importlib.util.spec_from_file_location(
    "count_ceiling", Path(__file__).resolve().parents[1] / "benchmarks" / "count_ceiling.py")
count_ceiling = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(count_ceiling)


def _episode():
    return generate_episode(seed=0, minutes=3)


def test_perfect_detector_leaves_every_count_answerable():
    ep = _episode()
    verdicts = count_ceiling.classify(ep, "none", 0)
    assert len(verdicts) == len([q for q in ep.questions if q.subtask == count_ceiling.SUBTASK]) > 0
    assert set(verdicts) == {"ok"}


def test_blind_detector_leaves_only_counts_of_zero():
    ep = _episode()
    blind = replace(get_preset("none"), name="blind", miss_rate=1.0)
    verdicts = count_ceiling.classify(ep, blind, 0)
    counts = [int(q.meta["answer_value"]) for q in sorted(ep.questions, key=lambda q: q.t_s) if q.subtask == count_ceiling.SUBTASK]
    for v, n in zip(verdicts, counts):
        assert v == ("ok" if n == 0 else "never")
