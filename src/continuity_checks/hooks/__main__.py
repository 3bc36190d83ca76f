"""``python -m continuity_checks.hooks``: print, write or check ``.pre-commit-hooks.yaml``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from continuity_checks.hooks import MANIFEST, render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m continuity_checks.hooks",
        description="Render the pre-commit hook manifest from the hook registry.",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--write", metavar="PATH", nargs="?", const=MANIFEST, help=f"write it (default {MANIFEST})"
    )
    group.add_argument(
        "--check",
        metavar="PATH",
        nargs="?",
        const=MANIFEST,
        help="exit 1 when PATH differs from the rendered text",
    )
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8", newline="\n")
        return 0
    if args.check:
        path = Path(args.check)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            print(
                f"{path} is out of date; run: python -m continuity_checks.hooks --write {path}",
                file=sys.stderr,
            )
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
