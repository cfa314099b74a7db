"""MLLM answerer talking to any OpenAI-compatible chat-completions server (vLLM, SGLang,
`transformers serve`, hosted APIs) through the ``openai`` package.

Keyframes travel inline as base64 data URLs. Base URL, model and key come from the config or
the environment (DIRECTME_OPENAI_BASE_URL, DIRECTME_OPENAI_MODEL, and the variable named by
``api_key_env``, OPENAI_API_KEY by default). When the server returns ``top_logprobs`` the option
probabilities come from them; servers that reject the logprobs fields are asked again without them.

Every question is bounded (docs/faq.md, Network calls): ``timeout_s`` is one deadline for the whole
question - connecting, every reply read whole, every attempt and the backoff between them, and the
model listing when ``model`` is not set - so a trickling server, a huge reply or a refused connection
ends within ``timeout_s`` (the httpx client given to ``openai`` cuts every socket operation to the time
left, see ``_bounded_http.py``). A reply larger than ``max_reply_bytes`` is refused. Connection errors,
timeouts, 429 and 5xx are retried up to ``retries`` times with exponential backoff (``backoff_s``,
doubling, at most 8 s) while time remains before the deadline; the ``openai`` client's own retries are
off. Any failure (down, too slow, too large, garbage) is a BackendError, turned into an answer flagged
"backend_error" with the cause in its text and raw_output unless ``on_error: raise``.

Secrets: the API key is sent, never shown: the answerer's name, error messages and logs show the
base URL with its credentials redacted (directme/redact.py), and a saved config holds ``<redacted>``
in place of a literal ``api_key`` (the key then comes from ``api_key_env`` again).
"""
from __future__ import annotations

import base64
import io
import json
import logging
import math
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Optional, Sequence

from .._lazy import require
from ..errors import BackendError, InvalidInputError
from ..redact import is_redacted, redact_logger, redact_text, redact_url
from ..types import Flag
from ..validation import parse_options
from .base import Answer, QueryContext
from .parsing import finish_answer, letter_of_token
from .prompts import Prompt, build_prompt, keyframe_image

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"  # `vllm serve` default
MAX_BACKOFF_S = 8.0
MAX_RETRIES = 10
MAX_MODEL_CHARS = 256  # a model id taken from the server's /models longer than this is not a name
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class OpenAIConfig:
    """Empty ``base_url`` / ``model`` / ``api_key`` fall back to the environment; an empty model
    after that means "the first model the server lists" (vLLM serves one). The key is best given by
    the name of the variable holding it (``api_key_env``); a literal ``api_key`` works at run time but
    is written nowhere (saved as ``<redacted>``, which means "take it from ``api_key_env``").
    ``timeout_s``: one deadline per question, connecting, whole replies, every attempt and backoff included."""

    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)  # never in a repr, a log line or a traceback's message
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    connect_timeout_s: float = 5.0
    retries: int = 2
    backoff_s: float = 0.5
    max_reply_bytes: int = 4 * 1024 * 1024
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
        if not all(_number(v) and 0 < v < math.inf for v in (self.timeout_s, self.connect_timeout_s)) or \
                not _number(self.backoff_s) or not 0 <= self.backoff_s <= MAX_BACKOFF_S:
            raise InvalidInputError(f"openai answerer: timeout_s and connect_timeout_s must be finite numbers > 0 and "
                                    f"backoff_s in [0, {MAX_BACKOFF_S:g}] (seconds), got {self.timeout_s!r:.30}, "
                                    f"{self.connect_timeout_s!r:.30}, {self.backoff_s!r:.30}")
        for name, lo, hi in (("retries", 0, MAX_RETRIES), ("concurrency", 1, 256),
                             ("max_reply_bytes", 1024, 2 ** 31 - 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise InvalidInputError(f"openai answerer: {name} must be an integer in [{lo}, {hi}], got {v!r:.30}")
        for name in ("base_url", "model", "api_key", "api_key_env"):
            if not isinstance(getattr(self, name), str):
                raise InvalidInputError(f"openai answerer: {name} must be a string, "
                                        f"got {type(getattr(self, name)).__name__}")
        if not _ENV_NAME.fullmatch(self.api_key_env):
            raise InvalidInputError("openai answerer: api_key_env names the environment variable holding the key "
                                    "(letters, digits and _, e.g. OPENAI_API_KEY); a key itself goes in api_key "
                                    "(the value given is not shown: it may be a key)")

    def __repr__(self) -> str:  # no key, and the URL without its credentials
        shown = {f.name: redact_url(getattr(self, f.name)) if f.name == "base_url" else getattr(self, f.name)
                 for f in fields(self) if f.repr}
        return "OpenAIConfig(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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
    first generated token that is an option letter (else the first token); None if absent.
    A log-probability that is not a finite number <= 0 (a broken server's 900) is ignored."""
    logprobs = choice.get("logprobs") if isinstance(choice, Mapping) else None
    raw = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    content = [e for e in raw if isinstance(e, Mapping)] if isinstance(raw, list) else []
    if not letters or not content:
        return None
    entry = next((e for e in content if letter_of_token(str(e.get("token", "")), letters)), content[0])
    top = entry.get("top_logprobs")
    candidates = [c for c in (top if isinstance(top, list) else []) if isinstance(c, Mapping)] or [entry]
    out: dict[str, float] = {}
    for c in candidates:
        L = letter_of_token(str(c.get("token", "")), letters)
        lp = c.get("logprob")
        if not L or not _number(lp) or not math.isfinite(lp) or lp > 1e-3:
            continue
        lp = min(float(lp), 0.0)
        out[L] = _logaddexp(out[L], lp) if L in out else lp
    return out or None


def _logaddexp(a: float, b: float) -> float:
    """log(exp(a) + exp(b)) without overflow or log(0)."""
    hi, lo = max(a, b), min(a, b)
    return hi + math.log1p(math.exp(lo - hi))


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
    ``concurrency`` at a time by ``answer_batch``. Safe to share between threads."""

    def __init__(self, config: OpenAIConfig):
        self.config = config
        base_url = config.base_url or os.environ.get("DIRECTME_OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self._url_redacted = is_redacted(base_url)  # a saved config's: its credentials were not kept
        self.base_url = base_url.rstrip("/")
        self.shown_url = redact_url(self.base_url)  # what messages, logs and the answerer's name show
        self.model = config.model or os.environ.get("DIRECTME_OPENAI_MODEL", "")
        given = "" if is_redacted(config.api_key) else config.api_key  # "<redacted>": saved without its key
        api_key = given or os.environ.get(config.api_key_env, "")
        self._secrets = tuple(x for x in (api_key, *_url_credentials(self.base_url)) if x)
        self.name = f"openai:{self._scrub(self.model) or self.shown_url}"
        self._openai = require("openai", "vlm")
        from ._bounded_http import Deadline, ReplyRefused, bounded_client

        for name in ("httpx", "httpcore", "openai"):  # httpx logs each request's URL (INFO): credentials and all
            redact_logger(name)
        self._deadline, self._too_large = Deadline(), ReplyRefused
        http = bounded_client(self._deadline, config.max_reply_bytes, config.timeout_s, config.connect_timeout_s)
        url, query = _split_query(self.base_url)  # openai appends paths to base_url: its query goes apart
        try:
            self._client = self._openai.OpenAI(
                base_url=url, default_query=query or None, max_retries=0, timeout=http.timeout, http_client=http,
                api_key=api_key or "none")  # openai insists on a key: without one, no Authorization is sent
            self._client_error = ""
        except Exception as exc:  # noqa: BLE001 - an odd base_url: reported on the first question
            self._client, self._client_error = None, self._scrub(f"bad base_url ({type(exc).__name__}: {exc})")
            http.close()
        self._no_auth = {} if api_key else {"extra_headers": {"Authorization": self._openai.Omit()}}
        self._send_logprobs = config.logprobs

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _scrub(self, text: str) -> str:
        """``text`` with this answerer's key and URL credentials (and any other credentials) redacted."""
        return redact_text(text, self._secrets)

    def _request(self, method: str, path: str, body: Optional[dict] = None) -> Any:
        """One call (``GET /models`` or ``POST /chat/completions``), retried on connection errors, timeouts,
        429 and 5xx while the question's deadline allows; returns parsed JSON. Every failure is a
        BackendError whose message names the redacted URL and the cause."""
        cfg = self.config
        shown = f"{self.shown_url}{path}"
        if self._url_redacted:
            raise BackendError(f"base_url {self.shown_url} had its credentials redacted when the config was saved: "
                               "give the real URL again (answerer option base_url or DIRECTME_OPENAI_BASE_URL)")
        if self._client is None:
            raise BackendError(f"{method} {shown} failed: {self._client_error}; it should look like "
                               "http://host:8000/v1")
        attempts = 0
        while True:
            attempts += 1
            try:
                raw = self._client.models.with_raw_response.list(**self._no_auth) if path == "/models" else \
                    self._client.chat.completions.with_raw_response.create(**body, **self._no_auth)
            except Exception as exc:  # noqa: BLE001 - every failure is classified below
                retry, last = self._cause(exc)
                if not retry:
                    raise BackendError(f"{method} {shown} failed: {last}") from None
            else:
                data = raw.http_response.content
                try:
                    return json.loads(data)
                except (ValueError, RecursionError) as exc:
                    raise BackendError(f"malformed reply from {shown}: not JSON: "
                                       f"{self._scrub(_snippet(data, 200))!r}") from exc
            pause = min(cfg.backoff_s * 2 ** (attempts - 1), MAX_BACKOFF_S)
            left = self._deadline.left()
            if attempts > cfg.retries or left is None or left <= pause:
                raise BackendError(f"{method} {shown} failed after {attempts} attempt{'s' * (attempts > 1)}: {last}")
            time.sleep(pause)

    def _cause(self, exc: BaseException) -> tuple[bool, str]:
        """(worth another attempt, the cause in words, redacted) of a failed call."""
        httpx, openai = require("httpx", "vlm"), self._openai
        chain, e = [], exc
        while e is not None and len(chain) < 16:
            chain.append(e)
            e = e.__cause__ or e.__context__

        def find(*types: type) -> Any:
            return next((x for x in chain if isinstance(x, types)), None)

        if (x := find(self._too_large)) is not None:
            return False, self._scrub(str(x))  # the same server would send the same reply
        if isinstance(exc, openai.APIStatusError):
            status, data = exc.status_code, exc.response.content
            if status == 429 or status >= 500:
                return True, f"HTTP {status}: {self._scrub(_snippet(data, 200))}"
            hint = " (check base_url: it usually ends in /v1)" if status == 404 else ""
            return False, f"HTTP {status}{hint}: {self._scrub(_snippet(data, 300))}"
        if find(httpx.TimeoutException, openai.APITimeoutError) is not None:
            return True, (f"no reply within {self.config.timeout_s:g} s (timeout_s: connecting and the whole reply, "
                          f"all attempts included; {self._deadline.received} bytes had come)")
        if (x := find(httpx.UnsupportedProtocol)) is not None:
            return False, self._scrub(f"bad base_url ({x}); it should look like http://host:8000/v1")
        if (x := find(httpx.ConnectError)) is not None:
            return True, self._scrub(f"cannot connect ({x}); is the server running?")
        if (x := find(httpx.TransportError)) is not None:
            return True, self._scrub(f"connection failed ({type(x).__name__}: {x})")
        x = find(httpx.HTTPError) or exc  # InvalidURL, a bad content encoding, a body that is not JSON-able...
        return False, self._scrub(f"request failed ({type(x).__name__}: {x})")

    def _model_name(self) -> str:
        if not self.model:
            data = self._request("GET", "/models")
            try:
                model = data["data"][0]["id"]
            except (KeyError, IndexError, TypeError) as exc:
                raise BackendError(f"{self.shown_url}/models lists no model; set answerer option 'model' "
                                   f"or DIRECTME_OPENAI_MODEL (reply: {self._scrub(str(data)[:200])!r})") from exc
            if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL_CHARS \
                    or not model.isprintable():
                raise BackendError(f"{self.shown_url}/models lists a model id that is not a name (a string of at most "
                                   f"{MAX_MODEL_CHARS} printable characters): {self._scrub(str(model)[:80])!r}; set "
                                   "answerer option 'model' or DIRECTME_OPENAI_MODEL")
            self.model = model
            self.name = f"openai:{self._scrub(model)}"  # the server's string: shown only redacted
        return self.model

    def complete(self, prompt: Prompt) -> tuple[str, Optional[dict[str, float]]]:
        """Raw reply text and per-letter log-probabilities (None when the server gives none), within
        ``timeout_s`` from now: every request this needs, its attempts and backoff included."""
        with self._deadline.running(self.config.timeout_s):
            return self._complete(prompt)

    def _complete(self, prompt: Prompt) -> tuple[str, Optional[dict[str, float]]]:
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
                log.warning("%s rejected logprobs (%s); asking without them from now on", self.shown_url, exc)
                self._send_logprobs = False
            else:
                text, choice = self._reply(data)
                try:
                    lps = letter_logprobs(choice, prompt.letters)
                except (TypeError, ValueError, AttributeError, OverflowError) as exc:  # garbage: answer from text
                    log.warning("%s: unusable logprobs in the reply (%s); the text alone decides", self.shown_url, exc)
                    lps = None
                return text, lps
        text, _ = self._reply(self._request("POST", "/chat/completions", body))
        return text, None

    def _reply(self, data: Any) -> tuple[str, Mapping[str, Any]]:
        try:
            text, choice = _message_text(data)
        except BackendError as exc:
            raise BackendError(self._scrub(str(exc))) from None
        return self._scrub(text), choice  # the server's text: redacted as every string from it

    def answer(self, ctx: QueryContext) -> Answer:
        prompt = build_prompt(ctx, self.config.max_keyframes, self.config.use_hint)
        t0 = time.perf_counter()
        try:
            text, lps = self.complete(prompt)
        except BackendError as exc:
            if self.config.on_error == "raise":
                raise
            why = self._scrub(str(exc))
            return Answer(question=ctx.question, t_s=ctx.t_s, text=f"no answer: {why}", confidence=0.0,
                          evidence=ctx.evidence, subgraph_text=ctx.subgraph_text, answerer=self.name,
                          flags=(Flag.BACKEND_ERROR,), raw_output=why, latency_s=time.perf_counter() - t0)
        return finish_answer(ctx, text, self.name, letter_logprobs=lps, latency_s=time.perf_counter() - t0)

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        if len(ctxs) <= 1 or self.config.concurrency == 1:
            return [self.answer(c) for c in ctxs]
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            return list(pool.map(self.answer, ctxs))


def _snippet(data: bytes, n: int) -> str:
    return data[: 4 * n].decode("utf-8", errors="replace")[:n]


def _split_query(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its query string, and that query's parameters."""
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url, {}
    return urlunsplit(parts._replace(query="")), dict(parse_qsl(parts.query, keep_blank_values=True))


def _url_credentials(url: str) -> tuple[str, ...]:
    """The user, password and secret query values inside ``url`` (to be scrubbed from any text)."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    from ..redact import is_secret_name

    try:
        parts = urlsplit(url)
    except ValueError:
        return ()
    userinfo = parts.netloc.rpartition("@")[0]
    out = [unquote(x) for x in userinfo.split(":", 1) if x] if userinfo else []
    out += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_secret_name(k) and v]
    return tuple(out)


def build(cfg: Mapping[str, Any]) -> OpenAIAnswerer:
    """Factory used by the answerer registry: ``cfg`` is the answerer's ``options`` mapping."""
    return OpenAIAnswerer(parse_options(OpenAIConfig, dict(cfg or {}), "openai answerer options", "answerer.options"))
