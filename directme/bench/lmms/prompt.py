"""The prompt lmms-eval formats, read back into question, options and answer type, and the Agent's answer
written the way the benchmark scores it (a letter, or a bare number in the unit the question asks for).

VSI-Bench's prompt (``lmms_eval/tasks/vsibench/utils.py``, ``vsibench_doc_to_text``) is
``pre_prompt \\n question [\\n clarification ...] [\\n Options: \\n A. x \\n B. y ...] \\n post_prompt``;
other benchmarks of the same family differ only in the pre/post lines. The first line that asks something is
the question handed to the Agent; the benchmark's clarifications ("Assume 'standing by' means ...") are kept
as ``notes``: they restate conventions the geometric answerer already follows, and as free text they would
be read as more objects to look for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Optional

from ...errors import InvalidInputError
from ...types import Answer

# lines that only say what the visuals are (VSI-Bench's default pre_prompt and its variants)
_PREAMBLE = re.compile(r"^(?:these are (?:the )?frames of a video|this is a video|<image>|<video>)\W*$", re.I)
_OPTIONS_HEAD = re.compile(r"^options\s*:?\s*$", re.I)
_OPTION = re.compile(r"^\(?([A-Z])[.):]\s*(.+)$")
_INLINE_OPTIONS = re.compile(r"^options\s*:\s*(.+)$", re.I)
# answer-format instructions: "Answer with the option's letter ...", "Please answer ... single word or phrase.",
# "Do not response anything other than a single number!", "Answer briefly and directly in one float number."
_INSTRUCTION = re.compile(r"^(?:please\s+)?(?:answer|respond|reply|do not respon[sd]|only (?:answer|reply)|"
                          r"give (?:only|just)|output)\b", re.I)
_NUMBER_WORDS = re.compile(r"\b(?:number|numeric|integer|float|digits?|how many)\b", re.I)
_NUMERIC_QUESTION = re.compile(r"^\s*how many\b|\bhow (?:far|long|tall|wide|big|large)\b|"
                               r"\bin (?:square )?(?:meters|metres|centimeters|centimetres)\b|"
                               r"\bmeasured in (?:square )?(?:meters|metres|centimeters|centimetres)\b|"
                               r"\bwhat is the (?:size|length|distance|area|height|width)\b", re.I)
_ASKS_CM = re.compile(r"\bcentimet(?:er|re)s?\b", re.I)
_ASKS_M2 = re.compile(r"\bsquare met(?:er|re)s?\b", re.I)


class AnswerType(str, Enum):
    """What the benchmark scores: a letter (accuracy), a number (mean relative accuracy), or free text."""

    MULTIPLE_CHOICE = "multiple_choice"
    NUMBER = "number"
    OPEN = "open"


@dataclass(frozen=True)
class BenchPrompt:
    """One prompt as lmms-eval formatted it, read back (``read_prompt``)."""

    question: str  # the sentence(s) that ask, handed to the Agent
    options: tuple[str, ...] = ()  # option texts without their letters ("left", "right")
    letters: tuple[str, ...] = ()  # the letters the prompt gave them ("A", "B")
    answer_type: AnswerType = AnswerType.OPEN
    notes: tuple[str, ...] = ()  # the benchmark's clarifications after the question
    instruction: str = ""  # the answer-format line(s)


def read_prompt(text: str) -> BenchPrompt:
    """Read a benchmark prompt (see the module docstring). Raises InvalidInputError when nothing is asked."""
    if not isinstance(text, str):
        raise InvalidInputError(f"prompt must be a str, got {type(text).__name__}")
    lines = [ln.strip() for ln in text.replace("<image>", "").splitlines()]
    lines = [ln for ln in lines if ln and not _PREAMBLE.match(ln)]
    body, options, letters, instruction = [], [], [], []
    in_options = False
    for ln in lines:
        inline = _INLINE_OPTIONS.match(ln)
        if _OPTIONS_HEAD.match(ln) or inline:
            in_options = True
            if inline:  # "Options: A. x, B. y" on one line
                for letter, opt in re.findall(r"\b([A-Z])[.)]\s*([^,;]+?)(?=,?\s*\b[A-Z][.)]|$)", inline.group(1)):
                    letters.append(letter)
                    options.append(opt.strip())
            continue
        opt = _OPTION.match(ln)
        if opt and (in_options or options):
            letters.append(opt.group(1))
            options.append(opt.group(2).strip())
            continue
        if _INSTRUCTION.match(ln) and (body or options):
            instruction.append(ln)
            continue
        body.append(ln)
    if not body:
        raise InvalidInputError(f"prompt has no question: {text[:200]!r}")
    qi = next((i for i, ln in enumerate(body) if "?" in ln), 0)
    question = " ".join(body[:qi + 1])
    notes = tuple(body[qi + 1:])
    instr = " ".join(instruction)
    if options:
        kind = AnswerType.MULTIPLE_CHOICE
    elif _NUMBER_WORDS.search(instr) or _NUMERIC_QUESTION.search(question):
        kind = AnswerType.NUMBER
    else:
        kind = AnswerType.OPEN
    return BenchPrompt(question=question, options=tuple(options), letters=tuple(letters), answer_type=kind,
                       notes=notes, instruction=instr)


_NUM_UNIT = re.compile(r"(-?\d+(?:\.\d+)?)\s*(square met(?:er|re)s?|m²|m2|sq\.? ?m|cm|centimet(?:er|re)s?|mm|"
                       r"met(?:er|re)s?|m)?\b", re.I)
_TO_M = {"cm": 0.01, "mm": 0.001, "m": 1.0}


def _unit(u: Optional[str]) -> Optional[str]:
    if not u:
        return None
    u = u.lower()
    if u.startswith("square") or u in ("m²", "m2") or u.startswith("sq"):
        return "m2"
    if u.startswith("cent") or u == "cm":
        return "cm"
    return "mm" if u == "mm" else "m"


def answer_number(text: str, question: str) -> Optional[float]:
    """The first number of an answer text, converted to the unit the question asks for (metres unless it
    says centimetres or square metres). None if the text holds no number."""
    m = _NUM_UNIT.search(text or "")
    if m is None:
        return None
    value, unit = float(m.group(1)), _unit(m.group(2))
    want = "m2" if _ASKS_M2.search(question) else "cm" if _ASKS_CM.search(question) else "m"
    if unit in _TO_M and want in _TO_M and unit != want:
        value = value * _TO_M[unit] / _TO_M[want]
    return value


def format_number(value: float) -> str:
    """A bare number as the benchmark's parser reads it: integers without decimals, others to 2 places."""
    return str(int(round(value))) if abs(value - round(value)) < 1e-9 else f"{value:.2f}"


def benchmark_answer(answer: Answer, prompt: BenchPrompt) -> tuple[str, str]:
    """(what lmms-eval gets, why it is empty when it is). An abstention is an empty answer (scored as wrong)."""
    if answer.abstained:
        return "", f"abstained: {answer.text}"
    if prompt.answer_type is AnswerType.MULTIPLE_CHOICE:
        if not answer.letter:
            return "", f"no option chosen: {answer.text}"
        i = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".index(answer.letter)  # the Agent letters options in the given order
        return (prompt.letters[i] if i < len(prompt.letters) else answer.letter), ""
    if prompt.answer_type is AnswerType.NUMBER:
        value = answer_number(answer.text if answer.value is None else f"{answer.value:.6f} {answer.unit}",
                              prompt.question)  # a measurement's own value (Answer.value, .unit) before its text
        return ("", f"no number in the answer: {answer.text}") if value is None else (format_number(value), "")
    return answer.text, ""
