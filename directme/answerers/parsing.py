"""Recover the chosen option letter from free MLLM output.

Handles the usual chatter: "B", "b", "(B)", "B. left", "The answer is (B).", "Answer: b",
"Option B: ...", "**B**", "C is the right answer", a reasoning block before the answer, and the
option text echoed without its letter. Explicit letter statements win over option text, and
ruled-out mentions ("D is wrong", "not A", "not behind") never count; "A sofa ..." is the
article. ``parse_letter`` returns None when nothing unambiguous is found; ``finish_answer`` then
flags the answer "unparsed" with a low confidence instead of guessing silently, and turns
per-letter log-probabilities into option probabilities renormalised over the options.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from ..types import OPTION_LETTERS, Flag
from .base import Answer, QueryContext

_THINK = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)
_MARKUP = re.compile(r"[*_`#]+")


@dataclass(frozen=True)
class ParsedLetter:
    letter: Optional[str]
    how: str  # which rule matched, or "none"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


# Words that may follow an option letter "A" without making it the article ("A because ...").
_AFTER_LETTER = r"(?:because|since|as|is|was|would|seems|looks|it|this|and|or|but|for|given|based|due|which)"


def _rules(letters: str) -> list[tuple[str, re.Pattern]]:
    """Ordered patterns; group 1 is the letter. Lowercase letters count only where an article
    ("a") cannot be meant: alone, or inside brackets, or right before punctuation; an upper-case
    "A" followed by a plain word ("A sofa is ...") is the article too."""
    up = f"[{letters}]"
    any_case = f"[{letters}{letters.lower()}]"
    letter = rf"(?!A\s+(?!{_AFTER_LETTER}\b)[a-z])({up})\b"  # an upper-case letter, not the article
    verdict = r"(?:the\s+)?(?:most\s+)?(?:right|correct|true|best|answer|likely|closest)\b"
    return [
        ("alone", re.compile(rf"^\W*({any_case})\W*$")),
        ("answer_is", re.compile(
            rf"(?i:answer|choice|option)\s*(?i:is|would be|:|=)?\s*[:\-]?\s*(?i:option\s*)?"
            rf"(?:\(({any_case})\)|\[({any_case})\]|{letter}|({any_case})(?=[.):,]|$))")),
        ("letter_is", re.compile(
            rf"(?:\b(?i:option\s+)?\(?({up})\)?\s+(?:is|would be|seems|looks)\s+{verdict}"
            rf"|\b(?i:it|that)(?:'s|\s+is|\s+would be)\s+(?i:option\s+)?(?:\(({up})\)|{letter}))")),
        ("option", re.compile(rf"\b(?i:option)\s*\(?({up})\b")),
        ("leading", re.compile(rf"^\s*\(?({any_case})(?:[).:\]]|\s+-)")),
        ("leading_upper", re.compile(rf"^\s*({up})\b(?!\s+(?!{_AFTER_LETTER}\b)[a-z])")),
        ("bracketed", re.compile(rf"\(({up})\)")),
    ]


def _negated(letters: str) -> re.Pattern:
    """Mentions that rule a letter out ("D is wrong", "not A", "B isn't correct"): they never count."""
    up = f"[{letters}]"
    bad = r"(?:wrong|incorrect|false|impossible|unlikely|not\b|n't\b)"
    return re.compile(
        rf"\b(?i:option\s+)?\(?{up}\)?\s*(?:is|was|seems|looks|would be)?\s*{bad}"
        rf"|\b(?i:isn't|is not|not|rule out|eliminate|excluding)\s+(?i:option\s+)?(?:\({up}\)|{up}\b)"
        rf"|\b(?i:don't|do not|doesn't|does not|can't|cannot|wouldn't)\s+(?i:think|believe|say|pick|choose)\s+"
        rf"(?i:that\s+)?(?i:the answer is\s+)?(?i:option\s+)?(?:\({up}\)|{up}\b)"
        rf"(?:\s+(?i:is|was|would be)\s+(?i:right|correct|true|the answer|the right answer|it)\b)?")


def _first_group(m: re.Match) -> Optional[str]:
    return next((g for g in m.groups() if g), None)


def _by_option_text(text: str, options: Sequence[str], letters: str) -> Optional[str]:
    out = f" {_norm(text)} "
    found = [i for i, o in enumerate(options) if _norm(o) and _affirmed(out, f" {_norm(o)} ")]
    # an option that is part of another found option ("left" in "front-left") does not count
    found = [i for i in found if not any(j != i and _norm(options[i]) in _norm(options[j]) for j in found)]
    return letters[found[0]] if len(found) == 1 else None


def _affirmed(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` (both normalised) other than right after a negation."""
    start = text.find(phrase)
    while start >= 0:
        before = text[:start].split()[-1:]
        if before not in (["not"], ["t"], ["never"]):  # "isn't" normalises to "isn t"
            return True
        start = text.find(phrase, start + 1)
    return False


def parse_letter(text: str, options: Sequence[str]) -> ParsedLetter:
    """The option letter ``text`` commits to, among the letters of ``options``."""
    letters = OPTION_LETTERS[: len(options)]
    if not letters or not text:
        return ParsedLetter(None, "none")
    body = _MARKUP.sub("", _THINK.sub(" ", text)).strip()
    body = _negated(letters).sub(" ", body).strip()
    if not body:
        return ParsedLetter(None, "none")
    for name, pattern in _rules(letters):
        matches = [g for g in (_first_group(m) for m in pattern.finditer(body)) if g]
        if not matches:
            continue
        distinct = {g.upper() for g in matches}
        if name == "answer_is":  # models often revise: the last stated answer wins
            return ParsedLetter(matches[-1].upper(), name)
        if len(distinct) == 1:
            return ParsedLetter(matches[0].upper(), name)
    letter = _by_option_text(body, options, letters)
    if letter:
        return ParsedLetter(letter, "option_text")
    return ParsedLetter(None, "none")


def renormalise(letter_logprobs: Optional[Mapping[str, float]], letters: str) -> Optional[dict[str, float]]:
    """Softmax of per-letter log-probabilities over exactly ``letters`` (missing letters get 0).

    None when no letter has a finite log-probability (e.g. the server returned none of them)."""
    if not letter_logprobs or not letters:
        return None
    lp = np.array([float(letter_logprobs.get(L, -np.inf)) for L in letters], dtype=np.float64)
    if not np.isfinite(lp).any():
        return None
    p = np.exp(lp - lp[np.isfinite(lp)].max())
    p = np.where(np.isfinite(lp), p, 0.0)
    p /= p.sum()
    return {L: float(v) for L, v in zip(letters, p)}


def letter_of_token(token: str, letters: str) -> Optional[str]:
    """The option letter a single generated token stands for ("B", " B", "(B", "B." ...), else None."""
    core = token.strip().strip("()[]*.:,").strip()
    return core if len(core) == 1 and core in letters else None


def finish_answer(ctx: QueryContext, raw_text: str, answerer: str, *,
                  letter_logprobs: Optional[Mapping[str, float]] = None, text_confidence: Optional[float] = None,
                  latency_s: float = 0.0, flags: Sequence[Flag] = ()) -> Answer:
    """Turn raw model output (+ optional per-letter log-probabilities) into an ``Answer``.

    Multiple choice: the letter is the parsed one; when the text does not parse it falls back to
    the most probable letter and is flagged "unparsed", with a confidence capped at chance level
    (1 / number of options): probabilities renormalised over the letters at a step where the
    model wrote no letter can look certain while meaning little. No probabilities and no parse:
    no letter, confidence 0. ``confidence`` is otherwise the renormalised probability of the
    chosen letter; without probabilities from the backend the answer is flagged "no_probs" and
    its confidence is nominal (1.0 parsed).
    """
    letters = OPTION_LETTERS[: len(ctx.options)]
    flags = list(flags)
    scores = renormalise(letter_logprobs, letters)
    common = dict(question=ctx.question, t_s=ctx.t_s, evidence=ctx.evidence, subgraph_text=ctx.subgraph_text,
                  answerer=answerer, raw_output=raw_text, latency_s=latency_s)
    if not letters:
        conf = text_confidence if text_confidence is not None else 1.0
        if text_confidence is None:
            flags.append(Flag.NO_PROBS)
        text = raw_text.strip()
        if not text:
            flags += [Flag.UNPARSED, Flag.ABSTAINED]
            conf = 0.0
        return Answer(text=text, confidence=float(conf), flags=tuple(flags), **common)
    parsed = parse_letter(raw_text, ctx.options)
    letter = parsed.letter
    if letter is None:
        flags.append(Flag.UNPARSED)
        if scores:
            letter = max(scores, key=scores.get)
    if scores is None:
        flags.append(Flag.NO_PROBS)
        conf = 1.0 if parsed.letter else 0.0
        if letter is None:  # no letter written and no probabilities to pick one: no answer
            flags.append(Flag.ABSTAINED)
    else:
        conf = scores[letter]
        if parsed.letter is None:  # the reply committed to nothing: the letter is a guess, at most chance
            conf = min(conf, 1.0 / len(letters))
    text = ctx.options[letters.index(letter)] if letter else raw_text.strip()
    return Answer(text=text, letter=letter, confidence=float(conf), option_scores=scores, flags=tuple(flags),
                  **common)
