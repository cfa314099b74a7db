"""examples/bench_common.py is `directme eval` with the benchmark fixed: the same options (--check and
--blank-frames included), the same parser and run, nothing re-implemented."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from directme.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
ART = ROOT / "tests" / "artifacts" / "bench"


@pytest.fixture(scope="module")
def bench_common():
    spec = importlib.util.spec_from_file_location("bench_common", ROOT / "examples" / "bench_common.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _options(parser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings}


def test_examples_take_exactly_the_cli_options(bench_common):
    cli = build_parser()._subparsers._group_actions[0].choices["eval"]
    assert _options(bench_common.parser("ucsbench", "doc")) == _options(cli)
    assert {"--check", "--blank-frames", "--video-timeout", "--judge-url"} <= _options(cli)
    for script in sorted((ROOT / "examples").glob("eval_*.py")):
        text = script.read_text(encoding="utf-8")
        assert "add_argument" not in text or script.name == "eval_sim.py", f"{script.name} re-implements options"


def test_example_check_and_blank_frames(bench_common, tmp_path, capsys):
    assert bench_common.main("ucsbench", "doc", ["--annotations", str(ART / "ucsbench_questions.jsonl"),
                                                 "--check"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "items=4"
    out = tmp_path / "run"
    assert bench_common.main("ucsbench", "doc", ["--annotations", str(ART / "ucsbench_questions.jsonl"),
                                                 "--blank-frames", "--model", "scripted", "--out", str(out)]) == 0
    assert json.loads((out / "metrics.json").read_text())["finished"] == 2
    assert capsys.readouterr().out.rstrip().endswith(f"out={out}")
    assert bench_common.main("ucsbench", "doc", ["--annotations", str(tmp_path / "missing.json"), "--check"]) == 2
