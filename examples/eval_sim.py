"""A simulator episode through the benchmark runner (runs offline, no videos needed):
generate + save an episode, then `directme eval sim` with oracle perception on its questions.

    python examples/eval_sim.py --seed 0 --minutes 2 --out out/sim
"""
import argparse

from directme.cli import main
from directme.sim import generate_episode, save_episode

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--minutes", type=float, default=2.0)
    p.add_argument("--out", default="out/sim")
    args = p.parse_args()
    episode_dir = f"{args.out}/episode"
    save_episode(generate_episode(seed=args.seed, minutes=args.minutes), episode_dir)
    raise SystemExit(main(["eval", "sim", "--annotations", episode_dir, "--out", args.out, "--fps", "0"]))
