"""X-LeBench: ingest each life-log once, then temporal localisation (recall@5 at tIoU 0.3),
counting and summary ordering from memory (schema in directme/bench/xlebench.py).

    python examples/eval_xlebench.py --videos XLe/logs --annotations XLe/queries.json --out out/xle --fps 0.5
"""
from bench_common import main

if __name__ == "__main__":
    raise SystemExit(main("xlebench", __doc__))
