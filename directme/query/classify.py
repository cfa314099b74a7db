"""What kind of question this is (query/kinds registers the kinds): exact cue rules first, then
meaning.

1. Cue rules (query/cues.py): short patterns whose reading is not in doubt ("what colour", "how far",
   "which side", "tell me when", "if I face X"). Each carries the confidence it is trusted with.
2. Otherwise the question's sentence embedding (all-MiniLM-L6-v2, query/embed.py) is compared with
   the labelled prototype sentences of every kind: a kind's score is the mean cosine similarity of
   its ``top_k`` nearest prototypes, and a softmax with a temperature fitted by leave-one-out on the
   prototypes themselves turns the scores into a calibrated probability per kind.

Without a sentence model (embedder ``none`` or ``string``) only the rules decide; anything else is
returned as ``open`` with confidence 0, so it is never answered geometrically by guess."""
from __future__ import annotations

import logging
import threading
import time
import weakref
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from .cues import KindGuess, normalise_question, relation_cue  # noqa: F401 (re-exported: the kind API)
from .kinds import cue_kind  # noqa: F401 (re-exported: the kind API)
from .embed import CachedEmbedder
from .parsed import DEFAULT_PARSER, ParserConfig
from .phrases import FUNCTION_WORDS, tokens
from .kinds import REGISTRY, classifier_prototypes, kind_names
from .vocab import Vocabulary, singular

loading_log = logging.getLogger("directme.loading")  # stage lines ("loading ... N s"; `directme` prints them)

GEOMETRIC_KINDS = tuple(k for k in kind_names() if REGISTRY[k].geometric)


# ------------------------------------------------------------------ the embedding classifier

OBJECT_MASK = "thing"
_PUNCT = frozenset(",.;:?!")
_PEOPLE_KEYS = frozenset(("person", "people", "man", "woman", "boy", "girl", "child", "baby"))
_CLOCK_FRAME = frozenset(("direction", "directions", "position", "positions", "hour", "hours", "face", "terms", "term",
                          "wise", "reading", "notation", "number", "numbers", "time", "hand", "hands", "dial"))


@lru_cache(maxsize=1)
def _base_vocabulary() -> Vocabulary:
    return Vocabulary()


def mask_objects(text: str, vocab: Optional[Vocabulary] = None) -> str:
    """``text`` (normalised) with every object name the vocabulary knows replaced by "thing": what kind of
    question it is does not depend on which object it names ("where is the telly relative to me" and
    "where is the cup relative to me" ask the same), so the sentence model compares the wording alone.
    Place words, people and the clock of "clock position" / "a clock face" are kept."""
    vocab = vocab or _base_vocabulary()
    toks = tokens(text)
    out: list[str] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        end = next((j for j in range(i, len(toks)) if toks[j] in _PUNCT), len(toks))
        hit = None if tok in FUNCTION_WORDS else vocab.lookup(toks[:end], i)
        place = vocab.place_at(toks, i) if hit else None
        if hit and tok == "clock" and (toks[i + 1:i + 2] and toks[i + 1] in _CLOCK_FRAME or toks[i - 1:i] == ["a"]):
            hit = None
        if hit and not (place and place[1] >= hit[1]) and hit[0] not in _PEOPLE_KEYS:
            last = toks[i + hit[1] - 1]
            mask = OBJECT_MASK + "s" if singular(last) != last else OBJECT_MASK
            if not (out and out[-1].startswith(OBJECT_MASK)):
                out.append(mask)
            i += hit[1]
            continue
        out.append(tok)
        i += 1
    return " ".join(out)


class KindClassifier:
    """Prototype nearest neighbours in sentence-embedding space, calibrated by leave-one-out.

    Two views of every sentence: as written, and with its object names masked (:func:`mask_objects`). The
    written view decides when it is sure (probability >= ``sure``) or finds the question open; otherwise the
    masked view, which compares the wording alone (a phrasing near a prototype about other objects), decides
    if it is very sure (>= ``masked_sure``). That bar is higher because the masked view is calibrated on the
    prototypes only and is overconfident on questions unlike any of them (video questions about people and
    screens): at 0.8 it answered 51 of the 71 simulator phrasings the written view left below 0.5 (all right)
    while sending 16 more of 2656 real open questions (PhoStream, OpenEQA attribute / state / function /
    knowledge) to geometry (2026-11-26)."""

    def __init__(self, embedder: CachedEmbedder, prototypes: Optional[dict[str, Sequence[str]]] = None,
                 top_k: int = DEFAULT_PARSER.classifier_top_k, mask: bool = True,
                 sure: float = DEFAULT_PARSER.classifier_sure,
                 masked_sure: float = DEFAULT_PARSER.classifier_masked_sure) -> None:
        self.embedder = embedder
        self.mask = mask
        self.sure = sure
        self.masked_sure = masked_sure
        given = prototypes or classifier_prototypes()  # every registered kind's (refining kinds' with their kind's)
        self.prototypes = {k: tuple(v) for k, v in given.items()}
        self.kinds = tuple(k for k in (*kind_names(), *self.prototypes) if self.prototypes.get(k))
        self.kinds = tuple(dict.fromkeys(self.kinds))
        self.top_k = top_k
        self._ready = False
        self._lock = threading.Lock()
        self.temperature = 0.05
        self.loo_accuracy: Optional[float] = None
        self.masked_temperature = 0.05
        self.masked_loo_accuracy: Optional[float] = None

    @property
    def available(self) -> bool:
        return self.embedder is not None and self.embedder.name == "minilm"

    def prepare(self) -> "KindClassifier":
        """Load the sentence model and embed the prototypes now (else on the first question that needs them)."""
        if self.available and not self._ready:
            self._prepare()
        return self

    def _prepare(self) -> None:
        with self._lock:
            if self._ready:
                return
            texts = [normalise_question(s) for k in self.kinds for s in self.prototypes[k]]
            t0 = time.perf_counter()  # the first question that needs the sentence model waits seconds: say so
            loading_log.info("loading question encoder: all-MiniLM-L6-v2 and %d question prototypes ...", len(texts))
            self._labels = np.array([i for i, k in enumerate(self.kinds) for _ in self.prototypes[k]])
            self._vecs, self.temperature, self.loo_accuracy = self._calibrate(texts)
            if self.mask:
                masked = [mask_objects(t) for t in texts]
                self._masked_vecs, self.masked_temperature, self.masked_loo_accuracy = self._calibrate(masked)
            loading_log.info("loading question encoder: %s ... %.1f s", self.embedder.question_encoder_used or "fp32",
                             time.perf_counter() - t0)
            self._ready = True

    def _calibrate(self, texts: list[str]) -> tuple[np.ndarray, float, float]:
        vecs = self.embedder.encode_questions(texts)
        sims = vecs @ vecs.T
        np.fill_diagonal(sims, -np.inf)  # leave one out
        scores = self._kind_scores(sims)
        return vecs, _fit_temperature(scores, self._labels), float((scores.argmax(1) == self._labels).mean())

    def _kind_scores(self, sims: np.ndarray) -> np.ndarray:
        out = np.full((sims.shape[0], len(self.kinds)), -1.0)
        for i in range(len(self.kinds)):
            s = sims[:, self._labels == i] if sims.ndim == 2 else sims[None, self._labels == i]
            k = min(self.top_k, s.shape[1])
            out[:, i] = -np.sort(-s, axis=1)[:, :k].mean(axis=1) if k else -1.0
        return out

    def _guess(self, text: str, vecs: np.ndarray, temperature: float) -> Optional[KindGuess]:
        vec = self.embedder.encode_questions([text])
        if vec is None or self.embedder.name != "minilm":
            return None
        scores = self._kind_scores(vec @ vecs.T)[0]
        p = _softmax(scores / temperature)
        order = np.argsort(-p)
        ranked = tuple((self.kinds[i], float(p[i])) for i in order)
        return KindGuess(ranked[0][0], ranked[0][1], "embedding", ranked)

    def classify(self, text: str, vocab: Optional[Vocabulary] = None) -> KindGuess:
        """The kind of ``text`` by meaning; ``vocab``: the object names the masked view masks (None: the
        built-in labels)."""
        if not self.available:
            return KindGuess("open", 0.0, "none")
        if not self._ready:
            self._prepare()
        text = normalise_question(text)
        plain = self._guess(text, self._vecs, self.temperature)
        if plain is None:
            return KindGuess("open", 0.0, "none")
        if not self.mask or plain.confidence >= self.sure or plain.kind == "open":
            return plain
        masked_text = mask_objects(text, vocab)
        masked = self._guess(masked_text, self._masked_vecs, self.masked_temperature) if masked_text != text else None
        if masked is not None and masked.kind != "open" and masked.confidence >= self.masked_sure:
            return masked
        return plain


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def _fit_temperature(scores: np.ndarray, labels: np.ndarray) -> float:
    """The softmax temperature that maximises the leave-one-out log-likelihood of the prototypes."""
    best, best_ll = 0.05, -np.inf
    for t in np.geomspace(0.005, 0.5, 60):
        p = _softmax(scores / t)
        ll = float(np.log(np.maximum(p[np.arange(len(labels)), labels], 1e-12)).mean())
        if ll > best_ll:
            best, best_ll = float(t), ll
    return best


_CLASSIFIERS: "weakref.WeakKeyDictionary[CachedEmbedder, dict[tuple, KindClassifier]]" = weakref.WeakKeyDictionary()
_DEFAULT_EMBEDDER: list[CachedEmbedder] = []
_CLASSIFIERS_LOCK = threading.Lock()


def default_embedder() -> CachedEmbedder:
    """The process-wide ``auto`` embedder used when a caller gives none."""
    with _CLASSIFIERS_LOCK:
        if not _DEFAULT_EMBEDDER:
            _DEFAULT_EMBEDDER.append(CachedEmbedder("auto"))
        return _DEFAULT_EMBEDDER[0]


def classifier_for(embedder: Optional[CachedEmbedder], settings: Optional[ParserConfig] = None) -> KindClassifier:
    """One classifier per embedder object and classifier settings (the prototype vectors are cached
    process-wide by text); ``None``: the shared ``auto`` embedder (all-MiniLM-L6-v2 when installed) and
    the default settings (config ``query.parser``)."""
    embedder = embedder if embedder is not None else default_embedder()
    settings = settings or DEFAULT_PARSER
    key = (settings.classifier_top_k, settings.classifier_sure, settings.classifier_masked_sure)
    with _CLASSIFIERS_LOCK:
        per_setting = _CLASSIFIERS.setdefault(embedder, {})
        clf = per_setting.get(key)
        if clf is None:
            clf = per_setting[key] = KindClassifier(embedder, top_k=key[0], sure=key[1], masked_sure=key[2])
        return clf
