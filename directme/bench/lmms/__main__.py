"""``python -m directme.bench.lmms ARGS``: lmms-eval's own command line (``lmms-eval ARGS``), run after
directme's CPU fix for torchvision (directme/_compat/torchvision_cpu.py). lmms-eval imports torchvision at
start-up; on a CPU-only torch with the registry's CUDA torchvision that import fails ("operator
torchvision::nms does not exist") before any model loads. On CUDA machines both commands are the same."""
from __future__ import annotations

from ..._compat.torchvision_cpu import ensure_torchvision_importable


def main() -> None:
    ensure_torchvision_importable()
    from lmms_eval.cli.dispatch import main as lmms_eval_main

    lmms_eval_main()


if __name__ == "__main__":
    main()
