"""The combined geometric + MLLM policy: fallback on low geometric confidence, or MLLM with a hint."""
from __future__ import annotations

import pytest

from directme.answerers.base import Answer, QueryContext
from directme.answerers.policy import PolicyAnswerer, PolicyConfig, build
from directme.errors import InvalidInputError


class Fixed:
    """An answerer returning a given letter and confidence, recording what it was asked."""

    def __init__(self, name, letter, confidence, flags=()):
        self.name, self.letter, self.confidence, self.flags, self.seen = name, letter, confidence, flags, []

    def answer(self, ctx):
        self.seen.append(ctx)
        return Answer(question=ctx.question, t_s=ctx.t_s, text=self.letter, letter=self.letter,
                      confidence=self.confidence, answerer=self.name, flags=self.flags)

    def answer_batch(self, ctxs):
        return [self.answer(c) for c in ctxs]


def _ctx(q="Where is the sofa?"):
    return QueryContext(question=q, t_s=5.0, options=("left", "right"), intent=None, snapshot=None, subgraph_text="")


@pytest.mark.parametrize("conf,flags,used", [(0.9, (), "geometric"), (0.3, (), "mllm"),
                                             (0.9, ("no_evidence",), "mllm"), (0.6, (), "geometric")])
def test_fallback_mode(conf, flags, used):
    geo, mllm = Fixed("geometric", "A", conf, flags), Fixed("vl", "B", 0.5)
    ans = PolicyAnswerer(PolicyConfig(threshold=0.6), geo, mllm).answer(_ctx())
    assert ans.letter == ("A" if used == "geometric" else "B")
    assert ans.answerer.startswith(f"policy[{used}:")
    assert len(mllm.seen) == (used == "mllm")


def test_fallback_batch_asks_mllm_only_where_needed():
    geo = Fixed("geometric", "A", 0.9)
    mllm = Fixed("vl", "B", 0.5)
    pol = PolicyAnswerer(PolicyConfig(), geo, mllm)
    geo.answer_batch = lambda ctxs: [Fixed("geometric", "A", c).answer(x) for c, x in zip((0.9, 0.1, 0.8), ctxs)]
    out = pol.answer_batch([_ctx("q1"), _ctx("q2"), _ctx("q3")])
    assert [a.letter for a in out] == ["A", "B", "A"] and [c.question for c in mllm.seen] == ["q2"]


def test_hint_mode_passes_geometric_answer():
    geo, mllm = Fixed("geometric", "A", 0.2), Fixed("vl", "B", 0.5)
    ans = PolicyAnswerer(PolicyConfig(mode="hint"), geo, mllm).answer(_ctx())
    assert ans.letter == "B" and ans.answerer.startswith("policy[mllm+hint:")
    assert mllm.seen[0].hint.letter == "A" and mllm.seen[0].hint.confidence == 0.2


class Failing(Fixed):
    """An MLLM whose backend fails, answering as the openai answerer does then (no letter, confidence 0)."""

    def answer(self, ctx):
        self.seen.append(ctx)
        return Answer(question=ctx.question, t_s=ctx.t_s, text="no answer: connection refused", confidence=0.0,
                      answerer=self.name, flags=("backend_error",), raw_output="connection refused")


@pytest.mark.parametrize("mode", ["fallback", "hint"])
def test_mllm_backend_error_falls_back_to_the_geometric_answer(mode):
    geo, mllm = Fixed("geometric", "A", 0.3, flags=("no_probs",)), Failing("vl", None, 0.0)
    ans = PolicyAnswerer(PolicyConfig(mode=mode), geo, mllm).answer(_ctx())
    assert len(mllm.seen) == 1  # the MLLM was asked (low geometric confidence / hint mode)...
    assert ans.letter == "A" and ans.confidence == 0.3  # ...but its failure does not replace the answer
    assert ans.flags == ("no_probs", "mllm_failed") and "backend_error" not in ans.flags
    assert ans.answerer == "policy[geometric:geometric]" and "vl: connection refused" in ans.raw_output


def test_fallback_batch_keeps_successful_mllm_answers_next_to_failed_ones():
    geo = Fixed("geometric", "A", 0.1)
    mllm = Fixed("vl", "B", 0.7)
    answers = iter([mllm, Failing("vl", None, 0.0)])
    mllm.answer_batch = lambda ctxs: [next(answers).answer(c) for c in ctxs]
    out = PolicyAnswerer(PolicyConfig(), geo, mllm).answer_batch([_ctx("q1"), _ctx("q2")])
    assert [a.letter for a in out] == ["B", "A"]
    assert "mllm_failed" not in out[0].flags and "mllm_failed" in out[1].flags


def test_unreachable_server_falls_back_to_geometric():
    """The real openai answerer against a closed port: its backend_error leaves the geometric answer."""
    pytest.importorskip("httpx")
    from directme.answerers.registry import build_answerer

    pol = build_answerer("policy", {"mllm": "openai", "mllm_options": {
        "base_url": "http://127.0.0.1:9/v1", "model": "m", "retries": 0, "connect_timeout_s": 2, "timeout_s": 2}})
    pol.geometric = Fixed("geometric", "B", 0.2)
    ans = pol.answer(_ctx())
    assert ans.letter == "B" and "mllm_failed" in ans.flags and ans.answerer == "policy[geometric:geometric]"
    assert ans.raw_output.startswith("openai:m: ")


def test_bad_config():
    with pytest.raises(InvalidInputError, match="mode"):
        PolicyConfig(mode="vote")
    with pytest.raises(InvalidInputError, match="threshold"):
        PolicyConfig(threshold=2)
    with pytest.raises(InvalidInputError, match="unknown policy answerer options"):
        build({"treshold": 0.5})


def test_build_through_registry_with_openai_mllm():
    pytest.importorskip("httpx")
    from directme.answerers.registry import build_answerer

    pol = build_answerer("policy", {"mode": "hint", "mllm": "openai",
                                    "mllm_options": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}})
    assert pol.geometric.name == "geometric" and pol.mllm.name == "openai:m" and pol.config.mode == "hint"
