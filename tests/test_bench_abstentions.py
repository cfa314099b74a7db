"""Every benchmark adapter counts abstentions one way (``Answer.abstained``): on blank frames the default
agent sees nothing, so its answers are abstentions, and each adapter's metrics must count every one of them
and never score one as correct, on time or judged; without a judge no judged score is claimed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from directme.cli import main

ART = Path(__file__).resolve().parent / "artifacts" / "bench"


def _eval(bench: str, annotations: Path, out: Path, *extra: str) -> tuple[dict, list[dict]]:
    assert main(["eval", bench, "--annotations", str(annotations), "--blank-frames", "--in-process",
                 "--out", str(out), *extra]) == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    records = [r for p in sorted((out / "predictions").glob("*.json")) for r in json.loads(p.read_text())["records"]]
    assert records and all(isinstance(r["abstained"], bool) for r in records)
    return metrics, records


def test_ucsbench_counts_every_abstention(tmp_path, capsys):
    metrics, records = _eval("ucsbench", ART / "ucsbench_questions.jsonl", tmp_path / "o")
    abstained = [r for r in records if r["abstained"]]
    assert abstained and metrics["overall"]["abstained"] == len(abstained)
    assert all(r["correct"] is not True and r["pred_letter"] is None for r in abstained)
    capsys.readouterr()


def test_an_open_ended_abstention_is_counted_though_unscored(tmp_path, capsys):
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"qid": "o1", "video_uid": "v1", "query_timestamp": 2, "question": "Where is the whiteboard?",
                              "options": [], "category": "c", "subcategory": "s", "qtype": "OPEN"}) + "\n",
                  encoding="utf-8")
    metrics, (rec,) = _eval("ucsbench", qa, tmp_path / "o")
    assert rec["abstained"] and "missing_object" in rec["flags"] and "'whiteboard'" in rec["pred_text"]
    assert metrics["overall"]["abstained"] == 1 and metrics["overall"]["unscored"] == 1
    capsys.readouterr()


@pytest.mark.slow  # the fixture timeline streams about 20 s of blank frames
def test_teleego_counts_abstentions_and_none_is_real_time_correct(tmp_path, capsys):
    metrics, records = _eval("teleego", ART / "teleego_qa.json", tmp_path / "o",
                             "--timeline", str(ART / "teleego_timeline.json"))
    closed = [r for r in records if r["qa_type"] != "open_ended"]
    assert metrics["rta"]["overall"]["abstained"] == sum(r["abstained"] for r in closed) > 0
    assert not any(r["rta_correct"] or r["correct"] for r in records if r["abstained"])
    capsys.readouterr()


def test_egosat_counts_abstentions(tmp_path, capsys):
    metrics, records = _eval("egosat", ART / "egosat_queryset.json", tmp_path / "o")
    assert metrics["overall"]["abstained"] == sum(r["abstained"] for r in records) > 0
    assert not any(r["correct"] for r in records if r["abstained"])
    capsys.readouterr()


def test_xlebench_reads_no_prediction_from_an_abstention(tmp_path, capsys):
    metrics, records = _eval("xlebench", ART / "xlebench.json", tmp_path / "o")
    assert metrics["abstained"] == sum(r["abstained"] for r in records) == len(records)
    assert metrics["judged"] == 0 and metrics["summary"]["judge_score_0_5"] is None  # no judge: no score
    by = {r["task"]: r for r in records}
    assert by["temporal_localization"]["pred_spans"] == [] and by["counting"]["pred"] is None
    assert by["summary_ordering"]["pred"] == [] and not by["counting"]["correct"]
    capsys.readouterr()


def test_phostream_abstentions_are_no_response_and_never_judged(tmp_path, capsys):
    rows = [{"user_query": q, "timestamp_question": "00:02", "time_type": "instant", "response": "ref", "capability": "c"}
            for q in ("Where is the whiteboard?", "What colour is my mug?")]
    path = tmp_path / "pho.json"
    path.write_text(json.dumps([{"video_path": "v/a.mp4", "verified_responses": rows}]), encoding="utf-8")
    metrics, records = _eval("phostream", path, tmp_path / "o", "--limit", "2")
    assert all(r["abstained"] and r["timing"] == "NoResponse" and not r["judged"] for r in records)
    assert metrics["abstained"] == len(records) and metrics["judged"] == 0
    assert metrics["rates"]["OnTime"] == 0.0 and metrics["score"] is None  # no judge configured: no score
    capsys.readouterr()


@pytest.fixture(scope="module")
def sim_dir(tmp_path_factory):
    from directme.sim import generate_episode, save_episode

    out = tmp_path_factory.mktemp("sim") / "ep"
    save_episode(generate_episode(seed=5, minutes=0.5, width=96, height=72), out)
    return out


def test_sim_counts_abstentions_like_ucsbench(sim_dir, tmp_path, capsys):
    assert main(["eval", "sim", "--annotations", str(sim_dir), "--in-process", "--fps", "0",
                 "--out", str(tmp_path / "o")]) == 0
    metrics = json.loads((tmp_path / "o" / "metrics.json").read_text())["metrics"]
    records = [r for p in (tmp_path / "o" / "predictions").glob("*.json") for r in json.loads(p.read_text())["records"]]
    assert metrics["overall"]["abstained"] == sum(r["abstained"] for r in records)
    assert metrics["overall"]["correct"] == sum(bool(r["correct"]) and not r["abstained"] for r in records)
    capsys.readouterr()
