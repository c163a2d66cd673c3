"""`python -m core.knowledge.generated check [--data-dir DIR | --repos-dir DIR]`: does the shipped JSON
still match the clone? Exit 0 when every compared table matches, 1 on a mismatch, 2 when there was
nothing to compare (no generated table, no clone)."""
from __future__ import annotations

import argparse
from pathlib import Path

from core.knowledge.generated.check import check, report_lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.knowledge.generated")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("check", help="compare the shipped knowledge JSON with the generated tables")
    where = cmd.add_mutually_exclusive_group()
    where.add_argument("--data-dir", type=Path, help="DATA_DIR holding knowledge/<table>.json (default: DATA_DIR)")
    where.add_argument("--repos-dir", type=Path, help="read the tables from the clones here instead, writing nothing")
    args = parser.parse_args(argv)
    result = check(args.data_dir, args.repos_dir)
    for line in report_lines(result):
        print(line)
    if not result.diffs:
        return 2
    return 0 if result.matches else 1


if __name__ == "__main__":
    raise SystemExit(main())
