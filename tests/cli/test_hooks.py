"""The pre-commit hooks: the manifest is generated from the registry, pre-commit accepts it, every
entry runs a real command, and (slow, needs PyPI) the hooks work through ``pre-commit try-repo``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.hooks import HOOKS, MANIFEST, Hook, render, scalar
from continuity_checks.hooks.__main__ import main as hooks_main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def test_manifest_is_generated_from_the_registry() -> None:
    committed = (REPO / MANIFEST).read_text(encoding="utf-8")
    assert committed == render(), (
        "run: python -m continuity_checks.hooks --write .pre-commit-hooks.yaml"
    )


def test_check_option_reports_a_stale_manifest(tmp_path: Path) -> None:
    target = tmp_path / MANIFEST
    assert hooks_main(["--write", str(target)]) == 0
    assert hooks_main(["--check", str(target)]) == 0
    target.write_text(render().replace("continuity-check", "renamed"), encoding="utf-8")
    assert hooks_main(["--check", str(target)]) == 1


def test_rendered_yaml_reads_back_as_the_registry() -> None:
    loaded = yaml.safe_load(render())
    expected = [
        {key: list(value) if isinstance(value, tuple) else value for key, value in hook.items()}
        for hook in HOOKS
    ]
    assert loaded == expected


def test_pre_commit_accepts_the_manifest() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(REPO / MANIFEST)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_required_hooks_are_there() -> None:
    by_id = {hook.id: hook for hook in HOOKS}
    assert len(by_id) == len(HOOKS), "hook ids must be unique"

    check = by_id["continuity-check"]
    assert check.command == ["continuity", "check", "--staged"]
    assert check.pass_filenames is not False
    assert check.always_run is True, "a commit that only deletes a delta passes no file name"
    assert check.files is None and check.types == (), "AGENTS.md, *.jsonl, *.tmp matter too"

    deltas = by_id["check-conversation-deltas"]
    assert deltas.command == ["continuity", "check", "--staged", "--family", "deltas"]
    assert deltas.files is not None
    pattern = re.compile(deltas.files)
    for path in (
        ".deltalayer/changes/2026-09-21T16-20-00p08-00--agent.json",
        "sub/project/.deltalayer/changes/x.frozen.json",
        ".deltalayer/changes/.x.json.abc123.tmp",
        ".deltalayer/changes.jsonl",
        "AGENTS.md",
        "docs/AGENTS.md",
    ):
        assert pattern.search(path), path
    for path in ("src/app.py", "README.md", "NOT_AGENTS.md.bak", "deltalayer/x.json"):
        assert not pattern.search(path), path

    # the per-family hooks are opt-in: try-repo and a config listing every hook would
    # otherwise report each finding twice, once from continuity-check and once from them
    for hook in HOOKS:
        if "--family" in hook.command:
            assert hook.stages == ("manual",), hook.id
            # pre-commit passes no name for a deleted file: `files` alone would skip a commit
            # that only deletes a delta (tests/core/test_git_situations.py, with real pre-commit)
            assert hook.always_run is True, hook.id

    verify = by_id["continuity-verify"]
    assert verify.command[:2] == ["continuity", "verify"]
    assert set(verify.stages) == {"pre-push", "manual"}
    assert verify.always_run is True
    assert verify.pass_filenames is False


@pytest.mark.parametrize("hook", HOOKS, ids=[h.id for h in HOOKS])
def test_every_entry_is_a_real_command(hook: Hook) -> None:
    """``continuity <sub> --help`` works and lists every option the entry uses."""
    program, subcommand, *arguments = hook.command
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    assert program in scripts, f"{program} is not a console script of this package"
    result = subprocess.run(
        [sys.executable, "-m", "continuity_checks", subcommand, "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for word in arguments:
        if word.startswith("--"):
            assert word in result.stdout, f"{hook.entry}: {word} is not an option of {subcommand}"


def test_verify_hook_takes_the_range_pre_commit_exports(tmp_path: Path) -> None:
    """The pre-push hook passes no range: ``continuity verify`` must read PRE_COMMIT_FROM_REF and
    PRE_COMMIT_TO_REF, and refuse (exit 2) when there is no range at all."""
    verify = next(h for h in HOOKS if h.id == "continuity-verify")
    history = _history(tmp_path)
    repo, shas = history.path, history.shas
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRE_COMMIT")}

    def run(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "continuity_checks", *verify.command[1:]],
            cwd=repo,
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=False,
        )

    good = run(PRE_COMMIT_FROM_REF=shas[0], PRE_COMMIT_TO_REF=shas[1])
    assert good.returncode == 0, good.stdout + good.stderr
    bad = run(PRE_COMMIT_FROM_REF=shas[1], PRE_COMMIT_TO_REF=shas[2])
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "DL205" in bad.stdout and shas[2][:7] in bad.stdout
    none = run()
    assert none.returncode == 2, none.stdout + none.stderr


@given(st.text())
def test_any_string_survives_the_yaml_emitter(text: str) -> None:
    assert yaml.safe_load(f"key: {scalar(text)}\n") == {"key": text}
    assert yaml.safe_load(f"key: [{scalar(text, in_flow=True)}, x]\n") == {"key": [text, "x"]}


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("continuity check", "continuity check"),
        ("yes", "'yes'"),
        ("3.2.0", "'3.2.0'"),
        ("a: b", "'a: b'"),
        ("it's", "'it''s'"),
        ("", "''"),
        ("two\nlines", '"two\\nlines"'),
        (True, "true"),
    ],
)
def test_scalar_quoting(value: str | bool, written: str) -> None:
    assert scalar(value) == written


# --- a temporary repository: good and bad files, a good and a bad push ------------------------

DELTA = ".deltalayer/changes/2026-10-01T09-00-00p00-00--codex.json"
BAD = ".deltalayer/changes/2026-10-02T09-00-00p00-00--claude.json"
BAD_CONTENT = (
    '{"started_at":"2026-10-02T09:00:00+00:00","updated_at":"yesterday",'
    '"source":"claude","changes":[42]}\n'
)


def _delta(updated_at: str, *changes: str) -> str:
    record = {
        "started_at": "2026-10-01T09:00:00+00:00",
        "updated_at": updated_at,
        "source": "codex",
        "changes": list(changes),
    }
    return json.dumps(record, separators=(",", ":")) + "\n"


@dataclass
class History:
    path: Path
    shas: list[str]


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def _history(tmp_path: Path) -> History:
    """Three commits: A creates a valid delta, B updates it (a good push A..B), C moves its
    updated_at back (a bad push B..C: DL205, though every file is valid). BAD, a delta that
    fails file checks, lies in the work tree, never committed."""
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    examples = REPO / "examples" / "deltalayer"
    for name in ("AGENTS.md", "PROJECT.md"):
        (repo / name).write_bytes((examples / name).read_bytes())
    (repo / DELTA).parent.mkdir(parents=True)
    versions = [
        _delta("2026-10-01T09:30:00+00:00", "Exports write UTF-8."),
        _delta("2026-10-01T10:30:00+00:00", "Exports write UTF-8.", "CSV uses ISO dates."),
        _delta("2026-10-01T09:45:00+00:00", "Exports write UTF-8.", "CSV uses ISO dates."),
    ]
    shas = []
    for number, content in enumerate(versions):
        (repo / DELTA).write_text(content, encoding="utf-8")
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", f"commit {number}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    (repo / BAD).write_text(BAD_CONTENT, encoding="utf-8")
    return History(repo, shas)


# --- the real thing: pre-commit try-repo ---------------------------------------------------------


def _try_repo(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _results(output: str) -> dict[str, str]:
    """Hook name -> Passed/Failed, from pre-commit's report lines. Hooks with no files to
    check (the other families' hooks) are left out."""
    results = {}
    for hook in HOOKS:
        for line in output.splitlines():
            if line.startswith(hook.name + "..."):
                result = line.rsplit(".", 1)[-1].strip().removeprefix("(no files to check)")
                if result != "Skipped":
                    results[hook.name] = result
    return results


@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    """The hooks as a user meets them, built from this repository (needs PyPI): ``nox -s slow``.
    Commit stage: the good delta passes, the bad one fails. Push stage: a good push passes, a
    push with a history error fails in the verify hook only."""
    history = _history(tmp_path)
    repo, shas = history.path, history.shas
    check, deltas, verify = (
        next(h.name for h in HOOKS if h.id == i)
        for i in ("continuity-check", "check-conversation-deltas", "continuity-verify")
    )
    deltas_id = "check-conversation-deltas"

    # the per-family hooks are opt-in (stages: [manual]): only continuity-check runs at commit
    good = _try_repo(repo, "--files", DELTA, "AGENTS.md")
    assert good.returncode == 0, good.stdout + good.stderr
    assert _results(good.stdout) == {check: "Passed"}

    bad = _try_repo(repo, "--files", BAD)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert _results(bad.stdout) == {check: "Failed"}
    assert "DL103" in bad.stdout and BAD in bad.stdout

    push = ("--hook-stage", "pre-push", "--from-ref")
    good_push = _try_repo(repo, *push, shas[0], "--to-ref", shas[1])
    assert good_push.returncode == 0, good_push.stdout + good_push.stderr
    assert _results(good_push.stdout) == {check: "Passed", verify: "Passed"}

    bad_push = _try_repo(repo, *push, shas[1], "--to-ref", shas[2])
    assert bad_push.returncode == 1, bad_push.stdout + bad_push.stderr
    assert _results(bad_push.stdout) == {check: "Passed", verify: "Failed"}
    assert "DL205" in bad_push.stdout

    # a family hook chosen by hand still works
    manual = _try_repo(repo, deltas_id, "--hook-stage", "manual", "--files", BAD)
    assert manual.returncode == 1, manual.stdout + manual.stderr
    assert _results(manual.stdout) == {deltas: "Failed"}
    assert "DL103" in manual.stdout


@pytest.mark.slow
def test_try_repo_all_files_prints_each_finding_once(tmp_path: Path) -> None:
    """``pre-commit try-repo REPO --all-files``, as the README suggests: every hook the manifest
    offers for the commit stage runs, and each finding is printed once (the per-family hooks
    would print it again: they are opt-in)."""
    repo = _history(tmp_path).path
    _git(repo, "add", BAD)
    result = _try_repo(repo, "--all-files")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if " DL10" in line]
    assert lines and len(lines) == len(set(lines)), result.stdout
    assert sum(BAD in line and "DL103" in line for line in lines) == 1, result.stdout
    assert len(re.findall(r"\d+ files? checked", result.stdout)) == 1, result.stdout
