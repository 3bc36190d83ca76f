#!/bin/bash
# Instructions of a `continuity` command that forks workers, process by process: the process
# before its first fork, the same process after it, and each worker from zero (callgrind's
# --dump-before=fork splits the count at the fork; a worker otherwise inherits it); then their
# sum and the critical path on CPUS CPUs (default 2): before the fork, then the rest shared out.
#
#   benchmarks/fork_split.sh SRC DIR ARGS...    # e.g. SRC=src DIR=<10,000 deltas> check --all -q
#
# SRC goes on PYTHONPATH; one warm-up run writes the bytecode first. PYTHON picks the interpreter.
# TAIL=1 also splits the first process's count where it waits for each worker to end
# (--dump-before=waitpid; the command must start no other process before the fork) and prints
# its last part: the serial tail, done alone after the last worker ended, and the critical path
# with it alone (before the fork, the rest but the tail shared out, then the tail).
set -euo pipefail
src=$1 dir=$2
shift 2
python=${PYTHON:-python}
cpus=${CPUS:-2}
unset PYTHONDONTWRITEBYTECODE  # the warm-up run must leave the bytecode
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$dir"
PYTHONPATH=$src "$python" -m continuity_checks "$@" >/dev/null 2>&1 || true
tail=()
[ "${TAIL:-0}" = 1 ] && tail=(--dump-before=waitpid)
PYTHONPATH=$src valgrind --tool=callgrind --dump-before=fork "${tail[@]}" --callgrind-out-file="$out/out.%p" \
    "$python" -m continuity_checks "$@" >/dev/null 2>&1 || true
for file in "$out"/out.*; do
    total=$(grep -E '^(summary|totals):' "$file" | head -1 | awk '{print $2}')
    echo "$(basename "$file") $total"
done | awk -v cpus="$cpus" -v tail="${TAIL:-0}" '
    { print; split($1, part, "."); n = $2 }
    part[3] == 1 { before = n; parent = part[2]; next }  # the first dump: up to the first fork
    part[3] != "" { between += n; next }       # between two forks
    { after[part[2]] = n; pids[++count] = part[2] }
    END {
        rest = between
        for (i = 1; i <= count; i++) rest += after[pids[i]]
        if (before == "") { printf "one process: %.1f M\n", rest / 1e6; exit }
        printf "before the fork %.1f M, this process after it %.1f M, workers", before / 1e6, (after[parent] + between) / 1e6
        for (i = 1; i <= count; i++) if (pids[i] != parent) printf " %.1f M", after[pids[i]] / 1e6
        printf "; all %.1f M; critical path on %d CPUs %.1f M\n", (before + rest) / 1e6, cpus, (before + rest / cpus) / 1e6
        if (tail == 1) printf "after the last worker ended (alone) %.1f M; critical path with it alone %.1f M\n", after[parent] / 1e6, (before + (rest - after[parent]) / cpus + after[parent]) / 1e6
    }'
