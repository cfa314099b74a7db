"""The streaming runner and each benchmark's protocol with a scripted model: causality,
independent repeated questions, TeleEgo RTA/MPT, PhoStream timing, EgoSAT confidence,
X-LeBench from memory."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from directme.bench import egosat, phostream, teleego, ucsbench, xlebench
from directme.bench.models import ScriptedModel
from directme.bench.runner import BlankFrames, StreamRunner, subsample
from directme.errors import InvalidInputError
from directme.types import Frame

ART = Path(__file__).resolve().parent / "artifacts" / "bench"


def _run(module, model, episode, fps=1.0, **opts):
    runner = StreamRunner(model, BlankFrames(fps=fps)(episode))
    return module.run_episode(runner, episode, opts)


def test_subsample_and_time_order():
    rgb = np.zeros((4, 4, 3), np.uint8)
    frames = [Frame(t_s=i / 30, rgb=rgb, index=i) for i in range(90)]
    assert [f.index for f in subsample(frames, 1.0)] == [0, 30, 60]
    assert len(list(subsample(frames, None))) == 90
    with pytest.raises(InvalidInputError, match="time order"):
        list(subsample([frames[5], frames[2]], 1.0))


def test_runner_is_causal_and_repeated_questions_are_independent():
    eps = {e.episode_id: e for e in ucsbench.load(str(ART / "ucsbench_questions.jsonl"))}
    ep = eps["v1"]
    # the sofa's true direction changes at t = 6: a model caching answers by text would fail once
    model = ScriptedModel(answers={"Where is the sofa now?": [[0, "B"], [6, "C"]], "Can I reach the cup now?": "A"})
    records = _run(ucsbench, model, ep, fps=2.0)
    assert [r["correct"] for r in records] == [True, True, True]
    for (_, t_arg, t_seen), q in zip(model.asked, ep.items):
        assert t_seen <= q.t_s and t_arg <= q.t_s  # nothing after the question time was observed
        assert q.t_s - t_seen < 0.5  # ... but everything up to it was (frames every 0.5 s)
    assert model.n_frames == len(list(BlankFrames(fps=2.0)(ep)))
    summary = ucsbench.summarize([{"records": records}])
    assert summary["overall"]["accuracy"] == 1.0
    assert summary["per_qtype"]["BINARY"]["total"] == 1


def test_runner_rejects_probes_in_the_past():
    runner = StreamRunner(ScriptedModel(), BlankFrames()(None))
    runner.schedule(5.0, lambda r, t: r.schedule(1.0, lambda *_: None))
    with pytest.raises(InvalidInputError, match="not be causal"):
        runner.run()


class _UntypedModel(ScriptedModel):
    def ask(self, question, t=None, options=None):
        return super().ask(question, t, options).text  # a bare string, not an Answer


def test_runner_refuses_a_model_that_does_not_answer_with_an_answer():
    runner = StreamRunner(_UntypedModel(answers={"Where is the sofa now?": "B"}), iter(()))
    with pytest.raises(InvalidInputError, match="_UntypedModel.ask returned str"):
        runner.ask("Where is the sofa now?", 0.0, ["left", "right"])


def test_ucsbench_open_ended_real_sample():
    path = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "qa" / "ucsbench" / "sample_qa.json"
    if not path.exists():
        pytest.skip("shared/data/qa/ucsbench not available")
    (ep,) = ucsbench.load(str(path))
    model = ScriptedModel(answers={"Which side is the whiteboard on right now?": [[0, "On your left."], [12, "Behind you."]],
                                   "Which side is the bottle on right now?": "To your right."})
    records = _run(ucsbench, model, ep)
    assert [r["correct"] for r in records] == [True, False, True, False]
    assert {r["scored_by"] for r in records} == {"relation_terms"}


class _SlowModel(ScriptedModel):
    def ask(self, question, t=None, options=None):
        time.sleep(0.05)
        return super().ask(question, t, options)


def test_teleego_rta_recalls_and_mpt():
    (ep,) = teleego.load(str(ART / "teleego_qa.json"), timeline=str(ART / "teleego_timeline.json"))
    model = ScriptedModel(answers={"What did I put in the sink?": [[0, "B"], [298, "A"]],  # forgets at 298 s
                                   "Which items were on the table?": "A, C", "Did I turn off the stove?": "B",
                                   "Why did I go back to the kitchen?": "I went to get my charger"})
    records = {r["index"]: r for r in _run(teleego, model, ep)}
    assert records["1"]["correct"] and records["1"]["recalls"] == [True, True, True, False]  # 158, 218, 278, 338
    assert (records["1"]["mpt_s"], records["1"]["mpt_censored"]) == (180.0, False)
    assert records["2"]["recalls"] == [True] * 10 and (records["2"]["mpt_s"], records["2"]["mpt_censored"]) == (600.0, True)
    assert not records["3"]["correct"] and records["3"]["recalls"] == [] and records["3"]["mpt_s"] == 0.0
    assert records["4"]["correct"] and records["4"]["recalls"] == []  # open-ended: no recall rounds
    recall_times = [t for q, t, _ in model.asked if q == "What did I put in the sink?"]
    assert recall_times[0] == 98 and np.allclose(np.diff(recall_times), 60)
    s = teleego.summarize([{"records": list(records.values())}])
    assert s["rta"]["overall"]["accuracy"] == pytest.approx(2 / 3)
    assert s["mpt_min"] == pytest.approx((180 + 600 + 0) / 3 / 60) and s["mpt_censored"] == 1
    # same answers, but slower than the decision window: not real-time correct, no recalls
    slow = {r["index"]: r for r in _run(teleego, _SlowModel(answers={"What did I put in the sink?": "B"}), ep,
                                        decision_window_s=0.01)}
    assert slow["1"]["correct"] and not slow["1"]["rta_correct"] and slow["1"]["latency_s"] >= 0.05
    assert slow["1"]["recalls"] == []


class _FixedJudge:
    def score(self, question, reference, response):
        return 4.0


def test_phostream_silence_and_timing_classes(tmp_path):
    items = [("instant q", "00:05", None, "instant"), ("forward on time", "00:10", "00:20", "forward"),
             ("forward early", "00:10", "00:30", "forward"), ("instant late", "00:08", None, "instant"),
             ("never answered", "00:09", None, "backward"), ("forward eager", "00:40", "00:45", "forward")]
    rows = [{"user_query": q, "timestamp_question": tq, "time_type": tt, "response": "ref", "capability": "c",
             **({"timestamp_proactive": tp} if tp else {})} for q, tq, tp, tt in items]
    path = tmp_path / "pho.json"
    path.write_text(json.dumps([{"video_path": "v/a.mp4", "verified_responses": rows}]), encoding="utf-8")
    (ep,) = phostream.load(str(path))
    model = ScriptedModel(default_text="an answer", silent_until={
        "forward on time": 20, "forward early": 15, "instant late": 12, "never answered": 1e9})
    recs = {r["qid"]: r for r in _run(phostream, model, ep, judge=_FixedJudge())}
    got = [(recs[f"0:{k}"]["timing"], recs[f"0:{k}"]["t_response_s"]) for k in range(len(items))]
    assert got == [("OnTime", 5), ("OnTime", 20), ("EarlyResponse", 15), ("LateResponse", 12),
                   ("NoResponse", None), ("EarlyResponse", 41)]  # an answer at t_q itself is ignored
    assert recs["0:0"]["score"] == 80.0 and recs["0:2"]["score"] == 0.0
    s = phostream.summarize([{"records": list(recs.values())}])
    assert s["score"] == pytest.approx((80 + 80) / 6)
    assert s["rates"]["EarlyResponse"] == pytest.approx(2 / 6) and s["forward"]["items"] == 3
    # without a judge on-time answers stay unscored, so no mean score is claimed
    unjudged = _run(phostream, ScriptedModel(default_text="x"), ep)
    assert phostream.summarize([{"records": unjudged}])["score"] is None


def test_egosat_probabilities_confidence_slope():
    (ep,) = egosat.load(str(ART / "egosat_queryset.json"))
    qs = [s.question for s in ep.items]
    model = ScriptedModel(answers={qs[0]: "A", qs[1]: "C", qs[2]: "D"}, scores={
        qs[0]: {"A": 0.9, "B": 0.1}, qs[1]: {"A": 0.1, "B": 0.2, "C": 0.7}, qs[2]: {"D": 0.5, "A": 0.5}})
    recs = _run(egosat, model, ep)
    assert [r["correct"] for r in recs] == [True, False, None]
    assert [r["confidence"] for r in recs] == pytest.approx([0.9, 0.7, 0.5])
    s = egosat.summarize([{"records": recs}])
    assert s["overall"]["accuracy"] == 0.5 and s["overall"]["unscored"] == 1
    assert s["confidence_slope"] == pytest.approx(-0.2) and s["confidence_slope_over"] == "step_idx"
    assert s["mean_entropy"] == pytest.approx(np.mean([r["entropy"] for r in recs]))


def test_xlebench_whole_log_then_memory_queries():
    (ep,) = xlebench.load(str(ART / "xlebench.json"))
    model = ScriptedModel(answers={"How many times did I open the fridge?": "Three times.",
                                   "Put these in the order they happened.": "A, B, C",
                                   "When did I wash the dishes?": "from 00:00:12 to 00:00:22, or 25-29"})
    recs = {r["task"]: r for r in _run(xlebench, model, ep)}
    assert all(t == 30 for _, _, t in model.asked)  # every query after the whole log was ingested
    assert recs["temporal_localization"]["pred_spans"] == [(12.0, 22.0), (25.0, 29.0)]
    assert recs["temporal_localization"]["recall"] == 1.0
    assert recs["counting"]["correct"] and recs["summary_ordering"]["correct"]
    # spans from evidence when the text names none
    ev_model = ScriptedModel(spans={"When did I wash the dishes?": [[0, 5], [14, 19]]})
    ev = {r["task"]: r for r in _run(xlebench, ev_model, ep)}
    assert ev["temporal_localization"]["recall"] == 1.0 and ev["counting"]["pred"] is None
    s = xlebench.summarize([{"records": list(ev.values())}])
    assert s["temporal_localization"]["recall_at_5_tiou_0.3"] == 1.0 and s["counting"]["accuracy"] == 0.0
