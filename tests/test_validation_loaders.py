"""Loaders read with strict schemas: malformed annotation files, hostile values and unit mistakes are refused
with an error naming the file and the record (never a traceback, never silently accepted), the CLI refuses
``--limit -1``, and the RGB-D readers refuse 8-bit depth and log their intrinsics default. Includes the probe's
finding 9."""
from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from directme.bench import egosat, phostream, teleego, ucsbench, xlebench
from directme.cli import main
from directme.errors import DirectmeError, InvalidInputError
from directme.readers.rgbd import SevenScenesReader

FAST = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
UCS = {"qid": "q1", "video_uid": "v1", "question": "Where is the sofa?", "query_timestamp": 3.0,
       "options": ["front", "behind"], "answer_idx": 1}
TELE = {"index": 1, "QA_type": "mc_single", "question": "What is in the sink?", "options": ["A. a cup", "B. a pan"],
        "answer": {"value": ["B"]}, "evidence": {"timestep": {"start": "00:00:10", "end": "00:00:20"}}}
PHO = {"video_path": "v/a.mp4", "verified_responses": [
    {"user_query": "What is on the table?", "timestamp_question": "01:05", "time_type": "instant", "response": "a cup"}]}
EGO = {"video_uid": "clip", "samples": [{"idx": 0, "t_eval": 4.0, "prompt": "What next?",
                                         "mcq": {"answer": "A", "options": ["cut", "wash", "open", "pour"]}}]}
XLE = [{"log_id": "p01", "duration_s": 30, "queries": [
    {"qid": "c", "task": "counting", "query": "How many times?", "answer": 3},
    {"qid": "l", "task": "temporal_localization", "query": "When?", "gt_spans": [["00:00:10", "00:00:20"]]}]}]


def _write(tmp_path: Path, name: str, content) -> Path:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif isinstance(content, str):
        p.write_text(content, encoding="utf-8")
    else:
        p.write_text(json.dumps(content), encoding="utf-8")
    return p


def _refused(module, path: Path, needle: str = "") -> str:
    with pytest.raises(InvalidInputError) as err:
        module.load(str(path))
    msg = str(err.value)
    assert path.name in msg and needle in msg, msg
    return msg


def test_probe_finding_9_malformed_annotations_hostile_values_and_unit_mistakes(tmp_path, caplog):
    """Every case of the probe: 9 malformed files, 1e308, null question, answer_idx true, --limit -1,
    millimetre depth, missing intrinsics, 8-bit depth, fx=1e-9, 1e9 m translation (the last four in
    test_validation_inputs and below), options as a string/dict and a 400-digit option."""
    malformed = [
        (ucsbench, "bad_utf8.jsonl", json.dumps(UCS).replace("sofa", "sof\udcff").encode("utf-8", "surrogateescape"),
         "not UTF-8"),
        (ucsbench, "utf16.json", json.dumps([UCS]).encode("utf-16"), "UTF-16"),
        (ucsbench, "digits.jsonl", json.dumps(UCS).replace("3.0", "1" * 400).encode(), "timestamp"),
        (teleego, "deep.json", b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
        (teleego, "evidence.json", json.dumps([{**TELE, "evidence": ["00:00:20"]}]).encode(), "evidence"),
        (teleego, "timestep.json", json.dumps([{**TELE, "evidence": {"timestep": "00:00:20"}}]).encode(), "timestep"),
        (egosat, "mcq.json", json.dumps({**EGO, "samples": [{**EGO["samples"][0], "mcq": ["a", "b"]}]}).encode(), "mcq"),
        (xlebench, "queries.json", json.dumps([{**XLE[0], "queries": "abc"}]).encode(), "queries"),
        (xlebench, "queries_dict.json", json.dumps([{**XLE[0], "queries": {"q": 1}}]).encode(), "queries"),
    ]
    for module, name, raw, needle in malformed:
        _refused(module, _write(tmp_path, name, raw), needle)
    _refused(ucsbench, _write(tmp_path, "far.jsonl", json.dumps({**UCS, "query_timestamp": 1e308})), "beyond")
    _refused(ucsbench, _write(tmp_path, "null_q.jsonl", json.dumps({**UCS, "question": None})), "question")
    _refused(ucsbench, _write(tmp_path, "bool_idx.jsonl", json.dumps({**UCS, "answer_idx": True})), "answer_idx")
    _refused(egosat, _write(tmp_path, "bool_idx.json", {**EGO, "samples": [
        {**EGO["samples"][0], "mcq": {"answer_idx": True, "options": ["a", "b", "c", "d"]}}]}), "answer_idx")
    good = _write(tmp_path, "good.jsonl", "\n".join(json.dumps({**UCS, "video_uid": v}) for v in ("a", "b")))
    with pytest.raises(SystemExit) as exit_:
        main(["eval", "ucsbench", "--annotations", str(good), "--check", "--limit", "-1"])
    assert exit_.value.code == 2
    # missing camera-intrinsics.txt: an explicit, logged default (640x480 only), else an error
    _seven_scenes(tmp_path / "kinect", 640, 480, intrinsics=False)
    caplog.set_level(logging.WARNING, logger="directme.readers.rgbd")
    reader = SevenScenesReader(tmp_path / "kinect", fps=None)
    frames = list(reader)
    assert frames[0].intrinsics.fx == 585.0 and "Kinect" in reader.intrinsics_source
    assert any("camera-intrinsics.txt" in r.getMessage() for r in caplog.records)
    _seven_scenes(tmp_path / "small", 64, 48, intrinsics=False)
    with pytest.raises(InvalidInputError, match="camera-intrinsics.txt"):
        list(SevenScenesReader(tmp_path / "small", fps=None))
    _seven_scenes(tmp_path / "eight_bit", 64, 48, depth_dtype=np.uint8)
    with pytest.raises(InvalidInputError, match="8-bit"):
        list(SevenScenesReader(tmp_path / "eight_bit", fps=None))
    _seven_scenes(tmp_path / "metres_as_mm", 64, 48)
    with pytest.raises(InvalidInputError, match="millimetres"):
        list(SevenScenesReader(tmp_path / "metres_as_mm", fps=None, depth_scale=1.0))


def _seven_scenes(folder: Path, w: int, h: int, intrinsics: bool = True, depth_dtype=np.uint16) -> None:
    folder.mkdir(parents=True)
    for i in range(2):
        stem = folder / f"frame-{i:06d}"
        Image.fromarray(np.full((h, w, 3), 40 * i, np.uint8)).save(f"{stem}.color.png")
        Image.fromarray(np.full((h, w), 1500 if depth_dtype == np.uint16 else 150, depth_dtype)).save(
            f"{stem}.depth.png")
        np.savetxt(f"{stem}.pose.txt", np.eye(4))
    if intrinsics:
        np.savetxt(folder / "camera-intrinsics.txt", [[50, 0, 32], [0, 50, 24], [0, 0, 1]])


def _hostile():
    return st.one_of(st.none(), st.booleans(), st.integers(), st.integers(10 ** 18, 10 ** 400),
                     st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e308, -1.0, 1e7]),
                     st.text(max_size=8), st.sampled_from(["", " ", "99:99", "00:00:05", "9" * 400]),
                     st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(),
                                                                              max_size=2))


RECORDS = {ucsbench: ("u.jsonl", UCS, ["qid", "question", "query_timestamp", "options", "answer_idx", "category"]),
           teleego: ("t.json", TELE, ["question", "QA_type", "options", "answer", "evidence", "index"]),
           egosat: ("e.json", EGO["samples"][0], ["idx", "t_eval", "prompt", "mcq", "step_idx", "state"]),
           xlebench: ("x.json", XLE[0]["queries"][0], ["task", "query", "answer", "qid"]),
           phostream: ("p.json", PHO["verified_responses"][0],
                       ["user_query", "timestamp_question", "time_type", "response", "capability"])}


def _wrap(module, record):
    if module is ucsbench:
        return json.dumps(record)
    if module is teleego:
        return [record]
    if module is egosat:
        return {**EGO, "samples": [record]}
    if module is xlebench:
        return [{**XLE[0], "queries": [record]}]
    return [{**PHO, "verified_responses": [record]}]


@FAST
@given(data=st.data())
def test_loaders_clear_error_or_sane_result(data, tmp_path_factory):
    module = data.draw(st.sampled_from(list(RECORDS)))
    name, record, keys = RECORDS[module]
    key = data.draw(st.sampled_from(keys))
    value = data.draw(_hostile())
    path = _write(tmp_path_factory.mktemp("ann"), name, _wrap(module, {**record, key: value}))
    try:
        episodes = module.load(str(path))
    except DirectmeError as exc:
        assert path.name in str(exc), str(exc)
        return
    for ep in episodes:
        for item in ep.items:
            for attr in ("t_s", "t_eval", "t_q_s", "t_answer_s"):
                t = getattr(item, attr, None)
                assert t is None or (isinstance(t, float) and 0 <= t <= 7 * 86400), (attr, t)
            for attr in ("text", "question", "query", "user_query"):
                q = getattr(item, attr, None)
                assert q is None or (isinstance(q, str) and q.strip()), (attr, q)
            opts = getattr(item, "options", ())
            assert isinstance(opts, tuple) and all(isinstance(o, str) for o in opts)
        assert math.isfinite(ep.meta.get("horizon_s", 0.0))
