"""Answer parsing, option-probability renormalisation and prompt rendering (no model needed)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from directme.answerers.base import Answer, Keyframe, QueryContext
from directme.answerers.parsing import finish_answer, letter_of_token, parse_letter, renormalise
from directme.answerers.prompts import build_prompt, keyframe_image
from directme.errors import InvalidInputError

OPTS = ("left", "front-left", "behind", "right", "front")


@pytest.mark.parametrize("text,letter", [
    ("The answer is (B).", "B"), ("b", "B"), ("Option B: front-left", "B"), ("B", "B"), ("(c)", "C"),
    ("**D**", "D"), ("B. front-left", "B"), ("C) behind", "C"), ("Answer: c", "C"),
    ("I think it is (E)", "E"), ("The correct option is D.", "D"), ("The answer is B, not A.", "B"),
    ("<think>maybe A</think>The answer is C", "C"), ("It is front-left of you.", "B"), ("behind", "C"),
])
def test_parse_letter_survives_chatter(text, letter):
    assert parse_letter(text, OPTS).letter == letter


@pytest.mark.parametrize("text", ["", "nonsense text", "Z", "F", "left or right, hard to say"])
def test_parse_letter_unparseable_is_none(text):
    assert parse_letter(text, OPTS).letter is None


@pytest.mark.parametrize("text,options,letter", [
    ("D is wrong, A is right", ("yes", "right", "no", "wrong"), "A"),  # not B/D from the option texts
    ("D is wrong, A is right.", OPTS, "A"),
    ("I would say D is incorrect; C is the right answer.", OPTS, "C"),
    ("It is not A, it is C", OPTS, "C"),
    ("Not D. The answer is A", OPTS, "A"),
    ("B isn't correct. Option C is the best.", OPTS, "C"),
    ("A is correct", ("left", "right"), "A"),
    ("A because the sofa is behind you", OPTS, "A"),
    ("it is not behind, it is on your right", OPTS, "D"),  # a negated option text does not count
    ("The answer: A sofa is closer.", ("table", "sofa", "chair"), "B"),  # article, then the option text
    ("The answer: A sofa is behind you.", OPTS, "C"),
    ("D is wrong.", OPTS, None),  # a ruled-out letter alone is no answer
    ("Not A.", ("left", "right"), None),
    ("I don't think A is right.", OPTS, None),  # a doubted letter is no answer
    ("I don't think A is right; B is correct.", OPTS, "B"),
    ("I do not believe the answer is (C). It is D", OPTS, "D"),
])
def test_explicit_letters_beat_option_text_and_negations_do_not_count(text, options, letter):
    assert parse_letter(text, options).letter == letter


def test_article_a_is_not_option_a():
    assert parse_letter("A sofa stands there.", ("left", "right")).letter is None
    assert parse_letter("The answer is a table by the window.", ("left", "right")).letter is None
    assert parse_letter("THE ANSWER IS: OPTION c.", ("left", "right", "up")).letter == "C"


def test_letter_outside_the_options_is_rejected():
    assert parse_letter("E", ("yes", "no")).letter is None
    assert letter_of_token(" B", "AB") == "B" and letter_of_token("(A", "AB") == "A"
    assert letter_of_token("C", "AB") is None and letter_of_token("Bob", "AB") is None


def test_renormalise_over_options_only():
    p = renormalise({"A": math.log(0.2), "B": math.log(0.2), "Z": 0.0}, "ABC")
    assert p == pytest.approx({"A": 0.5, "B": 0.5, "C": 0.0})
    assert renormalise({"Z": 0.0}, "AB") is None and renormalise(None, "AB") is None


def _ctx(options=OPTS, keyframes=(), hint=None, t_s=30.0):
    return QueryContext(question="Where is the sofa now?", t_s=t_s, options=tuple(options), intent=None, snapshot=None,
                        subgraph_text="Time: 30.0 s.\nObjects:\n- sofa [o1]: behind, 6 o'clock, 2.0 m",
                        keyframes=tuple(keyframes), hint=hint)


def test_finish_answer_parsed_with_probabilities():
    a = finish_answer(_ctx(), "The answer is (C).", "test", letter_logprobs={L: -1.0 for L in "ABCDE"})
    assert a.letter == "C" and a.text == "behind" and not a.flags
    assert sum(a.option_scores.values()) == pytest.approx(1.0)
    assert a.confidence == pytest.approx(0.2) and a.entropy == pytest.approx(math.log(5))


def test_finish_answer_unparsed_is_flagged_with_low_confidence():
    with_probs = finish_answer(_ctx(), "gibberish", "test", letter_logprobs={"A": -3.0, "D": -0.1})
    assert with_probs.letter == "D" and "unparsed" in with_probs.flags
    assert with_probs.option_scores["D"] == pytest.approx(0.948, abs=1e-3)  # the distribution is kept...
    assert with_probs.confidence == pytest.approx(1 / 5)  # ...but an unparsed reply is at most chance level
    binary = finish_answer(_ctx(options=("yes", "no")), "hmm", "test", letter_logprobs={"A": -0.01, "B": -5.0})
    assert binary.letter == "A" and binary.confidence == pytest.approx(0.5) and "unparsed" in binary.flags
    low = finish_answer(_ctx(), "gibberish", "test", letter_logprobs={L: -1.0 for L in "ABCDE"})
    assert low.confidence == pytest.approx(0.2)  # already below the cap: unchanged
    parsed = finish_answer(_ctx(), "D", "test", letter_logprobs={"A": -3.0, "D": -0.1})
    assert parsed.confidence == pytest.approx(0.948, abs=1e-3) and "unparsed" not in parsed.flags
    without = finish_answer(_ctx(), "gibberish", "test")
    assert without.letter is None and without.confidence == 0.0
    assert {"unparsed", "no_probs"} <= set(without.flags)


def test_finish_answer_open_ended():
    a = finish_answer(_ctx(options=()), "  It is behind you. ", "test", text_confidence=0.7)
    assert a.text == "It is behind you." and a.letter is None and a.option_scores is None and a.confidence == 0.7


def _kf(t, seed=0, shape=(48, 64, 3)):
    return Keyframe(t_s=t, frame_index=int(t), rgb=np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8))


def test_prompt_labels_keyframes_with_times_and_drops_future_ones():
    p = build_prompt(_ctx(keyframes=[_kf(12.0), _kf(3.0), _kf(40.0), _kf(20.0)]), max_keyframes=3)
    assert [k.t_s for k in p.images] == [3.0, 12.0, 20.0]  # 40 s is after the question; oldest first
    text = p.text
    for t in ("t = 3.0 s", "t = 12.0 s", "t = 20.0 s", "asked at t = 30.0 s"):
        assert t in text
    assert "t = 40.0 s" not in text
    labels = [i for i, part in enumerate(p.parts) if part[0] == "text" and "Keyframe 1 at t = 3.0 s" in part[1]]
    assert labels and p.parts[labels[0] + 1][0] == "image"  # each label sits right before its image
    assert "A. left\nB. front-left\nC. behind\nD. right\nE. front" in text and p.letters == "ABCDE"
    assert "sofa [o1]: behind, 6 o'clock, 2.0 m" in text


def test_prompt_hint_and_open_ended():
    hint = Answer(question="q", t_s=30.0, text="behind", letter="C", confidence=0.9)
    assert "suggests option C (confidence 0.90)" in build_prompt(_ctx(hint=hint)).text
    assert "suggests" not in build_prompt(_ctx(hint=hint), use_hint=False).text
    open_p = build_prompt(_ctx(options=()))
    assert open_p.letters == "" and "Answer briefly" in open_p.text


def test_keyframe_image_downscales_and_validates():
    img = keyframe_image(_kf(1.0, shape=(240, 320, 3)), max_side=160)
    assert img.size == (160, 120)
    with pytest.raises(InvalidInputError, match="t=2.0s"):
        keyframe_image(Keyframe(t_s=2.0, frame_index=2, rgb=np.zeros((4, 4), np.uint8)), 64)
