"""`directme` command line. Each subcommand lives in directme/commands/<name>.py and exposes
``add_arguments(parser)`` and ``run(args) -> int``; heavy imports happen inside ``run``."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

# name -> one-line help; the module directme.commands.<name> implements it.
COMMANDS = {
    "demo": "stream a simulator episode through the Agent and print accuracy per UCS-Bench subtask",
    "sim": "generate a synthetic egocentric episode with ground truth",
    "run": "stream a video / image or RGB-D folder / Aria recording / episode through the Agent and ask questions",
    "eval": "evaluate directme on a streaming benchmark (ucsbench, teleego, phostream, egosat, xlebench, sim)",
    "doctor": "check every backend: imports, builds with random weights, runs, weights found",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="directme", description="Streaming spatial memory for wearable cameras.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        try:
            mod = importlib.import_module(f"directme.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"directme.commands.{name}":
                raise
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        mod.add_arguments(p)
        p.set_defaults(_module=mod)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help()
        return 0
    from .errors import DirectmeError

    try:
        return int(args._module.run(args) or 0)
    except DirectmeError as exc:
        print(f"directme {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
