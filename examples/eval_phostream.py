"""PhoStream: Early / On-time / Late / No Response rates; LLM-judge scores with --judge-url.

    python examples/eval_phostream.py --videos PhoStream/videos \
        --annotations PhoStream/dataset/phostream_annotations.json --out runs/phostream \
        --judge-url http://localhost:8000/v1 --judge-model Qwen2.5-72B-Instruct
"""
from bench_common import evaluate, parser

from directme.bench.judge import JudgeSpec

if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--judge-url", default=None, help="OpenAI-compatible server of the judge model")
    p.add_argument("--judge-model", default=None)
    args = p.parse_args()
    evaluate("phostream", args, judge=JudgeSpec(args.judge_url, args.judge_model) if args.judge_url else None)
