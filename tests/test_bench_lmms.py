"""The lmms-eval plugin (directme/bench/lmms): prompts in VSI-Bench's format read back, answers written as
the benchmark scores them, one memory per video (a second question streams no frame), the simulator's
VSI-Bench questions, and the offline task run end to end by lmms-eval (when lmms-eval is installed)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from directme.bench.lmms.prompt import AnswerType, benchmark_answer, read_prompt
from directme.bench.lmms.videos import AgentFactory, VideoMemories
from directme.bench.lmms.simtask import METRIC_OF_KIND
from directme.bench.lmms.vsi_kinds import KINDS, SPATIAL_KINDS, angle_deg, direction_answer, episode_items
from directme.sim.catalog import spoken
from directme.errors import InvalidInputError
from directme.types import Answer, Flag

REPO = Path(__file__).resolve().parents[1]

# lmms_eval/tasks/vsibench/utils.py, vsibench_doc_to_text, with the task's default prompt lines
MC_PROMPT = ("These are frames of a video.\n"
             "If I am standing by the bed and facing the sofa, is the toilet to my left, right, or back?\n"
             "Assume \"standing by\" means I am positioned at the center of the bed.\n"
             "An object is to my back if I would have to turn at least 135 degrees in order to face it.\n"
             "Options:\nA. right\nB. back\nC. left\n"
             "Answer with the option's letter from the given choices directly.")
NA_PROMPT = ("These are frames of a video.\nHow many chair(s) are in this room?\n"
             "Please answer the question using a single word or phrase.")


def test_prompt_in_the_benchmark_format_is_read():
    mc = read_prompt(MC_PROMPT)
    assert mc.question == "If I am standing by the bed and facing the sofa, is the toilet to my left, right, or back?"
    assert mc.options == ("right", "back", "left") and mc.letters == ("A", "B", "C")
    assert mc.answer_type is AnswerType.MULTIPLE_CHOICE
    assert len(mc.notes) == 2 and mc.notes[0].startswith("Assume")
    assert mc.instruction.startswith("Answer with the option's letter")
    na = read_prompt(NA_PROMPT)
    assert (na.question, na.options, na.answer_type) == ("How many chair(s) are in this room?", (), AnswerType.NUMBER)
    # the API models' variant of the instruction, and a question that says its unit
    gem = read_prompt("\nWhat is the size of this room (in square meters)?\nIf multiple rooms are shown, estimate the "
                      "size of the combined space.\nDo not response anything other than a single number!")
    assert gem.answer_type is AnswerType.NUMBER and gem.question.startswith("What is the size of this room")
    assert read_prompt("Describe the video.").answer_type is AnswerType.OPEN
    with pytest.raises(InvalidInputError):
        read_prompt("These are frames of a video.\n")


def test_prompt_matches_lmms_eval_formatting():
    from directme._compat.torchvision_cpu import ensure_torchvision_importable

    ensure_torchvision_importable()  # lmms-eval imports torchvision (CPU torch: the registry's build needs it)
    vsibench = pytest.importorskip("lmms_eval.tasks.vsibench.utils", reason="lmms-eval not installed (make setup)")
    kwargs = {"pre_prompt": "", "mca_post_prompt": "", "na_post_prompt": ""}
    doc = {"question_type": "object_rel_distance", "options": ["A. bed", "B. sink"],
           "question": "Measuring from the closest point of each object, which of these objects (bed, sink) is the "
                       "closest to the sofa?\nIf there are multiple instances of an object category, measure to the "
                       "closest."}
    p = read_prompt(vsibench.vsibench_doc_to_text(doc, kwargs))
    assert p.options == ("bed", "sink") and p.question.endswith("closest to the sofa?")
    num = read_prompt(vsibench.vsibench_doc_to_text({**doc, "question_type": "object_counting",
                                                     "question": "How many sofa(s) are in this room?"}, kwargs))
    assert num.answer_type is AnswerType.NUMBER and num.options == ()


def test_model_refuses_likelihoods_and_unknown_args():
    pytest.importorskip("lmms_eval", reason="lmms-eval not installed (make setup)")
    from directme.bench.lmms.model import DirectmeLMM

    model = DirectmeLMM.create_from_arg_string("perception=oracle,cache_dir=none,fps=2", {"batch_size": 1})
    assert (model.rank, model.world_size, model.memories.cache_dir) == (0, 1, None)
    with pytest.raises(NotImplementedError, match="generate_until"):
        model.loglikelihood([])
    with pytest.raises(InvalidInputError, match="unknown --model_args"):
        DirectmeLMM(perceptoin="oracle")


def test_answers_are_written_as_the_benchmark_scores_them():
    mc = read_prompt(MC_PROMPT)
    assert benchmark_answer(Answer("q", 1.0, "C. left", letter="C"), mc) == ("C", "")
    size = read_prompt("What is the length of the longest dimension (length, width, or height) of the bed, "
                       "measured in centimeters?\nPlease answer the question using a single word or phrase.")
    assert benchmark_answer(Answer("q", 1.0, "The bed is 2.1 m long."), size) == ("210", "")
    dist = read_prompt("Measuring from the closest point of each object, what is the direct distance between the bed "
                       "and the sofa (in meters)?")
    assert benchmark_answer(Answer("q", 1.0, "The bed is 3.4 m from the sofa."), dist) == ("3.40", "")
    # a measurement's value, not the rounded number of its text
    assert benchmark_answer(Answer("q", 1.0, "The bed measures about 211 cm.", value=210.6, unit="cm"), size) == \
        ("210.60", "")
    assert benchmark_answer(Answer("q", 1.0, "They are 1.23 m apart.", value=1.234, unit="m"), dist) == ("1.23", "")
    text, why = benchmark_answer(Answer("q", 1.0, "No sofa in memory.", flags=(Flag.ABSTAINED,)), dist)
    assert text == "" and "abstained" in why


def test_direction_conventions():
    o = np.zeros(3)
    ahead = np.array([1.0, 0.0, 0.0])
    assert angle_deg(o, ahead, np.array([0.0, 1.0, 0.0])) == pytest.approx(90.0)  # +y is left of facing +x (z up)
    assert direction_answer("object_rel_direction_easy", 60.0) == "left"
    assert direction_answer("object_rel_direction_medium", -160.0) == "back"
    assert direction_answer("object_rel_direction_medium", -130.0) is None  # within the margin of 135 deg
    assert direction_answer("object_rel_direction_hard", -120.0) == "back-right"


@pytest.fixture(scope="module")
def episode_dir(tmp_path_factory):
    from directme.sim import generate_episode, save_episode

    ep = generate_episode(seed=3, minutes=0.5, width=64, height=48, with_questions=False)
    return save_episode(ep, tmp_path_factory.mktemp("ep") / ep.video_uid, write_frames=False)


def test_second_question_on_a_video_streams_no_frame(episode_dir, tmp_path):
    from directme.sim import load_episode

    n_frames = load_episode(episode_dir).n_frames
    videos = VideoMemories(AgentFactory(perception="oracle"), cache_dir=tmp_path / "cache")
    first = videos.agent(str(episode_dir)).ask("How many chairs are there?")
    assert videos.frames_streamed == n_frames
    second = videos.agent(str(episode_dir)).ask("Where is the chair?")
    assert videos.frames_streamed == n_frames and videos.videos_streamed == [str(episode_dir)]
    assert first.text and second.text
    # another run (or another process of a data-parallel run) loads the saved memory: nothing streamed
    rerun = VideoMemories(AgentFactory(perception="oracle"), cache_dir=tmp_path / "cache")
    assert rerun.agent(str(episode_dir)).ask("How many chairs are there?").text == first.text
    assert rerun.frames_streamed == 0
    # a different config is a different memory
    other = VideoMemories(AgentFactory(perception="oracle", noise="realistic"), cache_dir=tmp_path / "cache")
    assert other.key(str(episode_dir)) != rerun.key(str(episode_dir))


def test_real_video_refuses_simulator_perception(tmp_path):
    (tmp_path / "clip.mp4").write_bytes(b"")
    with pytest.raises(InvalidInputError, match="simulator episode"):
        AgentFactory(perception="oracle").new(str(tmp_path / "clip.mp4"))
    with pytest.raises(InvalidInputError):
        AgentFactory(perception="magic")


def test_vsi_questions_have_simulator_ground_truth():
    from directme.sim import generate_episode

    ep = generate_episode(seed=0, minutes=2.0, width=64, height=48, with_questions=False)
    items = episode_items(ep, tuple(KINDS), per_kind=3, seed=0)
    kinds = {i.question_type for i in items}
    assert {"object_abs_distance", "object_rel_distance", "object_rel_direction_hard"} <= kinds
    # the simulator's measurement generators, under VSI-Bench's names, in its templates
    assert {"object_size_estimation", "obj_appearance_order", "route_planning"} <= kinds
    assert set(SPATIAL_KINDS) <= set(KINDS) and set(KINDS) <= set(METRIC_OF_KIND)
    size = next(i for i in items if i.question_type == "object_size_estimation")
    assert size.question.startswith("What is the length of the longest dimension (length, width, or height) of the ")
    name = size.question.split(" of the ")[-1].split(",")[0]
    assert any(spoken(o.label) == name and float(size.ground_truth) == pytest.approx(100 * max(o.size_m), abs=0.5)
               for o in ep.objects)
    for it in items:
        if it.options:
            assert it.ground_truth in "ABCD"[:len(it.options)] and it.options[0].startswith("A. ")
        else:
            assert float(it.ground_truth) > 0
    assert episode_items(ep, tuple(KINDS), 3, 0) == items  # deterministic
    with pytest.raises(InvalidInputError, match="unknown VSI-Bench kinds"):
        episode_items(ep, ("object_teleportation",), 3, 0)


@pytest.mark.slow
def test_offline_task_runs_end_to_end_in_lmms_eval(tmp_path):
    """simtask writes the task; `python -m directme.bench.lmms` (lmms-eval's CLI) runs it with oracle
    perception and prints lmms-eval's table with VSI-Bench's per-kind metrics."""
    pytest.importorskip("lmms_eval", reason="lmms-eval not installed: `make setup` installs it (requirements/stack.txt "
                                            "since directme[lmms]); CI runs this test in `make test`")
    from importlib.metadata import entry_points

    from directme.bench.lmms import manifest

    assert "directme" in [e.name for e in entry_points(group="lmms_eval.models")], "reinstall: pip install -e ."
    assert manifest().simple_class_path == "directme.bench.lmms.model.DirectmeLMM"
    env = dict(os.environ, PYTHONPATH=str(REPO), HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1")
    py = [sys.executable, "-m"]
    subprocess.run(py + ["directme.bench.lmms.simtask", "--out", str(tmp_path / "task"), "--seeds", "0", "1",
                         "--minutes", "1.5", "--per-kind", "2"], check=True, env=env, timeout=300)
    proc = subprocess.run(py + ["directme.bench.lmms", "--model", "directme", "--model_args",
                                f"perception=oracle,cache_dir={tmp_path / 'cache'}", "--tasks", "directme_sim_vsibench",
                                "--include_path", str(tmp_path / "task"), "--output_path", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for metric in ("vsibench_overall", "object_rel_direction_accuracy", "object_abs_distance_mra"):
        assert metric in proc.stdout
    results = json.loads(next((tmp_path / "out").rglob("*results.json")).read_text())
    scores = results["results"]["directme_sim_vsibench"]
    assert 0.0 <= scores["vsibench_overall,none"] <= 1.0
    assert scores["object_rel_direction_accuracy,none"] >= 0.75  # oracle perception, no noise
