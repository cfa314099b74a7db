"""`directme eval` (--check, a dry run, crash isolation, --in-process) and the EgoSAT adapter contract."""
from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from directme.bench.egosat_adapter import DirectmeEgoSATAdapter
from directme.bench.models import ModelSpec
from directme.bench.runner import BlankFrames
from directme.cli import main

ART = Path(__file__).resolve().parent / "artifacts" / "bench"


def test_eval_check_prints_items_last(capsys):
    for bench, path, n in [("ucsbench", ART / "ucsbench_questions.jsonl", 4), ("egosat", ART / "egosat_queryset.json", 3),
                           ("xlebench", ART / "xlebench.json", 4), ("teleego", ART / "teleego_qa.json", None)]:
        extra = ["--timeline", str(ART / "teleego_timeline.json")] if bench == "teleego" else []
        assert main(["eval", bench, "--annotations", str(path), "--check", *extra]) == 0
        last = capsys.readouterr().out.strip().splitlines()[-1]
        assert last == f"items={n if n is not None else 4}"


def test_eval_bad_annotations_exit_code(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"qid": "q1", "question": "where?"}]', encoding="utf-8")
    assert main(["eval", "ucsbench", "--annotations", str(bad), "--check"]) == 2
    assert "qid q1" in capsys.readouterr().err


def test_eval_dry_run_writes_predictions_and_table(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(["eval", "xlebench", "--annotations", str(ART / "xlebench.json"), "--blank-frames", "--model", "scripted",
               "--out", str(out)])
    assert rc == 0
    assert (out / "predictions" / "p01_day1.json").is_file()
    table = (out / "metrics.md").read_text()
    assert "| temporal_localization.recall_at_5_tiou_0.3 | 0.0000 |" in table
    assert capsys.readouterr().out.strip().endswith(f"out={out}")


@pytest.fixture
def no_core_dumps():
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))  # inherited by the worker processes
    yield
    resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def test_eval_survives_a_model_that_segfaults(tmp_path, capsys, no_core_dumps):
    """`--model faulthandler:_sigsegv` "builds" the model by segfaulting the process: with the
    default single worker each video fails alone and the command still finishes."""
    out = tmp_path / "run"
    rc = main(["eval", "ucsbench", "--annotations", str(ART / "ucsbench_questions.jsonl"), "--blank-frames",
               "--model", "faulthandler:_sigsegv", "--out", str(out)])
    assert rc == 1
    errors = sorted((out / "errors").glob("*.json"))
    assert [p.stem for p in errors] == ["v1", "v2"]
    assert all("killed by signal SIGSEGV" in json.loads(p.read_text())["error"] for p in errors)
    assert "(2 failed)" in (out / "metrics.md").read_text() and f"out={out}" in capsys.readouterr().out


def test_eval_in_process_option(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(["eval", "ucsbench", "--annotations", str(ART / "ucsbench_questions.jsonl"), "--blank-frames",
               "--model", "scripted", "--in-process", "--out", str(out)])
    assert rc == 0 and json.loads((out / "metrics.json").read_text())["executor"] == {"kind": "in_process"}
    assert json.loads((out / "predictions" / "v1.json").read_text())["pid"] == os.getpid()
    capsys.readouterr()


def test_egosat_adapter_contract(tmp_path):
    path = Path(__file__).resolve().parent.parent / "directme" / "bench" / "egosat_adapter.py"
    spec = importlib.util.spec_from_file_location("adapter_module", str(path))  # as EgoSAT's runner loads it
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert hasattr(mod.create_adapter(), "run")

    question = "What will the person do next?"
    adapter = DirectmeEgoSATAdapter(
        model=ModelSpec("scripted", kwargs={"answers": {question: "A"},
                                            "scores": {question: {"A": 0.6, "B": 0.2, "C": 0.1, "D": 0.1}}}),
        fps=1.0, frames=lambda video, episode: BlankFrames()(episode))
    out = adapter.run(tmp_path / "clip.mp4", ART / "egosat_queryset.json", "cand_conf", tmp_path / "o" / "pred.json")
    data = json.loads(Path(out).read_text())
    assert data["source_queryset"].endswith("egosat_queryset.json") and data["mode"] == "cand_conf"
    first = data["samples"][0]
    assert first["idx"] == 0 and first["parsed"]["ans"] == "A" and first["t_eval"] == 4.0
    p = first["diagnostics"]["prompt_and_encoding_debug"]["cand_conf_probe"]["p_cond"]
    assert p == {"A": 0.6, "B": 0.2, "C": 0.1, "D": 0.1}
    assert [s["idx"] for s in data["samples"]] == [0, 1, 2]


def test_eval_progress_eta_and_summary_table(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["eval", "ucsbench", "--annotations", str(ART / "ucsbench_questions.jsonl"), "--blank-frames",
                 "--model", "scripted", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    lines = [ln for ln in printed.err.splitlines() if ln.startswith("[")]
    assert lines[0].startswith("[1/2] v1 ok") and "items 3/4, ETA 0:00:" in lines[0]  # not a terminal: lines
    assert lines[1].startswith("[2/2] v2 ok") and lines[1].endswith("items 4/4")
    table = printed.out.split("ucsbench: 2/2 videos finished in ", 1)[1]
    assert "(0 failed, 0 from earlier runs; executor processes)" in table
    assert re.search(r"^overall +0\.2500 \(1/4\)$", table, re.M) and table.rstrip().endswith(f"out={out}")


def test_eval_video_timeout_fails_only_the_stuck_videos(tmp_path, capsys):
    """`--model signal:pause` builds no model: it blocks for ever; --video-timeout stops each worker."""
    out = tmp_path / "run"
    rc = main(["eval", "ucsbench", "--annotations", str(ART / "ucsbench_questions.jsonl"), "--blank-frames",
               "--model", "signal:pause", "--video-timeout", "2", "--workers", "2", "--out", str(out)])
    assert rc == 1
    errors = sorted((out / "errors").glob("*.json"))
    assert [p.stem for p in errors] == ["v1", "v2"]
    assert all("timed out after 2 s" in json.loads(p.read_text())["error"] for p in errors)
    printed = capsys.readouterr().out
    assert re.search(r"^v1 +timed out after 2 s \(the per-video timeout\)", printed, re.M), printed
    with pytest.raises(SystemExit):
        main(["eval", "ucsbench", "--annotations", "x", "--video-timeout", "0"])
