"""Time the kind classifier's question encoders on real question texts: all-MiniLM-L6-v2 in int8 through
ONNX Runtime (query/minilm_onnx.py) and through torch (query/minilm_int8.py), against the fp32 model.

One question at a time, as a parse embeds it, the encoders taking turns question by question so that a
busy machine slows both alike. Prints per encoder ``p50_ms``, ``p95_ms`` and the cosine of its vectors to
the fp32 model's (min and mean), plus the 1-minute load average.

    python benchmarks/question_encoder_speed.py [--labels FILE] [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

DEFAULT_LABELS = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa" / "intent-labels" / "dev.jsonl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", default=str(DEFAULT_LABELS), help="questions to embed (JSON lines with 'question')")
    ap.add_argument("--repeats", type=int, default=3, help="passes over the questions")
    a = ap.parse_args(argv)
    path = Path(a.labels)
    if not path.is_file():
        raise SystemExit(f"no question file at {path} (give --labels FILE)")
    questions = [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    from directme.query.embed import _load_minilm
    from directme.query.minilm_int8 import Int8MiniLM
    from directme.query.minilm_onnx import OnnxMiniLM

    st = _load_minilm("cpu")
    t0 = time.perf_counter()
    encoders = {"onnx": OnnxMiniLM(st)}
    print(f"onnx_ready_s={time.perf_counter() - t0:.1f} built={encoders['onnx'].built}")
    t0 = time.perf_counter()
    encoders["torch"] = Int8MiniLM(st)
    print(f"torch_ready_s={time.perf_counter() - t0:.1f}")
    fp32 = np.asarray(st.encode(questions, normalize_embeddings=True, show_progress_bar=False), dtype=np.float32)
    ms: dict[str, list[float]] = {k: [] for k in encoders}
    vecs: dict[str, np.ndarray] = {k: np.zeros_like(fp32) for k in encoders}
    for _ in range(a.repeats):
        for i, q in enumerate(questions):
            for name, enc in encoders.items():
                t = time.perf_counter()
                vecs[name][i] = enc.encode([q])[0]
                ms[name].append((time.perf_counter() - t) * 1000.0)
    print(f"questions={len(questions)} repeats={a.repeats} load_avg_1min={os.getloadavg()[0]:.2f} cpus={os.cpu_count()}")
    for name in encoders:
        cos = (vecs[name] * fp32).sum(1)
        print(f"encoder={name} p50_ms={np.percentile(ms[name], 50):.2f} p95_ms={np.percentile(ms[name], 95):.2f} "
              f"max_ms={max(ms[name]):.2f} cos_fp32_min={cos.min():.4f} cos_fp32_mean={cos.mean():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
