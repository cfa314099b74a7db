"""TeleEgo: Real-Time Accuracy (5 s decision window) and Memory Persistence Time.

    python examples/eval_teleego.py --videos TeleEgo/videos/P1.mp4 --annotations TeleEgo/QAs/merged_P1_A.json \
        --timeline TeleEgo/timelines/P1.json --out runs/teleego_p1
"""
from bench_common import evaluate, parser

if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--timeline", required=True, help="timeline JSON mapping 'D1-09:31:38' labels to stream seconds")
    args = p.parse_args()
    evaluate("teleego", args, timeline=args.timeline)
