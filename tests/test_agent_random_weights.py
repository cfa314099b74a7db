"""Random weights are impossible to miss: every answer is flagged, a warning says so once, the run's summary,
result file and answer lines carry it, and model loading prints one line per stage."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from video_builders import seven_scenes_folder
from directme import Agent
from directme.cli import main
from directme.commands.doctor_checks import sample_frames
from directme.perception import pipeline
from directme.types import Flag

pytest.importorskip("transformers")

# given depth and pose; a toy random Grounding DINO over two labels and a toy random CLIP: fast on CPU
RANDOM_STAGES = {"depth_pose": {"name": "given"},
                 "detector": {"name": "grounding_dino", "weights": "random", "image_size": 64},
                 "tracker": {"name": "box"}, "scene_tagger": {"name": "clip", "weights": "random"},
                 "vocabulary": ["sofa", "chair"]}
CONFIG = {"perception": {"backend": "pipeline", "options": RANDOM_STAGES}, "query": {"embedder": "string"}}


@pytest.fixture
def fresh_warning(monkeypatch):
    """The random-weights warning is given once per process: forget that it was."""
    monkeypatch.setattr(pipeline, "_WARNED_RANDOM", set())


def test_every_answer_is_flagged_and_the_warning_is_logged_once(fresh_warning, caplog) -> None:
    agent = Agent(CONFIG)
    first = agent.ask("Where is the sofa?", options=["in front of you", "behind you"])  # nothing built yet
    with caplog.at_level(logging.INFO):
        for f in sample_frames():
            agent.observe(f)
        agent.flush()
    answers = [first] + [agent.ask(q, options=opts) for q, opts in (
        ("Where is the sofa now?", ["in front of you", "behind you", "to your left"]),
        ("Which room am I in?", ["kitchen", "living room"]), ("What path did I take?", None))]
    assert agent.random_weights == ("detector", "scene_tagger")
    assert all(Flag.RANDOM_WEIGHTS in a.flags for a in answers), [a.flags for a in answers]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "random weights" in r.getMessage()]
    assert len(warnings) == 1 and "detector, scene_tagger" in warnings[0].getMessage()
    loading = [r.getMessage() for r in caplog.records if r.name == "directme.loading"]
    assert [m.split(":")[0] for m in loading] == ["loading depth_pose", "loading detector", "loading tracker",
                                                  "loading scene_tagger"], loading
    assert "loading detector: grounding_dino (random weights) ... " in loading[1] and loading[1].endswith(" s")
    assert "(random weights)" not in loading[0]
    Agent(CONFIG).perception  # a second build in this process: no second warning
    assert sum("random weights in" in r.getMessage() for r in caplog.records) == 1


def test_real_weights_or_given_input_are_not_flagged() -> None:
    agent = Agent({"query": {"embedder": "string"}})
    for f in sample_frames():
        agent.observe(f)
    assert agent.random_weights == ()
    assert Flag.RANDOM_WEIGHTS not in agent.ask("Where is the sofa now?").flags


def test_run_with_random_weights_warns_and_flags_every_answer(tmp_path, capsys, fresh_warning) -> None:
    data = seven_scenes_folder(tmp_path / "scene", 4)
    cfg = tmp_path / "random.json"
    cfg.write_text(json.dumps(CONFIG), encoding="utf-8")
    out = tmp_path / "answers.json"
    rc = main(["run", str(data), "--config", str(cfg), "--fps", "0", "--quiet", "--out", str(out),
               "--ask", "Where is the sofa?", "--ask", "Which room am I in?", "--ask", "What path did I take?"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "random weights in detector, scene_tagger" in captured.err and "WARNING" in captured.err
    assert "loading detector: grounding_dino (random weights) ... " in captured.err
    assert captured.out.count("[RANDOM WEIGHTS: meaningless]") == 3
    summary = next(line for line in captured.out.splitlines() if line.startswith("frames="))
    assert summary.endswith("random_weights=detector,scene_tagger")
    records = json.loads(out.read_text(encoding="utf-8"))
    assert len(records) == 3 and all("random_weights" in r["flags"] for r in records)


def test_a_tiny_random_mllm_flags_its_answers(tmp_path, caplog) -> None:
    from directme.answerers.tiny import build_tiny_vl
    from directme.commands.doctor_checks import ask_tiny

    build_tiny_vl("qwen2_5_vl", tmp_path / "tiny")
    with caplog.at_level(logging.INFO):
        answer = ask_tiny("qwen2_5_vl", str(tmp_path / "tiny"))
    assert Flag.RANDOM_WEIGHTS in answer.flags
    assert any("has random weights" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert any(r.getMessage().startswith("loading answerer: transformers:tiny on ") and
               "(random weights) ... " in r.getMessage() for r in caplog.records if r.name == "directme.loading")
