"""What a new user meets: the README's two commands, CI running the same test command, the
documented commands/keys/exit codes, the project's own pre-commit configuration, the CI recipe."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from continuity_checks.checks import declarations, names
from continuity_checks.cli import commands
from continuity_checks.core.config import LIMIT_KEYS, TOP_KEYS
from tests.helpers.markdown import code_blocks

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
COMMANDS_PAGE = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
CONFIGURATION_PAGE = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
CI_RUN = REPO / ".ci" / "run"


def setup_commands() -> tuple[str, str]:
    """The two commands at the top of the README: the only code blocks before the first
    ``## `` heading, one command each."""
    top = README.split("\n## ", 1)[0]
    blocks = code_blocks(top)
    assert len(blocks) == 2, f"expected exactly two code blocks before the first section: {blocks}"
    commands = []
    for _, body in blocks:
        lines = [ln for ln in body.splitlines() if ln.strip() and not ln.startswith("#")]
        assert len(lines) == 1, f"expected one command per set-up block, found {lines}"
        commands.append(lines[0].strip())
    return commands[0], commands[1]


def test_readme_opens_with_a_paragraph_then_the_two_commands() -> None:
    lines = README.splitlines()
    assert lines[0].startswith("# ")
    first_block = README.index("```")
    intro = README[len(lines[0]) : first_block].strip()
    assert intro, "one paragraph saying what the tool is for comes before the commands"
    main_job, test_command = setup_commands()
    assert main_job.startswith("pip install ")
    assert "continuity check --all --root examples" in main_job
    assert test_command.startswith("pip install ")
    assert "pytest" in test_command


def test_ci_runs_the_readme_test_command() -> None:
    _, test_command = setup_commands()
    script = CI_RUN.read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in script
    assert os.access(CI_RUN, os.X_OK), ".ci/run must be executable"
    commands = [ln.strip() for ln in script.splitlines() if ln.strip() and not ln.startswith("#")]
    assert test_command in commands, f".ci/run does not run {test_command!r}"
    # nothing after the test command: its exit status is the script's
    assert commands[-1] == test_command


def test_ci_installs_only_with_pip() -> None:
    script = CI_RUN.read_text(encoding="utf-8")
    for tool in ("apt-get", "apt ", "brew", "conda", "uv ", "poetry", "nox", "tox", "sudo"):
        assert tool not in script, f".ci/run must not need {tool.strip()}"


def test_the_main_job_is_clean_on_the_shipped_examples() -> None:
    main_job, _ = setup_commands()
    job = main_job.split("&&", 1)[1].split()
    assert job[0] == "continuity"
    result = subprocess.run(
        [sys.executable, "-m", "continuity_checks", *job[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no problems" in result.stdout, result.stdout


def test_setup_extras_exist() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    for command in setup_commands():
        for word in shlex.split(command):
            match = re.fullmatch(r"\.\[([\w,-]+)\]", word)
            if match:
                for extra in match.group(1).split(","):
                    assert extra in extras, f"README installs unknown extra {extra!r}"
    assert "pytest" in " ".join(extras["test"])


def test_every_command_is_documented() -> None:
    for name in commands():
        assert f"continuity {name}" in COMMANDS_PAGE, f"docs/commands.md lacks `continuity {name}`"
    assert "docs/commands.md" in README


def test_readme_documents_the_exit_codes() -> None:
    section = README.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in ("| 0 |", "| 1 |", "| 2 |"):
        assert code in section


def test_every_configuration_key_is_documented() -> None:
    section = CONFIGURATION_PAGE
    assert "docs/configuration.md" in README
    assert "[tool.continuity]" in section and ".continuity.toml" in section
    for key in TOP_KEYS:
        assert re.search(rf"^\[{{0,2}}(tool\.continuity\.)?{key}\b", section, re.M), key
    options = [option for d in declarations() for option in d.options]
    for key in (*sorted(LIMIT_KEYS), *options):
        assert re.search(rf"^{key} = ", section, re.M), f"{key} is not documented"
    for family in names():
        assert f"`{family}`" in section
    for value in ("read-only", "append-only", "trailer-or-single", '"trailer"', '"off"'):
        assert value in section


def test_the_configuration_example_is_valid(tmp_path: Path) -> None:
    """The TOML example parses and the configuration loader accepts it."""
    from continuity_checks.checks import build, known, selected
    from continuity_checks.core import config

    section = CONFIGURATION_PAGE
    (toml,) = [body for lang, body in code_blocks(section) if lang == "toml"]
    (tmp_path / "pyproject.toml").write_text(toml, encoding="utf-8")
    loaded = config.load(tmp_path, known())
    build(loaded, selected(loaded))  # family options are checked when the family is built


def _pre_commit_validate(kind: str, path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", f"validate-{kind}", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("doc", ["README.md", "docs/ci.md"])
def test_pre_commit_snippets_are_valid(doc: str, tmp_path: Path) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    snippets = [body for lang, body in code_blocks(text) if lang == "yaml" and "repos:" in body]
    assert snippets
    hook_ids = {hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").open())}
    for number, snippet in enumerate(snippets):
        path = tmp_path / f"snippet{number}.yaml"
        path.write_text(snippet, encoding="utf-8")
        _pre_commit_validate("config", path)
        for repo in yaml.safe_load(snippet)["repos"]:
            if repo["repo"] != "local":
                assert {hook["id"] for hook in repo["hooks"]} <= hook_ids


def test_the_project_runs_ruff_and_its_own_hooks_on_itself() -> None:
    path = REPO / ".pre-commit-config.yaml"
    _pre_commit_validate("config", path)
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    repos = {repo["repo"]: repo for repo in config["repos"]}
    assert "." not in repos, "repo: . is not allowed; use repo: local"
    ruff = repos["https://github.com/astral-sh/ruff-pre-commit"]
    assert {hook["id"] for hook in ruff["hooks"]} >= {"ruff-check", "ruff-format"}
    local = {hook["id"]: hook for hook in repos["local"]["hooks"]}
    assert local["continuity-check"]["entry"] == "continuity check"
    assert local["continuity-verify"]["entry"].startswith("continuity verify")
    assert local["hooks-manifest"]["entry"] == "python -m continuity_checks.hooks --check"


def test_sdist_ships_what_the_tests_read() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    include = pyproject["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    for needed in (
        ".pre-commit-hooks.yaml",
        ".pre-commit-config.yaml",
        ".ci",
        "README.md",
        "action.yml",
        "action",
    ):
        assert needed in include, f"sdist does not include {needed}"


def test_ci_recipe() -> None:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    workflows = [
        yaml.safe_load(body)
        for lang, body in code_blocks(text)
        if lang == "yaml" and "runs-on" in body
    ]
    assert workflows, "docs/ci.md has no GitHub Actions workflow"
    flat = yaml.safe_dump(workflows)
    assert "fetch-depth: 0" in flat
    assert "continuity check --all" in flat
    plain = next(
        step
        for workflow in workflows
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if "pull request" in step.get("name", "")
    )
    assert plain["run"] == 'continuity verify --range "$BASE..$HEAD" --format github'
    assert plain["env"] == {
        "BASE": "${{ github.event.pull_request.base.sha }}",
        "HEAD": "${{ github.event.pull_request.head.sha }}",
    }


@pytest.mark.parametrize("path", ["README.md", "docs/ci.md"])
def test_docs_name_only_real_hook_ids(path: str) -> None:
    text = (REPO / path).read_text(encoding="utf-8")
    hook_ids = {hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").open())}
    for found in re.findall(r"- id: ([\w-]+)", text):
        assert found in hook_ids or found.startswith(("ruff", "hooks-")), found


def test_the_readme_sample_is_real_output(tmp_path: Path) -> None:
    """The README's sample finding is what the tool prints for the change it describes."""
    (sample,) = [body for lang, body in code_blocks(README) if lang == "console"]
    command, *expected = sample.splitlines()
    assert command == "$ continuity check --all"
    shutil.copytree(REPO / "examples" / "deltalayer", tmp_path, dirs_exist_ok=True)
    changes = tmp_path / ".deltalayer" / "changes"
    claude = changes / "2026-09-22T14-00-00p02-00--claude.json"
    text = claude.read_text(encoding="utf-8")
    claude.write_text(
        re.sub(r'"updated_at":"[^"]*"', '"updated_at":"2020-01-01T00:00:00Z"', text),
        encoding="utf-8",
    )
    (changes / "2026-09-23T09-00-00Z--agent.json").write_text(
        '{"started_at":"2026-09-23T09:00:00Z","source":"agent","source":"codex","changes":["x"]}\n',
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = subprocess.run(
        [sys.executable, "-m", "continuity_checks", "check", "--all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout.splitlines() == expected
