"""The transformers MLLM answerer on tiny random Qwen2.5-VL / Qwen3-VL checkpoints built offline.

Random weights: these tests check plumbing (loading, images and timestamps reaching the model,
letters, probabilities summing to 1, batching), never accuracy."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from directme.answerers.base import Answer, Keyframe, QueryContext  # noqa: E402
from directme.commands.doctor_checks import OPTIONS, ask_tiny, checks  # noqa: E402
from directme.answerers.tiny import build_tiny_vl  # noqa: E402
from directme.answerers.transformers_vl import TransformersVLAnswerer, build  # noqa: E402
from directme.errors import InvalidInputError, MissingWeightsError  # noqa: E402

FAMILIES = ("qwen2_5_vl", "qwen3_vl")
# Qwen's own chat templates (tests/data/README.md says where they come from)
TEMPLATES = {"qwen2_5_vl": "qwen2_5_vl_chat_template.jinja", "qwen3_vl": "qwen3_vl_instruct_chat_template.jinja"}


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_vl")
    data = Path(__file__).parent / "data"
    return {f: str(build_tiny_vl(f, root / f, chat_template=(data / TEMPLATES[f]).read_text(encoding="utf-8")))
            for f in FAMILIES}


@pytest.fixture(scope="module")
def answerers(tiny_dirs):
    return {f: build({"model": d, "batch_size": 4, "max_new_tokens": 4}).load() for f, d in tiny_dirs.items()}


def _kf(t, seed):
    return Keyframe(t_s=t, frame_index=int(t), rgb=np.random.default_rng(seed).integers(0, 256, (60, 80, 3),
                                                                                          dtype=np.uint8))


def _ctx(keyframes=(), question="Where is the sofa now?", options=OPTIONS):
    return QueryContext(question=question, t_s=10.0, options=tuple(options), intent=None, snapshot=None,
                        subgraph_text="Time: 10.0 s.\nObjects:\n- sofa [o1]: front, 12 o'clock, 2.0 m",
                        keyframes=tuple(keyframes))


def _spy_encode(monkeypatch, answerer: TransformersVLAnswerer) -> list:
    seen = []
    real = answerer.encode

    def encode(prompts):
        inputs = real(prompts)
        seen.append((list(prompts), inputs))
        return inputs
    monkeypatch.setattr(answerer, "encode", encode)
    return seen


@pytest.mark.parametrize("family", FAMILIES)
def test_agent_ask_end_to_end(family, tiny_dirs, monkeypatch):
    spy = {}
    real_encode = TransformersVLAnswerer.encode

    def encode(self, prompts):
        spy["prompts"], spy["inputs"] = prompts, real_encode(self, prompts)
        spy["text"] = self._processor.tokenizer.decode(spy["inputs"]["input_ids"][0])
        return spy["inputs"]
    monkeypatch.setattr(TransformersVLAnswerer, "encode", encode)
    ans = ask_tiny(family, tiny_dirs[family])
    assert ans.letter in "ABCD" and ans.text == OPTIONS["ABCD".index(ans.letter)]
    assert set(ans.option_scores) == set("ABCD") and sum(ans.option_scores.values()) == pytest.approx(1.0)
    top = max(ans.option_scores.values())  # a random tiny model rarely writes a parseable letter:
    assert ans.confidence == pytest.approx(min(top, 0.25) if "unparsed" in ans.flags else top)  # then chance at most
    assert ans.answerer.startswith("transformers:") and ans.evidence and "sofa" in ans.subgraph_text
    images = spy["prompts"][0].images
    assert images, "the agent's keyframes must reach the MLLM"
    assert spy["inputs"]["image_grid_thw"].shape[0] == len(images)  # one image per keyframe
    assert spy["text"].count("<|vision_start|>") == len(images)
    for kf in images:  # timestamps are in the tokens the model reads
        assert "Keyframe" in spy["text"] and f"t = {kf.t_s:.1f} s" in spy["text"]
    assert "A. in front of you" in spy["text"] and "Question (asked at t = 3.0 s)" in spy["text"]


@pytest.mark.parametrize("family", FAMILIES)
def test_images_change_the_output_and_batching_matches_single(family, answerers):
    a = answerers[family]
    ctxs = [_ctx([_kf(2.0, 0), _kf(5.0, 1)]), _ctx([_kf(2.0, 7), _kf(5.0, 8)]),
            _ctx(question="Which side is the big red lamp that I saw in the kitchen on?"), _ctx([_kf(4.0, 3)])]
    batch = a.answer_batch(ctxs)
    single = [a.answer(c) for c in ctxs]
    for b, s in zip(batch, single):
        assert sum(b.option_scores.values()) == pytest.approx(1.0)
        assert b.option_scores == pytest.approx(s.option_scores, abs=1e-4)
    # same text, different pixels: the image content reaches the logits
    p0, p1 = (np.array(list(batch[i].option_scores.values())) for i in (0, 1))
    assert np.abs(p0 - p1).max() > 1e-7


def test_open_ended_and_hint(answerers, monkeypatch):
    a = answerers["qwen3_vl"]
    open_ans = a.answer(_ctx([_kf(1.0, 0)], question="What did I see?", options=()))
    assert open_ans.letter is None and open_ans.option_scores is None and 0.0 <= open_ans.confidence <= 1.0
    seen = _spy_encode(monkeypatch, a)
    hint = Answer(question="q", t_s=10.0, text="behind you", letter="B", confidence=0.8)
    a.answer(dataclasses.replace(_ctx(), hint=hint))
    assert "suggests option B" in seen[0][0][0].text


def test_missing_weights_errors(tmp_path, tiny_dirs):
    with pytest.raises(MissingWeightsError, match="does not exist"):
        build({"model": str(tmp_path / "nope")})
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingWeightsError, match="config.json"):
        build({"model": str(tmp_path / "empty")})
    with pytest.raises(MissingWeightsError, match="hf download Qwen/Qwen3-VL-8B-Instruct"):
        build({"model": "Qwen/Qwen3-VL-8B-Instruct", "cache_dir": str(tmp_path / "hf")})
    with pytest.raises(InvalidInputError, match="model"):
        build({})
    with pytest.raises(InvalidInputError, match="unknown transformers answerer options"):
        build({"model": tiny_dirs["qwen3_vl"], "modle": "x"})


def test_doctor_checks_are_listed():
    names = [n for n, fn in checks()]
    assert len(names) == 2 and all(callable(fn) for _, fn in checks())
    assert any("qwen2_5_vl" in n for n in names) and any("qwen3_vl" in n for n in names)
