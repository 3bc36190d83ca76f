"""The pre-commit hooks: the manifest is generated from the registry, pre-commit accepts it, every
entry runs a real command, and (slow, needs PyPI) the hooks work through ``pre-commit try-repo``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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

REPO = Path(__file__).resolve().parents[1]


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
    assert check.command == ["continuity", "check"]
    assert check.pass_filenames is not False
    assert check.files is None and check.types == (), "AGENTS.md, *.jsonl, *.tmp matter too"

    deltas = by_id["check-conversation-deltas"]
    assert deltas.command == ["continuity", "check", "--family", "deltas"]
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

    verify = by_id["continuity-verify"]
    assert verify.command[:2] == ["continuity", "verify"]
    assert set(verify.stages) == {"pre-push", "manual"}
    assert verify.always_run is True
    assert verify.pass_filenames is False


def _pending(hook: Hook) -> list[pytest.MarkDecorator]:
    if hook.id == "continuity-verify":
        return [
            pytest.mark.xfail(
                strict=True,
                reason="`continuity verify --from-env` is not implemented yet; once it is, "
                "delete this xfail (tests/test_hooks.py, _pending)",
            )
        ]
    return []


@pytest.mark.parametrize("hook", [pytest.param(h, id=h.id, marks=_pending(h)) for h in HOOKS])
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


# --- the real thing: pre-commit try-repo against a temporary repository -------------------------

GOOD = (
    ".deltalayer/changes/2026-10-01T09-00-00p00-00--codex.json",
    '{"started_at":"2026-10-01T09:00:00+00:00","updated_at":"2026-10-01T09:30:00+00:00",'
    '"source":"codex","changes":["Exports write UTF-8 with a final newline."]}\n',
)
BAD = (
    ".deltalayer/changes/2026-10-02T09-00-00p00-00--claude.json",
    '{"started_at":"2026-10-02T09:00:00+00:00","updated_at":"yesterday",'
    '"source":"claude","changes":[42]}\n',
)
FILE_HOOKS = [h for h in HOOKS if "pre-push" not in h.stages]


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _try_repo(repo: Path, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "--files", *files],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _result_of(output: str, hook: Hook) -> str:
    for line in output.splitlines():
        if line.startswith(hook.name + "..."):
            return line.rsplit(".", 1)[-1].strip()
    raise AssertionError(f"no result line for {hook.name!r} in:\n{output}")


@pytest.mark.slow
def test_pre_commit_try_repo_passes_good_and_fails_bad_deltas(tmp_path: Path) -> None:
    """Builds the hook environment from this repository (needs PyPI): ``nox -s slow``."""
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    examples = REPO / "examples" / "deltalayer"
    for name in ("AGENTS.md", "PROJECT.md"):
        (repo / name).write_bytes((examples / name).read_bytes())
    for rel, content in (GOOD, BAD):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content, encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "deltas")

    good = _try_repo(repo, GOOD[0], "AGENTS.md")
    assert good.returncode == 0, good.stdout + good.stderr
    for hook in FILE_HOOKS:
        assert _result_of(good.stdout, hook) == "Passed"

    bad = _try_repo(repo, BAD[0])
    assert bad.returncode == 1, bad.stdout + bad.stderr
    for hook in FILE_HOOKS:
        assert _result_of(bad.stdout, hook) == "Failed"
    assert "DL103" in bad.stdout and BAD[0] in bad.stdout
