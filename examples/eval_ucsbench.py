"""UCS-Bench: accuracy overall / per category / subcategory / qtype.

    python examples/eval_ucsbench.py --videos UCS/videos --annotations UCS/qa.json --out runs/ucs --workers 4
"""
from bench_common import evaluate, parser

if __name__ == "__main__":
    evaluate("ucsbench", parser(__doc__).parse_args())
