"""Answer confidence as the probability of being right: one logistic map per kind of question, fitted on
answers whose truth is known.

The geometric answerer's raw confidence is a score each solver computes its own way (a soft angle, a count's
probability, the share of the evidence); how often an answer with a given score is right differs by kind. The
map for a kind is ``p = sigmoid(slope * logit(c) + intercept)`` over the raw confidence ``c``: monotone (the
order of answers by confidence is kept), fitted by regularised maximum likelihood (pulled towards the identity,
``slope = 1, intercept = 0``, so that a kind with few answers stays close to its raw scores). A kind with no
fit is left as it is, and so is an answer flagged for want of evidence (``UNCALIBRATED_FLAGS``).
``benchmarks/calibration.py --fit`` fits the packaged maps on simulator episodes and
writes ``directme/data/answer_calibration.json`` with the episodes it used.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable, Mapping, Union

import numpy as np

from ..errors import InvalidInputError
from ..types import Flag

LOGIT_CLIP = 1e-3  # raw confidences are clipped to [this, 1 - this] before the logit (1.0 is common)
PACKAGED = "packaged"  # the maps shipped in directme/data/answer_calibration.json
NONE = "none"  # raw confidences, no map
# answers stated at a fixed confidence for want of evidence keep it: they are neither fitted nor mapped
UNCALIBRATED_FLAGS = frozenset({Flag.NO_EVIDENCE, Flag.MISSING_OBJECT, Flag.OPTIONS_MISMATCH, Flag.NOT_UNDERSTOOD,
                                Flag.UNPARSED, Flag.EMPTY_MEMORY, Flag.ABSTAINED})


@dataclass(frozen=True)
class KindMap:
    """``p = sigmoid(slope * logit(c) + intercept)`` for one kind; ``answers``: how many it was fitted on."""
    slope: float
    intercept: float
    answers: int = 0


@dataclass(frozen=True)
class ConfidenceCalibration:
    """Maps per question kind (``Primitive`` value); ``fitted_on`` says on what."""
    kinds: Mapping[str, KindMap] = field(default_factory=dict)
    fitted_on: str = ""

    def __call__(self, kind: str, confidence: float) -> float:
        """The calibrated confidence; 0 stays 0 (no evidence), a kind without a map is unchanged."""
        m = self.kinds.get(kind)
        if m is None or confidence <= 0.0:
            return float(confidence)
        return float(_sigmoid(m.slope * _logit(confidence) + m.intercept))

    def to_json(self) -> str:
        kinds = {k: {"slope": m.slope, "intercept": m.intercept, "answers": m.answers}
                 for k, m in sorted(self.kinds.items())}
        return json.dumps({"fitted_on": self.fitted_on, "kinds": kinds}, indent=1)

    @classmethod
    def from_json(cls, text: str, origin: str = "calibration") -> "ConfidenceCalibration":
        try:
            data = json.loads(text)
            kinds = {str(k): KindMap(float(v["slope"]), float(v["intercept"]), int(v.get("answers", 0)))
                     for k, v in data["kinds"].items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInputError(f"{origin}: not a confidence calibration ({exc}); write one with "
                                    f"`python benchmarks/calibration.py --fit FILE`") from None
        bad = [k for k, m in kinds.items() if not (np.isfinite(m.slope) and np.isfinite(m.intercept) and m.slope >= 0)]
        if bad:
            raise InvalidInputError(f"{origin}: kinds {bad} need a finite slope >= 0 and a finite intercept")
        return cls(kinds, str(data.get("fitted_on", "")))


def fit_calibration(records: Iterable[tuple[str, float, bool]], fitted_on: str = "", min_answers: int = 30,
                    prior_weight: float = 5.0) -> ConfidenceCalibration:
    """Fit one map per kind from ``(kind, raw confidence, right)`` of answered questions (raw confidence > 0).
    ``min_answers``: fewer and the kind keeps its raw scores; ``prior_weight``: strength of the pull towards
    the identity map, in answers' worth of log-likelihood."""
    by_kind: dict[str, list[tuple[float, bool]]] = {}
    for kind, conf, right in records:
        if conf > 0.0:
            by_kind.setdefault(str(kind), []).append((float(conf), bool(right)))
    kinds = {}
    for kind, rows in sorted(by_kind.items()):
        if len(rows) < min_answers:
            continue
        x = _logit(np.array([c for c, _ in rows]))
        y = np.array([r for _, r in rows], dtype=np.float64)
        slope, intercept = _fit_logistic(x, y, prior_weight)
        kinds[kind] = KindMap(round(slope, 6), round(intercept, 6), len(rows))
    return ConfidenceCalibration(kinds, fitted_on)


def load_calibration(spec: Union[str, Path, ConfidenceCalibration, None]) -> ConfidenceCalibration:
    """``"packaged"`` (the default maps), ``"none"``/None (raw confidences) or the path of a fitted file."""
    if isinstance(spec, ConfidenceCalibration):
        return spec
    if spec is None or spec == NONE:
        return ConfidenceCalibration()
    if spec == PACKAGED:
        return packaged_calibration()
    path = Path(spec)
    if not path.is_file():
        raise InvalidInputError(f"calibration {str(spec)!r}: expected 'packaged', 'none' or the path of a file "
                                f"written by `python benchmarks/calibration.py --fit FILE`")
    return ConfidenceCalibration.from_json(path.read_text(encoding="utf-8"), str(path))


@lru_cache(maxsize=1)
def packaged_calibration() -> ConfidenceCalibration:
    """The maps in directme/data/answer_calibration.json (raw confidences if the file is absent)."""
    try:
        text = resources.files("directme").joinpath("data/answer_calibration.json").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return ConfidenceCalibration()
    return ConfidenceCalibration.from_json(text, "directme/data/answer_calibration.json")


def _logit(c) -> np.ndarray:
    c = np.clip(np.asarray(c, dtype=np.float64), LOGIT_CLIP, 1.0 - LOGIT_CLIP)
    return np.log(c / (1.0 - c))


def _sigmoid(z) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


def _fit_logistic(x: np.ndarray, y: np.ndarray, prior_weight: float, iters: int = 50) -> tuple[float, float]:
    """Newton steps on the log-likelihood of ``y ~ sigmoid(a x + b)`` with the penalty
    ``prior_weight / 2 * ((a - 1)^2 + b^2)``; the slope is kept >= 0 (a monotone map)."""
    w = np.array([1.0, 0.0])
    prior = np.array([1.0, 0.0])
    X = np.stack([x, np.ones_like(x)], axis=1)
    for _ in range(iters):
        p = _sigmoid(X @ w)
        grad = X.T @ (p - y) + prior_weight * (w - prior)
        hess = (X * (p * (1.0 - p))[:, None]).T @ X + prior_weight * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w = w - step
        w[0] = max(w[0], 0.0)
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), float(w[1])

