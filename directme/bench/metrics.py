"""Benchmark metrics as small pure functions (hand-checkable on tiny cases)."""
from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from ..types import OPTION_LETTERS, Answer, Flag, TextEnum

# --- accuracy tables -------------------------------------------------------------------

NO_VALUE = "(none)"  # the group of records without a value for a key of accuracy_table


def accuracy_table(records: Iterable[Mapping[str, Any]], keys: Sequence[str] = (),
                   correct_key: str = "correct") -> dict[str, Any]:
    """Overall accuracy plus accuracy per value of each key in ``keys``.

    Records whose ``correct`` is None (not scorable) are counted in ``unscored`` only; ``abstained`` counts the
    records that are no answer (``Answer.abstained``), scored or not, and an abstention is never correct;
    ``random_weights`` counts the answers flagged as coming from a model with random weights (meaningless). A key
    no record has a value for gets no table; records without a value among others that have one are grouped as
    ``NO_VALUE`` (never an empty name, which would read "per_category." in metrics.md).
    """
    recs = list(records)
    out: dict[str, Any] = {"overall": _acc(recs, correct_key)}
    for key in keys:
        groups: dict[str, list] = defaultdict(list)
        for r in recs:
            groups[str(r.get(key) or "").strip() or NO_VALUE].append(r)
        if set(groups) - {NO_VALUE}:
            out[f"per_{key}"] = {name: _acc(rs, correct_key) for name, rs in sorted(groups.items())}
    return out


def _acc(recs: Sequence[Mapping[str, Any]], correct_key: str) -> dict[str, Any]:
    scored = [r for r in recs if r.get(correct_key) is not None]
    n_ok = sum(bool(r[correct_key]) and not r.get("abstained") for r in scored)
    return {"accuracy": (n_ok / len(scored)) if scored else None, "correct": n_ok, "total": len(scored),
            "unscored": len(recs) - len(scored), "abstained": sum(bool(r.get("abstained")) for r in recs),
            "random_weights": sum(Flag.RANDOM_WEIGHTS in (r.get("flags") or ()) for r in recs)}


def seed_interval(per_seed: Sequence[tuple[int, int]], level: float = 0.95, resamples: int = 2000,
                  rng_seed: int = 0) -> tuple[float, float]:
    """Interval of a pooled accuracy over seeds: ``per_seed`` holds (correct, total) of each seed (episode);
    the seeds are resampled with replacement ``resamples`` times and the pooled accuracy of each resample
    (correct over total) is taken; returns its central ``level`` interval. Questions of one episode share its
    layout and its noise, so the seed, not the question, is the unit that varies between runs."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    counts = np.asarray([(c, n) for c, n in per_seed if n > 0], dtype=np.float64).reshape(-1, 2)
    if not len(counts):
        raise ValueError("seed_interval needs at least one seed with questions")
    if np.any(counts[:, 0] < 0) or np.any(counts[:, 0] > counts[:, 1]):
        raise ValueError("each seed's correct count must be within 0..total")
    pick = np.random.default_rng(rng_seed).integers(0, len(counts), size=(resamples, len(counts)))
    acc = counts[pick, 0].sum(axis=1) / counts[pick, 1].sum(axis=1)
    lo, hi = np.quantile(acc, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def is_abstention(answer: Answer) -> bool:
    """Whether the model gave no answer (``Answer.abstained``): recorded as an abstention and scored as wrong,
    never as on time, judged, or the letter a tie-break would pick."""
    return answer.abstained


# --- TeleEgo ---------------------------------------------------------------------------


def real_time_correct(correct: bool, latency_s: float, window_s: float = 5.0) -> bool:
    """Real-Time Accuracy counts an answer only if it is correct AND came within the window."""
    return bool(correct) and float(latency_s) <= float(window_s)


def memory_persistence_s(initial_correct: bool, recalls: Sequence[bool], interval_s: float = 60.0,
                         max_rounds: int = 10) -> tuple[float, bool]:
    """(seconds until the first failed recall, censored).

    0 if the first answer was wrong. Each recall round that succeeds adds ``interval_s``.
    ``censored`` is True when no recall failed: the item survived every round that was
    asked (all ``max_rounds``, or fewer when the stream ended), so the value is a lower bound.
    """
    if not initial_correct:
        return 0.0, False
    t = 0.0
    for ok in list(recalls)[:max_rounds]:
        if not ok:
            return t, False
        t += interval_s
    return t, True


# --- PhoStream -------------------------------------------------------------------------

class ResponseTiming(TextEnum):
    """PhoStream's classes of the first (non-silent) response to an item (the official scorer's names)."""

    EARLY = "EarlyResponse"
    NO_RESPONSE = "NoResponse"
    LATE = "LateResponse"
    ON_TIME = "OnTime"


EARLY, NO_RESPONSE, LATE, ON_TIME = ResponseTiming.EARLY, ResponseTiming.NO_RESPONSE, ResponseTiming.LATE, \
    ResponseTiming.ON_TIME


def classify_response(t_answer_s: float, t_response_s: Optional[float], window_s: float = 2.0) -> ResponseTiming:
    """PhoStream timing class of the first (non-silent) response to an item.

    The answer is due in [t_answer, t_answer + window] (t_answer = t_q for instant/backward
    items, the evidence time t_p for forward ones): before is Early, after is Late,
    none is No Response.
    """
    if t_response_s is None:
        return NO_RESPONSE
    if t_response_s < t_answer_s:
        return EARLY
    if t_response_s > t_answer_s + window_s:
        return LATE
    return ON_TIME


def response_rates(classes: Iterable[str]) -> dict[ResponseTiming, float]:
    cl = list(classes)
    n = len(cl) or 1
    return {name: sum(c == name for c in cl) / n for name in (ON_TIME, EARLY, NO_RESPONSE, LATE)}


# --- EgoSAT ----------------------------------------------------------------------------


def option_confidence(scores: Optional[Mapping[str, float]], letters: str = OPTION_LETTERS[:4]
                      ) -> tuple[Optional[float], Optional[float], dict[str, float]]:
    """(confidence, entropy in nats, renormalised probabilities) over the given letters.

    Confidence is the largest option probability after renormalising over ``letters``.
    """
    if not scores:
        return None, None, {}
    p = np.asarray([max(float(scores.get(k, 0.0)), 0.0) for k in letters], dtype=np.float64)
    total = p.sum()
    if not math.isfinite(total) or total <= 0:
        return None, None, {}
    p = p / total
    nz = p[p > 0]
    return float(p.max()), float(-(nz * np.log(nz)).sum()), {k: float(v) for k, v in zip(letters, p)}


def slope(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """Least-squares slope of ys over xs (None with fewer than two distinct xs)."""
    pts = [(float(x), float(y)) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len({x for x, _ in pts}) < 2:
        return None
    x = np.asarray([a for a, _ in pts])
    y = np.asarray([b for _, b in pts])
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc * xc).sum())


# --- X-LeBench -------------------------------------------------------------------------


def tiou(a: Sequence[float], b: Sequence[float]) -> float:
    """Temporal IoU of two [start, end] spans in seconds."""
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def recall_at_k(ranked: Sequence[Sequence[float]], gt_spans: Sequence[Sequence[float]], k: int = 5,
                threshold: float = 0.3) -> float:
    """Fraction of ground-truth spans hit (tIoU >= threshold) by one of the top-k predictions."""
    if not gt_spans:
        return 0.0
    top = list(ranked)[:k]
    hit = sum(any(tiou(p, g) >= threshold for p in top) for g in gt_spans)
    return hit / len(gt_spans)


def pairwise_order_accuracy(predicted: Sequence[str], truth: Sequence[str]) -> float:
    """Fraction of item pairs whose relative order in ``predicted`` matches ``truth``."""
    pos = {x: i for i, x in enumerate(predicted)}
    pairs = [(a, b) for i, a in enumerate(truth) for b in truth[i + 1:]]
    if not pairs:
        return 1.0
    return sum(a in pos and b in pos and pos[a] < pos[b] for a, b in pairs) / len(pairs)


# --- answer text helpers ---------------------------------------------------------------

_RELATION_WORDS = [
    (r"(front|forward)[\s-]*left|left[\s-]*front", "front-left"),
    (r"(front|forward)[\s-]*right|right[\s-]*front", "front-right"),
    (r"(rear|back|behind)[\s-]*left|left[\s-]*(rear|back|behind)", "behind-left"),
    (r"(rear|back|behind)[\s-]*right|right[\s-]*(rear|back|behind)", "behind-right"),
    (r"\b(in front|front|ahead|forward)\b", "front"),
    (r"\b(behind|rear|back)\b", "behind"),
    (r"\bleft\b", "left"),
    (r"\bright\b", "right"),
]


def relation_terms(text: str) -> frozenset[str]:
    """Canonical egocentric direction words in a free-text answer ("rear-left" -> behind-left)."""
    s = re.sub(r"\bright (now|away)\b", " ", (text or "").lower())
    found = set()
    for pattern, word in _RELATION_WORDS:
        if re.search(pattern, s):
            found.add(word)
            s = re.sub(pattern, " ", s)
    return frozenset(found)


def token_overlap_correct(reference: str, prediction: str, fraction: float = 0.25) -> bool:
    """TeleEgo's open-ended fallback: at least ``fraction`` of reference tokens appear."""
    toks = re.findall(r"[\w]+", (reference or "").lower())
    pred = set(re.findall(r"[\w]+", (prediction or "").lower()))
    overlap = [w for w in toks if w in pred]
    return len(overlap) >= max(1, int(len(toks) * fraction))


def parse_letters(text: str, allowed: str) -> list[str]:
    """Distinct option letters named in an answer ("A, C" -> [A, C]), in order of mention."""
    out: list[str] = []
    for m in re.findall(r"\b([A-Z])\b", (text or "").upper()):
        if m in allowed and m not in out:
            out.append(m)
    return out


def mean(values: Iterable[Optional[float]]) -> Optional[float]:
    xs = [float(v) for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


MRA_THRESHOLDS = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))  # the benchmark's confidence thresholds 0.50-0.95


def mean_relative_accuracy(predicted: Optional[float], truth: float) -> float:
    """VSI-Bench's score of a numeric answer: the share of thresholds t in 0.50, 0.55, ..., 0.95 for which the
    relative error |predicted - truth| / truth is at most 1 - t (no answer: 0)."""
    if predicted is None or not math.isfinite(predicted) or truth == 0:
        return 0.0
    err = abs(predicted - truth) / abs(truth)
    return sum(err <= 1.0 - t + 1e-9 for t in MRA_THRESHOLDS) / len(MRA_THRESHOLDS)
