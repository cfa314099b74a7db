"""PhoStream: Early / On-time / Late / No Response rates; LLM-judge scores with --judge-url.

    python examples/eval_phostream.py --videos PhoStream/videos \
        --annotations PhoStream/dataset/phostream_annotations.json --out out/phostream \
        --judge-url http://localhost:8000/v1 --judge-model Qwen2.5-72B-Instruct
"""
from bench_common import main

if __name__ == "__main__":
    raise SystemExit(main("phostream", __doc__))
