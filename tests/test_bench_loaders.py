"""Benchmark loaders on the real annotation files (shared/data/qa) and on fixtures written
from each benchmark's documented schema; malformed files name the bad record."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from directme.bench import count_items, egosat, phostream, teleego, ucsbench, xlebench
from directme.bench.annotations import parse_clock
from directme.errors import InvalidInputError

HERE = Path(__file__).resolve().parent
ART = HERE / "artifacts" / "bench"
QA = HERE.parent.parent / "shared" / "data" / "qa"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real annotation data not available at {path} (shared/data is absent on this machine)")
    return path


def test_parse_clock_forms():
    assert parse_clock("00:00:09") == 9
    assert parse_clock("75:30") == 4530  # PhoStream minutes above 59
    assert parse_clock("1:02:03") == 3723
    assert parse_clock("7:05") == 425
    assert parse_clock(12.5) == 12.5
    with pytest.raises(InvalidInputError, match="record 3"):
        parse_clock("12:99", where="record 3")


def test_phostream_real_file_all_items_with_seconds():
    path = _need(QA / "phostream" / "phostream_annotations.json")
    episodes = phostream.load(str(path))
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert len(episodes) == 578 and count_items(episodes) == 5572
    checked_over_59 = 0
    for ep, video in zip(episodes, raw):
        assert ep.video == video["video_path"]
        for item, r in zip(ep.items, video["verified_responses"]):
            mm, ss = r["timestamp_question"].split(":")
            assert item.t_q_s == int(mm) * 60 + int(ss)
            checked_over_59 += int(mm) > 59
            if r["time_type"] == "forward":
                pm, ps = r["timestamp_proactive"].split(":")
                assert item.t_answer_s == int(pm) * 60 + int(ps) >= item.t_q_s
            else:
                assert item.t_answer_s == item.t_q_s
    counts = {t: sum(i.time_type == t for e in episodes for i in e.items) for t in phostream.TIME_TYPES}
    assert counts == {"instant": 1647, "backward": 1123, "forward": 2802}
    assert len({e.episode_id for e in episodes}) == 578


def test_ucsbench_real_samples_empty_options_and_repeats():
    path = _need(QA / "ucsbench" / "sample_qa.json")
    (ep,) = ucsbench.load(str(path))
    assert [q.t_s for q in ep.items] == [9, 16, 16, 18]
    assert all(q.options == () for q in ep.items)  # empty options -> open-ended
    whiteboard = [q for q in ep.items if "whiteboard" in q.text]
    assert len(whiteboard) == 2 and whiteboard[0].meta["reference"] != whiteboard[1].meta["reference"]
    (inside,) = ucsbench.load(str(QA / "ucsbench" / "sample_qa_inside.json"))
    assert [q.t_s for q in inside.items] == [2, 12, 24, 28, 44, 47]


def test_ucsbench_real_demo_results_schema():
    path = _need(QA / "ucsbench" / "demo_qa_results.json")
    (ep,) = ucsbench.load(str(path))
    assert count_items([ep]) == 7
    assert {q.qtype for q in ep.items} == {"COUNT", "BINARY", "OTHER"}
    assert ep.items[0].t_s == 5.0 and ep.items[0].answer == "D"


def test_ucsbench_jsonl_schema():
    eps = {e.episode_id: e for e in ucsbench.load(str(ART / "ucsbench_questions.jsonl"))}
    v1 = eps["v1"]
    assert [q.qid for q in v1.items] == ["v1_0", "v1_2", "v1_1"]  # sorted by time
    assert [q.answer for q in v1.items] == ["B", "A", "C"]
    assert v1.items[2].t_s == 7.0 and len(v1.items[0].options) == 5
    assert eps["v2"].items[0].qtype == "COUNT"


def test_teleego_fixture_with_timeline():
    (ep,) = teleego.load(str(ART / "teleego_qa.json"), timeline=str(ART / "teleego_timeline.json"))
    by = {it.index: it for it in ep.items}
    assert by["1"].t_s == 98  # D1-09:31:38 is 98 s into the first segment
    assert by["2"].t_s == 321  # D2-18:00:20.5 -> 300 + 20.5, asked at the ceiling
    assert by["3"].t_s == 60  # plain clock = stream seconds
    assert by["4"].t_s == 420
    assert by["2"].gold == ("A", "C") and by["3"].gold is True and by["1"].gold == ("B",)


def test_teleego_day_labels_without_timeline_say_the_timeline_is_missing(tmp_path):
    with pytest.raises(InvalidInputError) as err:
        teleego.load(str(ART / "teleego_qa.json"))
    msg = str(err.value)
    assert "no timeline file was given" in msg and "--timeline" in msg and "D1-09:31:38" in msg
    assert "matches this QA file" not in msg
    empty = tmp_path / "timeline.json"  # a timeline whose segments miss the label keeps the old advice
    empty.write_text(json.dumps({"mapping_by_input_label": {"x": {"start_label": "D5-00:00:00",
                                                                  "end_label": "D5-01:00:00"}}}))
    with pytest.raises(InvalidInputError, match="falls in no timeline segment.*matches this QA file"):
        teleego.load(str(ART / "teleego_qa.json"), timeline=str(empty))


def test_egosat_xlebench_fixtures():
    (ep,) = egosat.load(str(ART / "egosat_queryset.json"))
    assert ep.video == "clip0001" and ep.meta["task"] == "ms_pred"
    assert [s.answer for s in ep.items] == ["A", "B", None]
    assert ep.items[2].options[3] == "pour water"  # parsed from the prompt's A-D lines
    assert ep.items[0].question.startswith("What will the person do next?")
    (log,) = xlebench.load(str(ART / "xlebench.json"))
    assert log.duration_s == 30 and [q.task for q in log.items] == list(xlebench.TASKS)
    assert log.items[0].gt_spans == ((10.0, 20.0),) and log.items[2].order == ("A", "B", "C")


@pytest.mark.parametrize("module,content,needle", [
    (ucsbench, [{"qid": "q7", "question": "Where?", "options": {"A": "x", "B": "y"}, "answer_label": "C",
                 "question_timestamps": "00:00:05"}], "qid q7"),
    (ucsbench, [{"qid": "q8", "question": "Where?"}], "qid q8"),
    (ucsbench, [{"qid": "q9", "question": "Where?", "question_timestamps": "5 pm"}], "qid q9"),
    (phostream, [{"video_path": "a.mp4", "verified_responses": [
        {"user_query": "q", "timestamp_question": "00:05", "time_type": "forward", "response": "r"}]}],
     "response 0"),
    (phostream, [{"video_path": "a.mp4"}], "video 0"),
    (teleego, [{"index": 5, "QA_type": "mc_single", "question": "q", "options": ["A. x"], "answer": {"value": ["A"]},
                "evidence": {"timestep": {"start": "D9-01:00:00", "end": "D9-01:00:05"}}}], "index 5"),
    (teleego, [{"index": 6, "QA_type": "essay", "question": "q", "answer": {}, "evidence": {}}], "index 6"),
    (egosat, {"samples": [{"idx": 3, "t_eval": 1.0, "prompt": "no options here"}]}, "idx 3"),
    (xlebench, [{"log_id": "L", "queries": [{"task": "counting", "query": "how many?", "answer": "three"}]}],
     "query 0"),
])
def test_malformed_records_are_named(tmp_path, module, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(InvalidInputError) as err:
        module.load(str(path))
    assert needle in str(err.value) and "bad.json" in str(err.value)


def test_truncated_and_partial_files(tmp_path):
    good = (ART / "teleego_qa.json").read_text(encoding="utf-8")
    cut = tmp_path / "cut.json"
    cut.write_text(good[: len(good) // 2], encoding="utf-8")
    with pytest.raises(InvalidInputError, match="cut.json: line"):
        teleego.load(str(cut))
    lines = (ART / "ucsbench_questions.jsonl").read_text(encoding="utf-8").splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(lines[:2] + [lines[2][:30]]), encoding="utf-8")
    with pytest.raises(InvalidInputError, match="partial.jsonl: line 3"):
        ucsbench.load(str(partial))
    with pytest.raises(InvalidInputError, match="not found"):
        ucsbench.load(str(tmp_path / "missing.json"))
