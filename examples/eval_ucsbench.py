"""UCS-Bench: accuracy overall / per category / subcategory / qtype.

    python examples/eval_ucsbench.py --videos UCS/videos --annotations UCS/qa.json --out out/ucs --workers 4
"""
from bench_common import main

if __name__ == "__main__":
    raise SystemExit(main("ucsbench", __doc__))
