"""TeleEgo: Real-Time Accuracy (5 s decision window) and Memory Persistence Time.

    python examples/eval_teleego.py --videos TeleEgo/videos/P1.mp4 --annotations TeleEgo/QAs/merged_P1_A.json \
        --timeline TeleEgo/timelines/P1.json --out out/teleego_p1
"""
from bench_common import main

if __name__ == "__main__":
    raise SystemExit(main("teleego", __doc__))
