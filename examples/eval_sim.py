"""A simulator episode through the benchmark runner (runs offline, no videos needed):
generate + save an episode, then evaluate the agent with oracle perception on its questions.

    python examples/eval_sim.py --seed 0 --minutes 2 --out runs/sim
"""
import argparse

from directme.bench import sim
from directme.bench.parallel import EvalJob, run_evaluation
from directme.sim import generate_episode, save_episode

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--minutes", type=float, default=2.0)
    p.add_argument("--out", default="runs/sim")
    args = p.parse_args()
    episode_dir = f"{args.out}/episode"
    save_episode(generate_episode(seed=args.seed, minutes=args.minutes), episode_dir)
    job = EvalJob("sim", model=sim.oracle_spec(episode_dir), frames=sim.SimFrames(), fps=None)
    run_evaluation(job, sim.load(episode_dir), args.out)
    with open(f"{args.out}/metrics.md", encoding="utf-8") as f:
        print(f.read())
