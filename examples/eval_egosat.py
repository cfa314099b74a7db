"""EgoSAT: MCQ accuracy, option confidence, entropy and confidence slope, from a folder of
effective querysets (one per interval clip, named after the clip's video_uid in --videos).
EgoSAT's own runner can use directme instead through ADAPTER_PY=directme/bench/egosat_adapter.py.

    python examples/eval_egosat.py --videos EgoSAT/clips --annotations EgoSAT/effective/ms_pred --out out/egosat
"""
from bench_common import main

if __name__ == "__main__":
    raise SystemExit(main("egosat", __doc__))
