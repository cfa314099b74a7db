"""Keeping secrets out of what directme writes and prints (docs/faq.md, API keys and secrets).

API keys, tokens and passwords reach directme through configs (``api_key``), environment variables
(``api_key_env: OPENAI_API_KEY``) or credentials inside a URL (``http://user:pass@host/v1``,
``...?key=...``). They are used at run time only: every config, save, run record, result file, log
line and answer text shows them as ``<redacted>``. This module holds the rules:

- ``is_secret_name("api_key")``: option names whose values are secrets (``api_key``, ``token``,
  ``password``, ``*_token``, ...; ``api_key_env`` names a variable and is not one);
- ``redact_url(url)``: user:password@ and secret query parameters (``key``, ``token``, ``sig``...)
  replaced; the scheme, host, port and path stay readable;
- ``redact_text(text, secrets)``: any URL in free text, ``Bearer ...``, ``api_key=...`` and the given
  secret values themselves;
- ``redact_config(data)``: a config mapping with every secret value and URL redacted (to be written);
- ``redact_logger(name)``: the same for another library's log lines (httpx logs every request's URL).
"""
from __future__ import annotations

import logging
import re
import threading
from typing import Any, Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"

_SECRET_NAMES = frozenset({
    "api_key", "apikey", "key", "token", "access_token", "auth_token", "bearer_token", "id_token", "refresh_token",
    "secret", "client_secret", "password", "passwd", "pwd", "authorization", "auth", "credentials", "hf_token",
    "sig", "signature", "x_api_key", "x_goog_api_key", "api_token", "session_token", "private_key"})
_SECRET_SUFFIXES = ("_api_key", "_apikey", "_secret", "_password", "_token", "_passwd", "_private_key")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>`]+")
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/\-]{6,}=*")
_ASSIGNED = re.compile(r"(?i)([\"']?\b(?:[a-z0-9]+[_\-])*(?:api[_\-]?key|apikey|key|token|secret|password|passwd)"
                       r"\b[\"']?\s*[:=]\s*[\"']?)([^\s\"',}&;]+)")


def is_secret_name(name: Any) -> bool:
    """Whether an option or query parameter called ``name`` holds a secret (case and -/_ insensitive)."""
    if not isinstance(name, str):
        return False
    n = name.strip().lower().replace("-", "_")
    return n in _SECRET_NAMES or n.endswith(_SECRET_SUFFIXES)


def is_redacted(value: Any) -> bool:
    """Whether ``value`` went through redaction (a loaded save's key or URL: unusable as it is)."""
    return isinstance(value, str) and REDACTED in value


def redact_url(url: str) -> str:
    """``url`` without its credentials: ``http://u:p@host:8000/v1?key=k&x=1`` ->
    ``http://<redacted>@host:8000/v1?key=<redacted>&x=1``. Text that is not a URL comes back unchanged."""
    if not isinstance(url, str) or "://" not in url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        netloc = f"{REDACTED}@{host}" if "@" in parts.netloc else parts.netloc
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(is_secret_name(k) for k, _ in pairs):
                query = urlencode([(k, REDACTED if is_secret_name(k) else v) for k, v in pairs], safe="<>")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # not parseable (a bad port, brackets): hide everything after the scheme
        return url.split("://", 1)[0] + "://" + REDACTED


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` (an error message, a log line, a server's reply) with every URL's credentials, bearer tokens,
    ``api_key=...``-style assignments and the literal ``secrets`` (4 characters or more) replaced."""
    if not isinstance(text, str) or not text:
        return text
    for s in sorted({s for s in secrets if isinstance(s, str) and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(s, REDACTED)
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _ASSIGNED.sub(lambda m: m.group(1) + (m.group(2) if m.group(2) == REDACTED else REDACTED), text)


def redact_config(data: Any) -> Any:
    """A copy of ``data`` (mappings, lists, strings, numbers) fit to be written: the value of every secret-named
    key (non-empty) is ``<redacted>``, and URLs in strings lose their credentials. Other values are kept."""
    if isinstance(data, Mapping):
        return {k: (REDACTED if is_secret_name(k) and v not in (None, "") and not isinstance(v, (bool, Mapping))
                    else redact_config(v)) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_config(v) for v in data]
    if isinstance(data, str):  # only URLs: other strings are kept as they are
        return _URL.sub(lambda m: redact_url(m.group(0)), data)
    return data


def redact_config_text(text: str) -> str:
    """A YAML/JSON config file's text with ``name: value`` secrets and URL credentials redacted (the same text
    when there is nothing to hide)."""
    return redact_text(text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts credentials (URLs' user:password@ and secret query parameters, bearer
    tokens, ``key=...``) in every record of the logger it is added to (e.g. httpx's request lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except (TypeError, ValueError):  # a record with bad arguments: leave it to logging's own report
            return True
        clean = redact_text(msg)
        if clean != msg:
            record.msg, record.args = clean, ()
        return True


_FILTERED: set[str] = set()
_FILTER_LOCK = threading.Lock()


def redact_logger(name: str) -> None:
    """Add a RedactingFilter to logger ``name`` once (idempotent, thread-safe)."""
    with _FILTER_LOCK:
        if name not in _FILTERED:
            logging.getLogger(name).addFilter(RedactingFilter())
            _FILTERED.add(name)
