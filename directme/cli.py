"""`directme` command line. Each subcommand lives in directme/commands/<name>.py and exposes
``add_arguments(parser)`` and ``run(args) -> int``; heavy imports happen inside ``run``."""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import Optional, Sequence

# name -> one-line help; the module directme.commands.<name> implements it.
COMMANDS = {
    "demo": "stream a simulator episode through the Agent and print accuracy per UCS-Bench subtask",
    "sim": "generate a synthetic egocentric episode with ground truth",
    "run": "stream a video / image or RGB-D folder / Aria recording / episode through the Agent and ask questions",
    "eval": "evaluate directme on a streaming benchmark (ucsbench, teleego, phostream, egosat, xlebench, sim)",
    "doctor": "check every backend (imports, builds with random weights, runs), find weights, print a verdict",
}


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="directme", description="Streaming spatial memory for wearable cameras.")
    parser.add_argument("--version", action="version", version=f"directme {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show the INFO logs of directme and of the model packages (DA3, transformers, ...)")
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
        p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help="show the INFO logs of directme and of the model packages")
        p.set_defaults(_module=mod)
    return parser


def configure_logging(verbose: bool = False) -> None:
    """Warnings and the model-loading lines ("loading detector: ... 2.4 s") go to stderr; the INFO output of
    directme and of third-party packages (DA3's [INFO] lines, its gsplat warning, transformers' progress
    bars, ultralytics) only with ``verbose``. The packages' switches are environment variables read when
    they are imported, so this runs before any model package is."""
    level = logging.INFO if verbose else logging.WARNING
    for var, quiet in (("DA3_LOG_LEVEL", "ERROR"), ("TRANSFORMERS_VERBOSITY", "error"),
                       ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("YOLO_VERBOSE", "False")):
        if not verbose:
            os.environ.setdefault(var, quiet)
    for name, fmt in (("", "%(levelname)s %(name)s: %(message)s"), ("directme.loading", "%(message)s")):
        logger = logging.getLogger(name)
        if not any(isinstance(h, _Stderr) for h in logger.handlers):
            handler = _Stderr()
            handler.setFormatter(logging.Formatter(fmt))
            logger.addHandler(handler)
    logging.getLogger().setLevel(level)
    loading = logging.getLogger("directme.loading")
    loading.setLevel(logging.INFO)
    loading.propagate = False


class _Stderr(logging.StreamHandler):
    """A handler writing to the current ``sys.stderr`` (not the one at its creation: tests swap it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
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
