"""Combined answering policy: the geometric answerer and an MLLM, selectable in config.

- ``mode: fallback`` (default): keep the geometric answer when it is confident (confidence >=
  ``threshold`` and not flagged as lacking evidence or not understood); ask the MLLM otherwise.
- ``mode: hint``: always ask the MLLM, with the geometric answer put in the prompt as a hint.

In both modes a question the parser did not understand well enough for geometry (kind "open", or a
parse confidence below ``min_parse_confidence``: ``Intent.answerable``) goes to the MLLM directly, with
the ego-frame subgraph and keyframes of the objects it names and no geometric hint; the geometric
answerer abstains on it. An MLLM that fails (answer flagged "backend_error") leaves the geometric
answer, flagged "mllm_failed" (for a question geometry abstained on: no letter, flag "abstained").

Example options: ``{"mode": "fallback", "threshold": 0.6, "mllm": "transformers",
"mllm_options": {"model": "/models/Qwen3-VL-8B-Instruct"}}``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence, Union

from ..errors import InvalidInputError
from ..query.parsed import MIN_PARSE_CONFIDENCE
from ..types import Flag
from ..validation import check_section, parse_options
from .base import Answer, Answerer, QueryContext
from .registry import build_answerer

# Flags that say the geometric answer is not backed by memory, whatever its confidence.
UNTRUSTED_FLAGS = (Flag.NO_EVIDENCE, Flag.NOT_UNDERSTOOD, Flag.OPTIONS_MISMATCH, Flag.UNPARSED, Flag.EMPTY_MEMORY,
                   Flag.ABSTAINED)
MODES = ("fallback", "hint")
MLLM_ERROR_FLAG = Flag.BACKEND_ERROR  # the MLLM gave no answer


@dataclass(frozen=True)
class PolicyConfig:
    mode: str = "fallback"
    threshold: float = 0.6
    mllm: str = "transformers"  # any answerer name of the registry (transformers | openai | ...)
    mllm_options: Mapping[str, Any] = field(default_factory=dict)
    geometric_options: Mapping[str, Any] = field(default_factory=dict)
    min_parse_confidence: float = MIN_PARSE_CONFIDENCE  # parse confidence below which the MLLM answers alone

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidInputError(f"policy answerer: mode must be one of {MODES}, got {self.mode!r}")
        check_section(self, "answerer.options", unit=("threshold", "min_parse_confidence"))
        if self.mllm in ("policy", "geometric"):
            raise InvalidInputError(f"policy answerer: mllm must name an MLLM answerer, got {self.mllm!r}")


def is_confident(answer: Answer, threshold: float) -> bool:
    """Whether a geometric answer can stand on its own."""
    has_answer = answer.letter is not None or bool(answer.text)
    return has_answer and answer.confidence >= threshold and not set(answer.flags) & set(UNTRUSTED_FLAGS)


class PolicyAnswerer:
    """Geometric + MLLM; ``answer.answerer`` says which one answered ("policy[geometric]" ...)."""

    def __init__(self, config: PolicyConfig, geometric: Answerer, mllm: Answerer):
        self.config = config
        self.geometric = geometric
        self.mllm = mllm
        self.name = f"policy:{config.mode}"

    def answer(self, ctx: QueryContext) -> Answer:
        return self.answer_batch([ctx])[0]

    def understood(self, ctx: QueryContext) -> bool:
        """Whether the parse is good enough for memory geometry (else the MLLM answers alone); a context
        built by hand without an intent is judged by the geometric answer's own confidence and flags."""
        return ctx.intent is None or ctx.intent.answerable(self.config.min_parse_confidence)

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        ctxs = list(ctxs)
        geo = self.geometric.answer_batch(ctxs)
        if self.config.mode == "hint":  # no hint from a geometry that abstained
            hinted = [replace(c, hint=g if self.understood(c) and Flag.ABSTAINED not in g.flags else None)
                      for c, g in zip(ctxs, geo)]
            return [self._choose(g, a, "mllm+hint" if h.hint is not None else "mllm")
                    for g, a, h in zip(geo, self.mllm.answer_batch(hinted), hinted)]
        out: list[Answer] = [self._tag(g, "geometric") for g in geo]
        todo = [i for i, g in enumerate(geo)
                if not self.understood(ctxs[i]) or not is_confident(g, self.config.threshold)]
        if todo:
            for i, a in zip(todo, self.mllm.answer_batch([ctxs[i] for i in todo])):
                out[i] = self._choose(geo[i], a, "mllm")
        return out

    def _choose(self, geo: Answer, mllm: Answer, used: str) -> Answer:
        """The MLLM's answer, unless its backend failed (server down, timeout, bad reply): then
        the geometric answer stands, flagged "mllm_failed" with the MLLM's error as raw output."""
        if MLLM_ERROR_FLAG not in mllm.flags:
            return self._tag(mllm, used)
        failed = replace(geo, flags=tuple(geo.flags) + (Flag.MLLM_FAILED,),
                         raw_output=f"{mllm.answerer}: {mllm.raw_output or mllm.text}",
                         latency_s=geo.latency_s + mllm.latency_s)
        return self._tag(failed, "geometric")

    @staticmethod
    def _tag(answer: Answer, used: str) -> Answer:
        return replace(answer, answerer=f"policy[{used}:{answer.answerer}]")


def build(cfg: Mapping[str, Any]) -> PolicyAnswerer:
    """Factory used by the answerer registry: ``cfg`` is the answerer's ``options`` mapping."""
    config = parse_options(PolicyConfig, dict(cfg or {}), "policy answerer options", "answerer.options")
    return PolicyAnswerer(config, build_answerer("geometric", geometric_options(config)),
                          build_answerer(config.mllm, config.mllm_options))


def geometric_options(options: Union[PolicyConfig, Mapping[str, Any]]) -> dict[str, Any]:
    """The options of the policy's geometric answerer: its ``geometric_options``, with the policy's
    ``min_parse_confidence`` unless they give their own."""
    config = parse_options(PolicyConfig, options, "policy answerer options", "answerer.options")
    return {"min_parse_confidence": config.min_parse_confidence, **dict(config.geometric_options)}
