"""LLM judge for open-ended answers (PhoStream's 0-5 scale; also used for UCS-Bench
open-ended items, TeleEgo open-ended items and X-LeBench summaries when configured).

The judge talks to an OpenAI-compatible server through directme.answerers.openai_api (the
``openai`` package; ``timeout_s`` is one deadline per judge call, retries included), imported only
when a judge is configured.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..errors import BackendError

PROMPT = (
    "You are grading an answer to a question about a video stream.\n"
    "Question: {question}\nReference answer: {reference}\nModel answer: {response}\n"
    "Score how well the model answer matches the reference in facts and key points, as an integer "
    "from 0 (wrong or empty) to 5 (fully correct). Reply with JSON only, e.g. {{\"score\": 4}}."
)


@dataclass(frozen=True)
class JudgeSpec:
    """Where the judge model is served: ``base_url`` (".../v1"), model name, and the name of
    the environment variable holding the API key (never the key itself: specs are logged)."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0


class LLMJudge:
    """Scores a response 0-5 against a reference with any ``complete(prompt) -> str``."""

    def __init__(self, complete: Callable[[str], str], retries: int = 2):
        self.complete = complete
        self.retries = retries

    def score(self, question: str, reference: str, response: str) -> float:
        if not (response or "").strip():
            return 0.0
        prompt = PROMPT.format(question=question, reference=reference, response=response)
        last = ""
        for _ in range(self.retries + 1):
            last = self.complete(prompt)
            value = parse_score(last)
            if value is not None:
                return value
        raise BackendError(f"the judge's reply has no 0-5 score: {last[:200]!r}")


def parse_score(text: str) -> Optional[float]:
    """The score from a judge reply: a JSON ``{"score": x}`` or the first number; clamped to 0-5."""
    s = (text or "").strip()
    try:
        obj = json.loads(s[s.index("{"): s.rindex("}") + 1]) if "{" in s else None
        if isinstance(obj, dict) and "score" in obj:
            return min(5.0, max(0.0, float(obj["score"])))
    except (ValueError, TypeError):
        pass
    m = re.search(r"-?\d+(?:\.\d+)?", s)
    return min(5.0, max(0.0, float(m.group(0)))) if m else None


def build_judge(spec: Optional[JudgeSpec]) -> Optional[LLMJudge]:
    """A judge for ``spec`` (None -> no judge: open-ended items are left unscored)."""
    if spec is None:
        return None
    from ..answerers import openai_api  # lazy: only evaluations with a judge need it

    return LLMJudge(_completion_fn(openai_api, spec))


def _completion_fn(openai_api: Any, spec: JudgeSpec) -> Callable[[str], str]:
    """``complete(prompt)`` through the project's OpenAI-compatible client (bounded: see its module)."""
    from ..answerers.prompts import Prompt

    client = openai_api.OpenAIAnswerer(openai_api.OpenAIConfig(
        base_url=spec.base_url, model=spec.model, api_key_env=spec.api_key_env,
        timeout_s=spec.timeout_s, max_tokens=32, temperature=0.0, logprobs=False, on_error="raise"))
    system = "You are a strict, fair grader. Reply with JSON only."

    def complete(prompt: str) -> str:
        text, _ = client.complete(Prompt(system=system, parts=(("text", prompt),), letters=""))
        return text

    return complete
