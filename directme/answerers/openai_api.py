"""MLLM answerer talking to any OpenAI-compatible chat-completions server (vLLM, SGLang,
`transformers serve`, hosted APIs) over httpx.

Keyframes travel inline as base64 data URLs. Base URL, model and key come from the config or
the environment (DIRECTME_OPENAI_BASE_URL, DIRECTME_OPENAI_MODEL, OPENAI_API_KEY). Requests
have timeouts and retries (connection errors, timeouts, 429 and 5xx). When the server returns
``top_logprobs`` the option probabilities come from them; servers that reject the logprobs
fields are asked again without them. A server that is down, too slow or replies garbage gives a
BackendError, turned into an answer flagged "backend_error" unless ``on_error: raise``.
"""
from __future__ import annotations

import base64
import io
import logging
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .._lazy import require
from ..errors import BackendError, InvalidInputError
from ._options import options_to_config
from ..types import Flag
from .base import Answer, QueryContext
from .parsing import finish_answer, letter_of_token
from .prompts import Prompt, build_prompt, keyframe_image

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"  # `vllm serve` default


@dataclass(frozen=True)
class OpenAIConfig:
    """Empty ``base_url`` / ``model`` / ``api_key`` fall back to the environment; an empty model
    after that means "the first model the server lists" (vLLM serves one)."""

    base_url: str = ""
    model: str = ""
    api_key: str = ""
    timeout_s: float = 60.0
    connect_timeout_s: float = 5.0
    retries: int = 2
    backoff_s: float = 0.5
    max_tokens: int = 16
    temperature: float = 0.0
    logprobs: bool = True
    top_logprobs: int = 20
    max_keyframes: int = 4
    max_image_side: int = 640
    image_format: str = "jpeg"
    concurrency: int = 4
    use_hint: bool = True
    on_error: str = "flag"  # flag | raise

    def __post_init__(self) -> None:
        if self.on_error not in ("flag", "raise"):
            raise InvalidInputError(f"openai answerer: on_error must be 'flag' or 'raise', got {self.on_error!r}")
        if self.image_format not in ("jpeg", "png"):
            raise InvalidInputError(f"openai answerer: image_format must be 'jpeg' or 'png', got {self.image_format!r}")
        if self.timeout_s <= 0 or self.connect_timeout_s <= 0 or self.retries < 0 or self.concurrency < 1:
            raise InvalidInputError("openai answerer: timeouts must be > 0, retries >= 0, concurrency >= 1")



def image_data_url(img, fmt: str = "jpeg") -> str:
    buf = io.BytesIO()
    img.save(buf, format=fmt.upper(), **({"quality": 90} if fmt == "jpeg" else {}))
    return f"data:image/{fmt};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def chat_messages(prompt: Prompt, max_image_side: int, image_format: str) -> list[dict]:
    content = [{"type": "text", "text": p[1]} if p[0] == "text" else
               {"type": "image_url", "image_url": {"url": image_data_url(keyframe_image(p[1], max_image_side),
                                                                          image_format)}}
               for p in prompt.parts]
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": content}]


def letter_logprobs(choice: Mapping[str, Any], letters: str) -> Optional[dict[str, float]]:
    """Per-letter log-probabilities from an OpenAI ``choices[0].logprobs`` block, taken at the
    first generated token that is an option letter (else the first token); None if absent."""
    content = ((choice.get("logprobs") or {}).get("content")) or []
    if not letters or not content:
        return None
    entry = next((e for e in content if letter_of_token(str(e.get("token", "")), letters)), content[0])
    candidates = list(entry.get("top_logprobs") or []) or [entry]
    out: dict[str, float] = {}
    for c in candidates:
        L = letter_of_token(str(c.get("token", "")), letters)
        lp = c.get("logprob")
        if L and isinstance(lp, (int, float)) and math.isfinite(lp):
            out[L] = float(math.log(math.exp(out[L]) + math.exp(lp))) if L in out else float(lp)
    return out or None


def _message_text(data: Any) -> tuple[str, Mapping[str, Any]]:
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise BackendError(f"malformed reply: no choices[0].message.content in {str(data)[:300]!r}") from exc
    if isinstance(content, list):  # some servers return content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise BackendError(f"malformed reply: message content is {type(content).__name__}, not text")
    return content, choice


class OpenAIAnswerer:
    """Answers by calling ``{base_url}/chat/completions``; one request per question, sent
    ``concurrency`` at a time by ``answer_batch``."""

    def __init__(self, config: OpenAIConfig):
        self.config = config
        self.base_url = (config.base_url or os.environ.get("DIRECTME_OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.model = config.model or os.environ.get("DIRECTME_OPENAI_MODEL", "")
        api_key = config.api_key or os.environ.get("OPENAI_API_KEY", "")
        self.name = f"openai:{self.model or self.base_url}"
        httpx = require("httpx", "vlm")
        self._client = httpx.Client(
            timeout=httpx.Timeout(config.timeout_s, connect=config.connect_timeout_s),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
        self._send_logprobs = config.logprobs

    def close(self) -> None:
        self._client.close()

    def _request(self, method: str, path: str, body: Optional[dict] = None) -> Any:
        """One call with retries on connection errors, timeouts, 429 and 5xx; returns parsed JSON."""
        httpx = require("httpx", "vlm")
        url = f"{self.base_url}{path}"
        last = ""
        for attempt in range(self.config.retries + 1):
            if attempt:
                time.sleep(self.config.backoff_s * 2 ** (attempt - 1))
            try:
                r = self._client.request(method, url, json=body)
            except httpx.TimeoutException as exc:
                last = f"no reply within {self.config.timeout_s:g} s ({type(exc).__name__})"
                continue
            except httpx.TransportError as exc:
                last = f"cannot connect ({exc}); is the server running?"
                continue
            if r.status_code == 429 or r.status_code >= 500:
                last = f"HTTP {r.status_code}: {r.text[:200]}"
                continue
            if r.status_code >= 400:
                hint = " (check base_url: it usually ends in /v1)" if r.status_code == 404 else ""
                raise BackendError(f"{method} {url} failed: HTTP {r.status_code}{hint}: {r.text[:300]}")
            try:
                return r.json()
            except ValueError as exc:
                raise BackendError(f"malformed reply from {url}: not JSON: {r.text[:200]!r}") from exc
        raise BackendError(f"{method} {url} failed after {self.config.retries + 1} attempts: {last}")

    def _model_name(self) -> str:
        if not self.model:
            data = self._request("GET", "/models")
            try:
                self.model = str(data["data"][0]["id"])
            except (KeyError, IndexError, TypeError) as exc:
                raise BackendError(f"{self.base_url}/models lists no model; set answerer option 'model' "
                                   f"or DIRECTME_OPENAI_MODEL (reply: {str(data)[:200]!r})") from exc
            self.name = f"openai:{self.model}"
        return self.model

    def complete(self, prompt: Prompt) -> tuple[str, Optional[dict[str, float]]]:
        """Raw reply text and per-letter log-probabilities (None when the server gives none)."""
        cfg = self.config
        body: dict[str, Any] = {"model": self._model_name(),
                                "messages": chat_messages(prompt, cfg.max_image_side, cfg.image_format),
                                "max_tokens": cfg.max_tokens, "temperature": cfg.temperature}
        if self._send_logprobs and prompt.letters:
            try:
                data = self._request("POST", "/chat/completions",
                                     dict(body, logprobs=True, top_logprobs=cfg.top_logprobs))
            except BackendError as exc:
                if "HTTP 4" not in str(exc):
                    raise
                log.warning("%s rejected logprobs (%s); asking without them from now on", self.base_url, exc)
                self._send_logprobs = False
            else:
                text, choice = _message_text(data)
                return text, letter_logprobs(choice, prompt.letters)
        text, _ = _message_text(self._request("POST", "/chat/completions", body))
        return text, None

    def answer(self, ctx: QueryContext) -> Answer:
        prompt = build_prompt(ctx, self.config.max_keyframes, self.config.use_hint)
        t0 = time.perf_counter()
        try:
            text, lps = self.complete(prompt)
        except BackendError as exc:
            if self.config.on_error == "raise":
                raise
            return Answer(question=ctx.question, t_s=ctx.t_s, text=f"no answer: {exc}", confidence=0.0,
                          evidence=ctx.evidence, subgraph_text=ctx.subgraph_text, answerer=self.name,
                          flags=(Flag.BACKEND_ERROR,), raw_output=str(exc), latency_s=time.perf_counter() - t0)
        return finish_answer(ctx, text, self.name, letter_logprobs=lps, latency_s=time.perf_counter() - t0)

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        if len(ctxs) <= 1 or self.config.concurrency == 1:
            return [self.answer(c) for c in ctxs]
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            return list(pool.map(self.answer, ctxs))


def build(cfg: Mapping[str, Any]) -> OpenAIAnswerer:
    """Factory used by the answerer registry: ``cfg`` is the answerer's ``options`` mapping."""
    return OpenAIAnswerer(options_to_config(OpenAIConfig, dict(cfg or {}), "openai"))
