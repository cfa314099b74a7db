"""Closed sets of names are TextEnums: members are their strings (compare, hash, JSON, print alike)."""
from __future__ import annotations

import json

import pytest

from directme.bench import BENCHMARKS, Benchmark, get_benchmark
from directme.bench.metrics import ON_TIME, ResponseTiming, classify_response, response_rates
from directme.bench.phostream import TIME_TYPES, TimeType
from directme.bench.resume import ON_CONFIG_CHANGE, OnConfigChange, plan_resume
from directme.errors import InvalidInputError
from directme.perception import PoseSource, Stage
from directme.perception.da3 import POSE_SOURCES
from directme.readers.video import ON_CORRUPT, OnCorrupt
from directme.types import TextEnum


def test_members_behave_as_their_strings():
    for member, value in [(PoseSource.GIVEN, "given"), (OnCorrupt.SKIP, "skip"), (ResponseTiming.ON_TIME, "OnTime"),
                          (TimeType.FORWARD, "forward"), (Benchmark.SIM, "sim"), (Stage.DEPTH_POSE, "depth_pose")]:
        assert isinstance(member, TextEnum) and isinstance(member, str)
        assert member == value and hash(member) == hash(value) and {value: 1}[member] == 1
        assert str(member) == f"{member}" == "%s" % member == value
        assert json.dumps({member: [member]}) == json.dumps({value: [value]})
        assert type(member)(value) is member


def test_the_old_string_tuples_are_the_members_values():
    assert POSE_SOURCES == ("auto", "model", "given") and ON_CORRUPT == ("error", "skip")
    assert TIME_TYPES == ("instant", "backward", "forward") and ON_CONFIG_CHANGE == ("error", "rerun", "keep")
    assert BENCHMARKS == ("ucsbench", "teleego", "phostream", "egosat", "xlebench", "sim")
    assert all(type(v) is str for v in POSE_SOURCES + ON_CORRUPT + TIME_TYPES + ON_CONFIG_CHANGE + BENCHMARKS)


def test_metrics_and_validation_with_members():
    assert classify_response(10.0, 11.0) is ResponseTiming.ON_TIME == ON_TIME == "OnTime"
    assert response_rates(["OnTime", ResponseTiming.LATE])["OnTime"] == 0.5
    assert get_benchmark(Benchmark.SIM).__name__ == get_benchmark("sim").__name__ == "directme.bench.sim"
    with pytest.raises(InvalidInputError, match=r"one of \('error', 'rerun', 'keep'\), got 'redo'"):
        plan_resume([], {}, "h", on_config_change="redo")
    assert plan_resume([], {}, "h", on_config_change=OnConfigChange.KEEP).todo == ()


def test_answer_flags_are_flag_members_and_unknown_names_are_refused():
    from directme.types import Answer, Flag

    read_back = Answer("q", 1.0, "t", flags=("abstained", Flag.NO_EVIDENCE))  # e.g. from a result file
    assert read_back.flags == (Flag.ABSTAINED, Flag.NO_EVIDENCE)
    assert all(type(f) is Flag for f in read_back.flags)
    with pytest.raises(InvalidInputError, match="'bogus'"):
        Answer("q", 1.0, "t", flags=("bogus",))
