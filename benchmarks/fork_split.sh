#!/bin/bash
# Instructions of a `continuity` command that forks workers, process by process: the process
# before its first fork, the same process after it, and each worker from zero (callgrind's
# --dump-before=fork splits the count at the fork; a worker otherwise inherits it).
#
#   benchmarks/fork_split.sh SRC DIR ARGS...    # e.g. SRC=src DIR=<10,000 deltas> check --all -q
#
# SRC goes on PYTHONPATH; one warm-up run writes the bytecode first. PYTHON picks the interpreter.
set -euo pipefail
src=$1 dir=$2
shift 2
python=${PYTHON:-python}
unset PYTHONDONTWRITEBYTECODE  # the warm-up run must leave the bytecode
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$dir"
PYTHONPATH=$src "$python" -m continuity_checks "$@" >/dev/null 2>&1 || true
PYTHONPATH=$src valgrind --tool=callgrind --dump-before=fork --callgrind-out-file="$out/out.%p" \
    "$python" -m continuity_checks "$@" >/dev/null 2>&1 || true
for file in "$out"/out.*; do
    total=$(grep -E '^(summary|totals):' "$file" | head -1 | awk '{print $2}')
    echo "$(basename "$file") $total"
done
