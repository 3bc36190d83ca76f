"""What the strict JSON reader costs a file, in instructions: ``load`` (a Document), ``load``
and the compact proof (what a delta's check asks), and ``accepts`` (history mode's yes or no),
for each source tree given, side by side in one run. Each measure is one process under
``valgrind --tool=callgrind`` reading every ``*.json`` file below DIR (at most ``--files``), less
the same process that only reads the bytes. Not part of the test run (``nox -s bench``)::

    python benchmarks/bench_reader.py DIR [--src OTHER/src ...] [--files 5000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind

ROOT = Path(__file__).resolve().parents[1]

# the measured process: read the files, then run one mode over them
PROGRAM = """
import sys
from pathlib import Path
from continuity_checks.core import strict_json
paths = sorted(p for p in Path(sys.argv[1]).rglob("*.json") if p.is_file())[: int(sys.argv[3])]
datas = [p.read_bytes() for p in paths]
mode = sys.argv[2]
for data in datas:
    if mode == "load":
        strict_json.load(data)
    elif mode == "compact":
        doc = strict_json.load(data)
        if isinstance(doc, strict_json.Document):
            doc.compact
    elif mode == "accepts":
        strict_json.accepts(data)
print(len(datas))
"""

MODES = ("read", "load", "compact", "accepts")


def instructions(src: str, directory: str, mode: str, files: int) -> tuple[int, int]:
    """The instructions of one process and the number of files it read."""
    env = dict(os.environ, PYTHONPATH=src)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-c", PROGRAM, directory, mode, str(files)]
    subprocess.run(argv, env=env, check=True, capture_output=True)  # writes the bytecode
    count, out = callgrind.instructions(argv, env)
    return count, int(out.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--src", action="append", help="a src directory (default: this one)")
    parser.add_argument("--files", type=int, default=5000)
    args = parser.parse_args()
    sources = args.src or [str(ROOT / "src")]
    print(f"{'src':<40} " + " ".join(f"{m:>10}" for m in MODES[1:]) + "   (K a file)")
    for src in sources:
        base, count = instructions(src, args.directory, "read", args.files)
        costs = [instructions(src, args.directory, m, args.files)[0] for m in MODES[1:]]
        row = " ".join(f"{(c - base) / count / 1e3:>10.1f}" for c in costs)
        print(f"{src:<40} {row}   ({count} files)")


if __name__ == "__main__":
    main()
