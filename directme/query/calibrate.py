"""Parse confidence from data: the cue rules and the sentence classifier vote on a question's kind, and one
logistic calibration maps the votes for the kind the parser chose to the probability that the parse is right
(its kind, and for a geometric kind its asked objects). Fitted on hand-labelled real questions by
``benchmarks/intent_accuracy.py --write-calibration`` (``--cv K`` cross-validates it); the weights and how they
were fitted live in calibration.json beside this module, the only part of the parser fitted to labels."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ..errors import InvalidInputError

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")


@dataclass(frozen=True)
class Votes:
    """What voted for a question's kind and the ``kind`` they chose (before the parser's structural refinements:
    "which quadrant around me", relative to nothing named, is ego_direction). ``decider``: "rule" (an exact cue
    rule), "relation" (a relation to a named landmark, or "is there"), "meaning" (the sentence classifier) or
    "none"; ``rule``: the deciding rule's name; ``rule_kinds``: the kind of every cue rule that matched;
    ``meaning``: the classifier's (kind, probability), best first (empty without a sentence model)."""

    kind: str = "open"
    decider: str = "none"
    rule: str = ""
    rule_kinds: tuple[str, ...] = ()
    meaning: tuple[tuple[str, float], ...] = ()

    def p_meaning(self, kind: str) -> float:
        return next((p for k, p in self.meaning if k == kind), 0.0)


# the features of the votes for the chosen kind; the same for every kind, so a kind without labelled questions
# is calibrated by what its votes look like. Each decider has its own intercept, penalised like every weight,
# so a decider with few labelled questions stays near its prior: even odds for a rule, and for a kind decided by
# meaning the classifier's own probability (calibrated on the prototypes), which enters as an offset.
FEATURES = ("rule", "relation", "meaning_open", "meaning_geometric", "rule_dissent", "meaning_agrees", "meaning_logit",
            "open_p_if_geometric")
RULES_ONLY = ("rule", "relation", "rule_dissent")  # without a sentence model


def _logit(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return float(np.log(p / (1 - p)))


def features(votes: Votes, kind: str, names: Sequence[str] = FEATURES) -> np.ndarray:
    """The feature vector (``names`` order) of ``votes`` for the chosen ``kind``."""
    top = votes.meaning[0][0] if votes.meaning else ""
    by_rule = votes.decider in ("rule", "relation")
    by_meaning = votes.decider == "meaning"
    values = {
        "rule": float(votes.decider == "rule"),
        "relation": float(votes.decider == "relation"),
        "rule_dissent": float(any(k != kind for k in votes.rule_kinds)),  # a matching rule voted another kind
        "meaning_agrees": float(by_rule and top == kind),  # a rule decided and meaning's best kind is the same
        "meaning_logit": _logit(votes.p_meaning(kind)) if by_meaning else 0.0,  # a correction of the offset's slope
        "meaning_open": float(by_meaning and kind == "open"),
        "meaning_geometric": float(by_meaning and kind != "open"),
        "open_p_if_geometric": votes.p_meaning("open") if kind != "open" else 0.0,
    }
    return np.array([values[n] for n in names])


def offset(votes: Votes, kind: str) -> float:
    """The prior log-odds the weights correct: the classifier's own when meaning decided, else even odds."""
    return _logit(votes.p_meaning(kind)) if votes.decider == "meaning" else 0.0


@dataclass(frozen=True)
class Calibration:
    """Logistic weights over ``FEATURES`` (with a sentence model) and ``RULES_ONLY`` (without one)."""

    weights: tuple[float, ...]
    rules_only_weights: tuple[float, ...]
    fitted: str = ""  # how and on what it was fitted

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES) or len(self.rules_only_weights) != len(RULES_ONLY):
            raise InvalidInputError(f"calibration needs {len(FEATURES)} and {len(RULES_ONLY)} weights, got "
                                    f"{len(self.weights)} and {len(self.rules_only_weights)}")

    def probability(self, votes: Votes) -> float:
        """P(the parse is right | ``votes``)."""
        kind = votes.kind
        if votes.meaning:
            z = float(features(votes, kind) @ np.asarray(self.weights)) + offset(votes, kind)
        else:
            z = float(features(votes, kind, RULES_ONLY) @ np.asarray(self.rules_only_weights))
        return float(1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0))))

    def to_json(self) -> dict:
        return {"features": list(FEATURES), "weights": list(self.weights), "rules_only_features": list(RULES_ONLY),
                "rules_only_weights": list(self.rules_only_weights), "fitted": self.fitted}


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50,
                 offsets: Optional[np.ndarray] = None) -> np.ndarray:
    """L2-penalised logistic regression by Newton's method, without a shared intercept (the features hold one
    per decider); ``offsets``: prior log-odds per row added to ``X @ w``."""
    w = np.zeros(X.shape[1])
    pen = np.full(X.shape[1], l2)
    off = np.zeros(len(y)) if offsets is None else offsets
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w + off, -30, 30)))
        grad = X.T @ (p - y) + pen * w
        H = (X * (p * (1 - p))[:, None]).T @ X + np.diag(pen) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(H, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit(samples: Sequence[tuple[Votes, bool]], l2: float = 1.0, fitted: str = "") -> Calibration:
    """A calibration from (votes, parse right) pairs; the rules-only weights are fitted on the same pairs with
    the sentence model's votes left out."""
    if not samples:
        raise InvalidInputError("calibration needs at least one labelled parse")
    y = np.array([float(ok) for _, ok in samples])
    X = np.stack([features(v, v.kind) for v, _ in samples])
    X_rules = np.stack([features(v, v.kind, RULES_ONLY) for v, _ in samples])
    off = np.array([offset(v, v.kind) for v, _ in samples])
    return Calibration(tuple(float(w) for w in fit_logistic(X, y, l2, offsets=off)),
                       tuple(float(w) for w in fit_logistic(X_rules, y, l2)), fitted)


def load(path: Optional[Path] = None) -> Calibration:
    """The calibration stored at ``path`` (default: the packaged calibration.json)."""
    path = Path(path) if path is not None else CALIBRATION_FILE
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"cannot read the parse calibration {path}: {e}") from e
    if tuple(d.get("features", ())) != FEATURES or tuple(d.get("rules_only_features", ())) != RULES_ONLY:
        raise InvalidInputError(f"{path}: its features are not this version's {FEATURES}; refit it")
    return Calibration(tuple(d["weights"]), tuple(d["rules_only_weights"]), d.get("fitted", ""))


@lru_cache(maxsize=1)
def default_calibration() -> Calibration:
    """The packaged calibration (fitted on the labelled questions; see calibration.json's ``fitted``)."""
    return load()
