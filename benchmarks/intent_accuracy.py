"""How well the question parser understands real benchmark questions: each labelled question of a
file (../shared/data/qa/intent-labels/dev.jsonl; schema in the README beside it) is parsed and its
kind, targets and reference compared with the labels.

    python benchmarks/intent_accuracy.py --labels ../shared/data/qa/intent-labels/dev.jsonl

A parse is *sent to the geometric answerer* when ``Intent.answerable(min_confidence)`` holds (a
geometric kind, confidence >= the threshold, the needed objects named); everything else is
handed to an MLLM, so its effective kind is ``open``. Prints, overall, per source and per kind:

- ``kind_accuracy``: effective kind == labelled kind (``raw_kind_accuracy``: the parser's top
  kind, whatever its confidence);
- ``target_f1``: micro F1 of the asked targets against the labelled ones, over questions whose
  label is not ``open`` (phrases compared in lower case, determiners dropped, last word singular);
- ``reference_accuracy``: the reference of ``relative_position`` questions;
- ``open_recall``: share of ``open`` questions NOT sent to the geometric answerer;
- ``geometric_precision``: share of the questions sent to the geometric answerer whose kind and
  targets are right (``geometric_precision_with_reference`` also asks the reference to be right);
- ``open_geometric_over_0.5``: ``open`` questions sent to the geometric answerer with confidence > 0.5;
- a confusion table (rows: labelled kind; columns: effective kind) and parse latency (the first
  parse, which loads the sentence model, excluded): ``parse_p95_ms`` over every parse, and over
  the parses that ran the model (``model_share`` of them).

The parse confidence is the calibrated probability of query/calibrate.py, fitted on these labels
(``--write-calibration``), so the plain figures above are in-sample. ``--cv K`` also prints K-fold
cross-validated figures: each fold is parsed with a calibration fitted on the other folds only
(folds stratified by labelled kind; questions with the same text in one fold):

    python benchmarks/intent_accuracy.py --labels ../shared/data/qa/intent-labels/dev.jsonl --cv 5
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import random
import os
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Optional

import numpy as np

from directme.query.calibrate import Calibration, fit
from directme.query.classify import classifier_for, normalise_question
from directme.query.embed import CachedEmbedder
from directme.query.intent import MIN_PARSE_CONFIDENCE, Intent, parse_question
from directme.query.phrases import DETERMINERS, is_punct, tokens
from directme.query.kinds import kind_names
from directme.query.vocab import singular

DEFAULT_LABELS = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa" / "intent-labels" / "dev.jsonl"
_DROP = DETERMINERS - {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "only", "other"}


def norm_phrase(text: Optional[str]) -> str:
    """Lower case, determiners dropped, last word singular: "the Sofas" -> "sofa"."""
    ws = [t for t in tokens(text or "") if not is_punct(t) and t not in _DROP]
    if ws:
        ws[-1] = singular(ws[-1])
    return " ".join(ws)


def effective_kind(intent: Intent, min_confidence: float) -> str:
    return intent.kind if intent.answerable(min_confidence) else "open"


def score(rows: list[dict], intents: list[Intent], min_confidence: float) -> dict[str, Any]:
    """Every metric of the module docstring for parallel lists of label rows and intents."""
    tp = fp = fn = 0
    ref_ok = ref_n = 0
    sent = sent_ok = sent_ok_ref = 0
    open_n = open_kept = open_over = 0
    kind_ok = raw_ok = 0
    for row, it in zip(rows, intents):
        eff = effective_kind(it, min_confidence)
        kind_ok += eff == row["kind"]
        raw_ok += it.kind == row["kind"]
        pred = {norm_phrase(t.text) for t in it.asked} - {""}
        gold = {norm_phrase(t) for t in row.get("targets") or []} - {""}
        targets_right = pred == gold
        ref_right = norm_phrase(row.get("reference")) == norm_phrase(it.reference_text)
        if row["kind"] != "open":
            tp += len(pred & gold)
            fp += len(pred - gold)
            fn += len(gold - pred)
        if row["kind"] == "relative_position":
            ref_n += 1
            ref_ok += ref_right
        if row["kind"] == "open":
            open_n += 1
            open_kept += eff == "open"
            open_over += eff != "open" and it.confidence > 0.5
        if eff != "open":
            sent += 1
            sent_ok += it.kind == row["kind"] and targets_right
            sent_ok_ref += it.kind == row["kind"] and targets_right and (row["kind"] != "relative_position" or ref_right)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    n = len(rows)
    return {
        "n": n, "kind_accuracy": kind_ok / n if n else None, "raw_kind_accuracy": raw_ok / n if n else None,
        "target_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "target_precision": precision, "target_recall": recall,
        "reference_accuracy": ref_ok / ref_n if ref_n else None,
        "open_recall": open_kept / open_n if open_n else None, "open_geometric_over_0.5": open_over,
        "geometric_precision": sent_ok / sent if sent else None,
        "geometric_precision_with_reference": sent_ok_ref / sent if sent else None, "sent_to_geometric": sent,
    }


def parse_right(row: dict, intent: Intent) -> bool:
    """Whether a parse is right: its kind, and for a geometric label its asked objects."""
    if intent.kind != row["kind"]:
        return False
    pred = {norm_phrase(t.text) for t in intent.asked} - {""}
    gold = {norm_phrase(t) for t in row.get("targets") or []} - {""}
    return row["kind"] == "open" or pred == gold


def fit_calibration(rows: list[dict], intents: list[Intent], l2: float, source: str = "") -> Calibration:
    """The calibration fitted on the labelled parses whose kind a rule or the meaning decided."""
    samples = [(it.votes, parse_right(row, it)) for row, it in zip(rows, intents)
               if it.votes is not None and it.votes.decider != "none" and it.how != "options"]
    return fit(samples, l2, f"L2-penalised logistic regression (l2={l2}) on {len(samples)} labelled questions"
                            f"{' of ' + source if source else ''}")


def folds(rows: list[dict], k: int, seed: int = 0) -> list[list[int]]:
    """K folds stratified by labelled kind; questions with the same normalised text share a fold."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[normalise_question(row["question"]).rstrip(" ?.!")].append(i)
    by_kind: dict[str, list[list[int]]] = defaultdict(list)
    for ix in groups.values():
        by_kind[rows[ix[0]]["kind"]].append(ix)
    rng = random.Random(seed)
    out: list[list[int]] = [[] for _ in range(k)]
    j = 0
    for kind in sorted(by_kind):
        gs = by_kind[kind]
        rng.shuffle(gs)
        for g in gs:
            out[j % k].extend(g)
            j += 1
    return [sorted(f) for f in out]


def cross_validate(rows: list[dict], intents: list[Intent], k: int, l2: float, parse) -> list[Intent]:
    """Every question parsed with a calibration fitted on the other folds' labels alone."""
    out: list[Optional[Intent]] = [None] * len(rows)
    for fold in folds(rows, k):
        held = set(fold)
        train = [i for i in range(len(rows)) if i not in held]
        cal = fit_calibration([rows[i] for i in train], [intents[i] for i in train], l2)
        for i in fold:
            out[i] = parse(rows[i], cal)
    return [it for it in out if it is not None]


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", default=str(DEFAULT_LABELS), help="labelled questions (JSON lines)")
    ap.add_argument("--min-confidence", type=float, default=MIN_PARSE_CONFIDENCE,
                    help="parse confidence below which the geometric answerer abstains (default %(default)s)")
    ap.add_argument("--embedder", default="auto", choices=("auto", "minilm", "string", "none"),
                    help="sentence model of the kind classifier (none: cue rules only)")
    ap.add_argument("--question-encoder", default="auto", choices=("auto", "onnx", "torch"),
                    help="the int8 MiniLM that embeds questions: ONNX Runtime's or torch's (auto: ONNX Runtime if installed)")
    ap.add_argument("--out", default=None, help="write per-question parses and the metrics as JSON")
    ap.add_argument("--cv", type=int, default=0, metavar="K",
                    help="also print K-fold cross-validated figures (each fold's calibration fitted on the others)")
    ap.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the calibration's logistic fit")
    ap.add_argument("--write-calibration", default=None, metavar="PATH",
                    help="fit the calibration on all the labels and write it (the package's: "
                         "directme/query/calibration.json)")
    ap.add_argument("--errors", action="store_true",
                    help="also print each wrong parse (for development sets only: tune for kinds, never for lines)")
    a = ap.parse_args(argv)
    rows = [json.loads(line) for line in Path(a.labels).read_text(encoding="utf-8").splitlines() if line.strip()]
    embedder = CachedEmbedder(a.embedder, question_encoder=a.question_encoder)
    t0 = time.perf_counter()
    classifier_for(embedder).prepare()  # model load and prototype vectors: not part of a parse
    load_s = time.perf_counter() - t0
    intents: list[Intent] = []
    lat_ms: list[float] = []
    model_used: list[bool] = []
    for row in rows:
        t0 = time.perf_counter()
        it = parse_question(row["question"], row.get("options") or (), embedder=embedder)
        lat_ms.append((time.perf_counter() - t0) * 1000.0)
        model_used.append(bool(it.votes and it.votes.meaning))  # the sentence model voted
        intents.append(it)
    res = score(rows, intents, a.min_confidence)
    if a.write_calibration:
        digest = hashlib.sha256(Path(a.labels).read_bytes()).hexdigest()[:12]
        cal = fit_calibration(rows, intents, a.l2, f"{Path(a.labels).name} (sha256 {digest}), "
                                                   f"{datetime.date.today().isoformat()}, embedder {embedder.name}, "
                                                   f"by benchmarks/intent_accuracy.py --write-calibration")
        Path(a.write_calibration).write_text(json.dumps(cal.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {a.write_calibration}: {cal.fitted}")
    print(f"questions={len(rows)} labels={a.labels} min_confidence={a.min_confidence} embedder={embedder.name}")
    by_source: dict[str, list[int]] = defaultdict(list)
    by_kind: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_source[row["source"]].append(i)
        by_kind[row["kind"]].append(i)
    cols = ("n", "kind_accuracy", "target_f1", "open_recall", "geometric_precision", "sent_to_geometric")
    print(f"{'group':28s}" + "".join(f" {c:>19s}" for c in cols))
    groups = [("overall", list(range(len(rows))))] + [(f"source={s}", ix) for s, ix in sorted(by_source.items())] + \
             [(f"kind={k}", by_kind[k]) for k in kind_names() if k in by_kind]
    per_kind: dict[str, dict] = {}
    for name, ix in groups:
        r = score([rows[i] for i in ix], [intents[i] for i in ix], a.min_confidence)
        if name.startswith("kind="):
            per_kind[name[5:]] = r
        print(f"{name:28s}" + "".join(f" {_fmt(r[c]):>19s}" for c in cols))
    eff = [effective_kind(it, a.min_confidence) for it in intents]
    seen = [k for k in kind_names() if k in by_kind or k in eff]
    print("\nconfusion (rows: labelled kind, columns: effective kind)")
    short = {k: k[:8] for k in seen}
    print(f"{'':18s}" + "".join(f" {short[k]:>8s}" for k in seen))
    conf = Counter(zip((r["kind"] for r in rows), eff))
    for k in seen:
        if k in by_kind:
            print(f"{k:18s}" + "".join(f" {conf[(k, c)]:8d}" for c in seen))
    later = np.array(lat_ms[1:]) if len(lat_ms) > 1 else np.array(lat_ms)
    used = np.array([ms for ms, u in zip(lat_ms[1:], model_used[1:]) if u])
    print(f"\nmodel_load_s={load_s:.1f} question_encoder={embedder.question_encoder_used} "
          f"parse_ms_first={lat_ms[0]:.1f} (excluded below) "
          f"load_avg_1min={os.getloadavg()[0]:.2f} cpus={os.cpu_count()}")
    print(f"parse_p50_ms={np.percentile(later, 50):.2f} parse_p95_ms={np.percentile(later, 95):.2f} "
          f"model_share={np.mean(model_used[1:]) if len(model_used) > 1 else 0:.3f} "
          f"parse_p95_ms_model={np.percentile(used, 95) if len(used) else 0:.2f} "
          f"parse_p95_ms_rules={np.percentile([ms for ms, u in zip(lat_ms[1:], model_used[1:]) if not u] or [0], 95):.2f}")
    worst = [f"{k}={r['kind_accuracy']:.3f}" for k, r in per_kind.items() if r["n"] >= 5]
    print("kinds with >= 5 items: " + " ".join(worst))
    if a.errors:
        print("\nwrong parses:")
        for row, it, e in zip(rows, intents, eff):
            pred = sorted(norm_phrase(t.text) for t in it.asked)
            gold = sorted(norm_phrase(t) for t in row.get("targets") or [])
            if e != row["kind"] or (row["kind"] != "open" and pred != gold):
                print(f"  [{row['kind']} -> {e} ({it.kind} {it.confidence:.2f} {it.how})] {row['question'][:100]!r} "
                      f"targets {gold} -> {pred}; ref {row.get('reference')!r} -> {it.reference_text!r}")
    for key in ("kind_accuracy", "raw_kind_accuracy", "target_f1", "reference_accuracy", "open_recall",
                "geometric_precision", "geometric_precision_with_reference", "open_geometric_over_0.5"):
        print(f"{key}={_fmt(res[key])}")
    cv = None
    if a.cv > 1:
        cv_intents = cross_validate(rows, intents, a.cv, a.l2, lambda row, cal: parse_question(
            row["question"], row.get("options") or (), embedder=embedder, calibration=cal))
        cv = score(rows, cv_intents, a.min_confidence)
        print(f"\ncross-validated ({a.cv} folds; each fold's calibration fitted on the other folds)")
        for key in ("kind_accuracy", "target_f1", "reference_accuracy", "open_recall", "geometric_precision",
                    "geometric_precision_with_reference", "sent_to_geometric", "open_geometric_over_0.5"):
            print(f"cv_{key}={_fmt(cv[key])}")
    if a.out:
        out = {"metrics": res, "cv_metrics": cv, "per_kind": per_kind,
               "parses": [{"id": r["id"], "kind": it.kind, "effective_kind": e, "confidence": it.confidence,
                           "how": it.how, "targets": [t.text for t in it.asked], "reference": it.reference_text,
                           "viewpoint": it.viewpoint.text if it.viewpoint else None, "parse_ms": ms}
                          for r, it, e, ms in zip(rows, intents, eff, lat_ms)]}
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
