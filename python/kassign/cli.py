"""The ``kassign`` command line.

Subcommands:
    assign   run one strategy on a JSON scenario (see :mod:`kassign.scenario`) and print the
             assignment as JSON.

Exit codes: 0 success, 2 bad input (malformed JSON, invalid scenario, unknown strategy),
1 other failures. Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

EXIT_BAD_INPUT = 2


def _cmd_assign(args: argparse.Namespace) -> int:
    from kassign.scenario import ScenarioError, assignment_to_json, load_scenario

    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        print(f"kassign assign: cannot read {args.file}: {e.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        scenario = load_scenario(text)
        result = scenario.assign(args.strategy)
    except ScenarioError as e:
        print(f"kassign assign: invalid scenario: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (ValueError, TypeError) as e:
        print(f"kassign assign: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    indent = 2 if args.pretty else None
    json.dump(assignment_to_json(result), sys.stdout, indent=indent, sort_keys=False)
    sys.stdout.write("\n")
    return 0


def _add_assign(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    import kassign

    p = sub.add_parser("assign", help="assign partitions for one JSON scenario")
    p.add_argument("--strategy", "-s", required=True, help=f"one of: {', '.join(kassign.STRATEGIES)}")
    p.add_argument("file", nargs="?", default="-", help="scenario JSON file, or - for stdin (default)")
    p.add_argument("--pretty", action="store_true", help="indent the JSON output")
    p.set_defaults(func=_cmd_assign)


def _add_fleet_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kassign.fleet.cli import add_fleet, add_snapshot, add_synth

    add_fleet(sub)
    add_synth(sub)
    add_snapshot(sub)


#: Subcommand registrars, in help order. Each adds its parser and sets ``func``.
SUBCOMMANDS: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = [
    _add_assign,
    _add_fleet_commands,  # fleet, synth, snapshot (kassign.fleet.cli)
]


def build_parser() -> argparse.ArgumentParser:
    import kassign

    parser = argparse.ArgumentParser(prog="kassign", description="Kafka consumer partition assignors.")
    parser.add_argument("--version", action="version", version=f"kassign {kassign.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("kassign: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
