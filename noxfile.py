"""Development sessions: ``nox -s lint tests`` (the default), ``slow``, ``release``, ``bench``,
``fuzz``, ``crash``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "src"))

from continuity_checks.hooks import HOOKS  # noqa: E402  (stdlib only: no install needed)

nox.options.sessions = ["lint", "tests"]
nox.options.error_on_external_run = True


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite, as CI runs it (README, .ci/run)."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, mypy (strict, configured in pyproject.toml)."""
    session.install("-e", ".", "ruff", "mypy")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session
def slow(session: nox.Session) -> None:
    """The tests marked slow (real pre-commit try-repo: needs PyPI to build the hook env)."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "-m", "slow", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Every benchmarks/bench_*.py, bench_budget.py among them (every row of the performance
    budget, side by side with the peers); pass ``-- --write-doc docs/performance.md`` to
    bench_check to record its numbers (other scripts take their own options; run them
    directly for that). orjson is installed here only: the peer loop of bench_budget uses it,
    the package does not."""
    session.install("-e", ".", "check-jsonschema", "orjson")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        args = session.posargs if script.name == "bench_check.py" else []
        session.run("python", str(script), *args)


@nox.session
def fuzz(session: nox.Session) -> None:
    """At least 100,000 generated inputs per family (files, configurations, git histories, the
    real CLI): tracebacks, hangs and silent passes must all be zero (docs/reliability.md).
    Options go to ``python -m tests.fuzz`` (``-- --per-family 1000`` for a quick run)."""
    session.install("-e", ".[test]")
    args = session.posargs or ["--per-family", "100000"]
    session.run("python", "-m", "tests.fuzz", *args, env={"PYTHONPATH": str(ROOT)})


@nox.session
def crash(session: nox.Session) -> None:
    """SIGKILL of every writing helper command at each of its write-related system calls
    (strace fault injection); every file must be its old or new version and ``check --all``
    must pass after the next operation (docs/reliability.md)."""
    if shutil.which("strace") is None:
        session.error("the crash session needs strace (apt-get install strace)")
    session.install("-e", ".[test]")
    session.run("python", "-m", "tests.fuzz.crash", *session.posargs, env={"PYTHONPATH": str(ROOT)})


# --- release ---------------------------------------------------------------------------------


@nox.session
def release(session: nox.Session) -> None:
    """Build sdist and wheel, twine check, install the wheel in a fresh venv and run the quick
    start with it, then run this repository's hooks through ``pre-commit try-repo`` against a
    temporary repository: good deltas must pass and bad ones must fail."""
    tmp = Path(session.create_tmp()).resolve()
    dist = tmp / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.install("build", "twine", "pre-commit")
    session.run("python", "-m", "build", "--outdir", str(dist), str(ROOT))
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        session.error(f"expected one wheel and one sdist in {dist}, found {wheels + sdists}")
    session.run("twine", "check", "--strict", str(wheels[0]), str(sdists[0]))

    # the wheel alone, in a venv that has nothing else
    venv = tmp / "wheel-venv"
    shutil.rmtree(venv, ignore_errors=True)
    session.run("python", "-m", "venv", str(venv))
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python, continuity = str(bindir / "python"), str(bindir / "continuity")
    session.run(python, "-m", "pip", "install", "--quiet", str(wheels[0]), external=True)
    with session.chdir(tmp):  # not the source tree: the import must come from the wheel
        session.run(
            python,
            "-c",
            "import continuity_checks, sys; f = continuity_checks.__file__; "
            "sys.exit(0 if 'site-packages' in f else f'imported from {f}')",
            external=True,
        )
    with session.chdir(ROOT):
        session.run(continuity, "check", "--all", "--root", "examples", external=True)
        session.run(continuity, "schema", "list", external=True)

    _try_repo(session, tmp / "try-repo")


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "release",
        "GIT_AUTHOR_EMAIL": "release@example.invalid",
        "GIT_COMMITTER_NAME": "release",
        "GIT_COMMITTER_EMAIL": "release@example.invalid",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode().strip()


def _delta(updated_at: str, *changes: str) -> str:
    record = {
        "started_at": "2026-10-01T09:00:00+00:00",
        "updated_at": updated_at,
        "source": "codex",
        "changes": list(changes),
    }
    return json.dumps(record, separators=(",", ":")) + "\n"


GOOD = ".deltalayer/changes/2026-10-01T09-00-00p00-00--codex.json"
BAD = ".deltalayer/changes/2026-10-02T09-00-00p00-00--claude.json"


def _try_repo(session: nox.Session, repo: Path) -> None:
    """Commits A (a valid delta), B (a valid update: a good push A..B), C (updated_at goes back:
    a bad push B..C); BAD in the work tree fails the file checks."""
    shutil.rmtree(repo, ignore_errors=True)
    (repo / GOOD).parent.mkdir(parents=True)
    _git(repo, "init", "-q")
    for name in ("AGENTS.md", "PROJECT.md"):
        shutil.copyfile(ROOT / "examples" / "deltalayer" / name, repo / name)
    shas = []
    for updated_at, changes in (
        ("2026-10-01T09:30:00+00:00", ["Exports write UTF-8."]),
        ("2026-10-01T10:30:00+00:00", ["Exports write UTF-8.", "CSV uses ISO dates."]),
        ("2026-10-01T09:45:00+00:00", ["Exports write UTF-8.", "CSV uses ISO dates."]),
    ):
        (repo / GOOD).write_text(_delta(updated_at, *changes), encoding="utf-8")
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", f"delta updated at {updated_at}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    (repo / BAD).write_text(
        '{"started_at":"2026-10-02T09:00:00+00:00","updated_at":"yesterday",'
        '"source":"claude","changes":[42]}\n',
        encoding="utf-8",
    )

    def try_repo(*args: str, fails: bool, expect: dict[str, str], rule: str | None) -> None:
        output = session.run(
            "pre-commit",
            "try-repo",
            str(ROOT),
            *args,
            success_codes=[1] if fails else [0],
            silent=True,
        )
        assert isinstance(output, str)
        print(output)
        results = {
            line.split("...", 1)[0]: line.rsplit(".", 1)[-1].removeprefix("(no files to check)")
            for line in output.splitlines()
            # "Skipped": a hook with no file to check
            if "..." in line and line.rstrip().endswith(("Passed", "Failed"))
        }
        if results != expect:
            session.error(f"pre-commit try-repo {' '.join(args)}: expected {expect}, got {results}")
        if rule and rule not in output:
            session.error(f"pre-commit try-repo {' '.join(args)}: expected {rule} in the output")

    names = {hook.id: hook.name for hook in HOOKS}
    # the per-family hooks are opt-in (stages: [manual]): at commit and push only
    # continuity-check (and verify, at push) run, so each finding is printed once
    check, deltas, verify = (
        names["continuity-check"],
        names["check-conversation-deltas"],
        names["continuity-verify"],
    )
    with session.chdir(repo):
        try_repo("--files", GOOD, "AGENTS.md", fails=False, expect={check: "Passed"}, rule=None)
        try_repo("--files", BAD, fails=True, expect={check: "Failed"}, rule="DL103")
        push = ("--hook-stage", "pre-push", "--from-ref")
        try_repo(
            *push,
            shas[0],
            "--to-ref",
            shas[1],
            fails=False,
            expect={check: "Passed", verify: "Passed"},
            rule=None,
        )
        try_repo(
            *push,
            shas[1],
            "--to-ref",
            shas[2],
            fails=True,
            expect={check: "Passed", verify: "Failed"},
            rule="DL205",
        )
        # a family hook chosen by hand
        try_repo(
            "check-conversation-deltas",
            "--hook-stage",
            "manual",
            "--files",
            BAD,
            fails=True,
            expect={deltas: "Failed"},
            rule="DL103",
        )
    session.log("pre-commit try-repo: good deltas and a good push pass, bad ones fail")


if __name__ == "__main__":
    sys.exit("run with nox: nox -s release")
