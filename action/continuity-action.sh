#!/usr/bin/env bash
# The shell logic of the GitHub Action (action.yml at the top of the repository): every step of
# the action that runs a command runs this script, so a test can replay the steps in a shell.
#
#   continuity-action.sh install   the action's own checkout into a virtual environment
#   continuity-action.sh run       check and/or verify; writes the step outputs
#
# Inputs come as INPUT_* variables (the step's env: in action.yml); the range is read from the
# event payload ($GITHUB_EVENT_PATH) unless INPUT_RANGE is given. `run` exits 0 once it has
# written its outputs, even with findings (code=1) or an error (code=2): the action uploads
# SARIF first, then its last step fails the job with that code.
set -uo pipefail

ZEROS=0000000000000000000000000000000000000000

fail() { # message [hint]: an error annotation, the reason on stderr, exit 2
  echo "::error title=continuity::$1${2:+ (hint: $2)}"
  echo "continuity: $1" >&2
  if [ -n "${2:-}" ]; then echo "hint: $2" >&2; fi
  exit 2
}

output() { echo "$1=$2" >> "${GITHUB_OUTPUT:-/dev/null}"; }

install() {
  local venv="${RUNNER_TEMP:-/tmp}/continuity-checks-venv"
  "${INPUT_PYTHON:-python3}" -m venv "$venv" \
    || fail "cannot make a virtual environment with ${INPUT_PYTHON:-python3}" \
      "set the action's python input to a Python 3.10 or later, or run actions/setup-python first"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH" \
    || fail "cannot install continuity-checks from $GITHUB_ACTION_PATH"
  echo "CONTINUITY_PYTHON=$venv/bin/python" >> "${GITHUB_ENV:-/dev/null}"
  "$venv/bin/python" -m continuity_checks --version
}

event() { # a field of the event payload by dotted path, empty when absent
  "$PY" - "${GITHUB_EVENT_PATH:-}" "$1" <<'PYTHON'
import json, sys
try:
    with open(sys.argv[1], encoding="utf-8") as stream:
        value = json.load(stream)
except (OSError, ValueError):
    value = None
for key in sys.argv[2].split("."):
    value = value.get(key) if isinstance(value, dict) else None
print("" if value is None or isinstance(value, (dict, list)) else value)
PYTHON
}

against_default() { # reason: sets the caller's base so that the branch is judged by what it
  local default      # adds to the default branch; the default branch itself, by all its history
  default=$(event repository.default_branch)
  [ -n "$default" ] || fail "$1, and the event names no default branch" \
    "give the action's range input, e.g. range: origin/main..HEAD"
  if [ "${GITHUB_REF:-}" = "refs/heads/$default" ]; then base=""; else base="origin/$default"; fi
}

rewritten() { # commit: true when a complete (not shallow) checkout does not hold it
  local root="${INPUT_ROOT:-.}"
  ! git -C "$root" cat-file -e "$1^{commit}" 2>/dev/null \
    && [ "$(git -C "$root" rev-parse --is-shallow-repository 2>/dev/null)" = false ]
}

ci_range() { # sets RANGE (empty: nothing to verify, with NOTHING saying why)
  RANGE="${INPUT_RANGE:-}" NOTHING=""
  [ -n "$RANGE" ] && return
  local base head
  case "${GITHUB_EVENT_NAME:-}" in
    pull_request | pull_request_target)
      base=$(event pull_request.base.sha) head=$(event pull_request.head.sha) ;;
    merge_group)
      base=$(event merge_group.base_sha) head=$(event merge_group.head_sha) ;;
    push)
      base=$(event before) head=$(event after)
      if [ "$head" = "$ZEROS" ]; then
        NOTHING="the push deleted ${GITHUB_REF:-a ref}: no commits to verify"
        return
      fi
      if [ "$base" = "$ZEROS" ]; then
        # a new branch: judged by what it adds to the default branch (every remote-tracking
        # branch of the checkout includes the new one, so "not on any" would be nothing)
        against_default "a new branch"
      elif rewritten "$base"; then
        # a force push: the old head is on no ref the checkout fetched, so before..after cannot
        # be walked; the branch is judged as if new (fetch-depth would not bring it back)
        echo "::notice title=continuity verify::the push rewrote ${GITHUB_REF:-the branch}:" \
          "its previous head ${base:0:12} is not in the checkout; verifying the branch as" \
          "if it were new"
        against_default "a force push"
      fi ;;
    *)
      fail "no range to verify for a ${GITHUB_EVENT_NAME:-(unnamed)} event" \
        "give the action's range input, e.g. range: origin/main..HEAD, or mode: check" ;;
  esac
  [ -n "$head" ] || fail "the ${GITHUB_EVENT_NAME} event payload has no head commit" \
    "give the action's range input"
  RANGE="${base:+$base..}$head"
}

sarif_summary() { # the findings of a SARIF file, one line each, for the log
  "$PY" - "$1" <<'PYTHON'
import json, sys
with open(sys.argv[1], encoding="utf-8") as stream:
    results = [r for run in json.load(stream)["runs"] for r in run["results"]]
for r in results:
    where = r["locations"][0]["physicalLocation"] if r.get("locations") else {}
    path = where.get("artifactLocation", {}).get("uri", "")
    line = where.get("region", {}).get("startLine")
    print(f"{path}{f':{line}' if line else ''}: {r['ruleId']} {r['message']['text']}")
print(f"{len(results)} finding(s), written for code scanning to {sys.argv[1]}")
PYTHON
}

WORST=0

one() { # name, arguments of continuity: run it, keep the worst exit code
  local name="$1" code err
  shift
  err=$(mktemp)
  echo "::group::continuity $*"
  if [ "${INPUT_SARIF:-false}" = true ]; then
    local file="$SARIF_DIR/$name.sarif"
    "$PY" -m continuity_checks "$@" --format sarif > "$file" 2> "$err"
    code=$?
    if [ "$code" -le 1 ]; then
      sarif_summary "$file"
      output "sarif-$name" "$file"
    fi
  else
    "$PY" -m continuity_checks "$@" --format "${INPUT_FORMAT:-github}" 2> "$err"
    code=$?
  fi
  cat "$err" >&2
  echo "::endgroup::"
  if [ "$code" -ge 2 ]; then
    # exit 2 (a shallow clone, an unknown revision, a bad configuration) is never a pass
    echo "::error title=continuity $name::$(grep -m1 '^continuity:' "$err" | cut -c13-)$(grep -m1 '^hint:' "$err" | sed 's/^hint:/ (hint:/;s/$/)/')"
  fi
  rm -f "$err"
  if [ "$code" -gt "$WORST" ]; then WORST=$code; fi
}

run() {
  PY="${CONTINUITY_PYTHON:-python3}"
  local mode="${INPUT_MODE:-both}" root="${INPUT_ROOT:-.}"
  case "$mode" in check | verify | both) ;; *)
    fail "mode: expected check, verify or both, found '$mode'" ;;
  esac
  case "${INPUT_SARIF:-false}" in true | false) ;; *)
    fail "sarif: expected true or false, found '${INPUT_SARIF}'" ;;
  esac
  SARIF_DIR="${RUNNER_TEMP:-/tmp}/continuity-sarif"
  mkdir -p "$SARIF_DIR"
  if [ "$mode" != check ]; then
    ci_range  # before any check runs: a missing range is an error of its own
  fi
  if [ "$mode" != verify ]; then
    one check check --all --root "$root"
  fi
  if [ "$mode" != check ]; then
    if [ -z "$RANGE" ]; then
      echo "::notice title=continuity verify::$NOTHING"
    else
      output range "$RANGE"
      one verify verify --root "$root" --range "$RANGE" ${INPUT_SHARD:+--shard "$INPUT_SHARD"}
    fi
  fi
  output code "$WORST"
}

case "${1:-}" in
  install) install ;;
  run) run ;;
  *) fail "usage: continuity-action.sh install|run" ;;
esac
