"""``[[ignore]]`` in the configuration: per-path suppression with its reason, for every family
and both modes, counted in every report; a bad entry is exit 2 naming the file and the key."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.conftest import RunCLI, rules_of, write_tree
from tests.helpers.git import GitRepo, delta, isolate_git, path_of

ALPHA = b"alpha\n"
H_ALPHA = hashlib.sha256(ALPHA).hexdigest()
SUMS = {"a.txt": ALPHA, "SHA256SUMS": f"{H_ALPHA}  gone.txt\n"}
IGNORE = """
[[ignore]]
rules = ["PV103"]
paths = ["SHA256SUMS", "vendor/**"]
reason = "gone.txt is fetched at build time (spec: listed artifacts may be external)"
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_an_ignore_suppresses_its_rule_at_its_paths_and_counts_it(
    tmp_path: Path, run_json: RunCLI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(
        tmp_path,
        {
            **SUMS,
            "vendor/x/SHA256SUMS": f"{H_ALPHA}  lost.txt\n",
            "other/SHA256SUMS": f"{H_ALPHA}  lost.txt\n",
            ".continuity.toml": IGNORE,
        },
    )
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    # the path no ignore names is still reported; the other two are suppressed, and counted
    assert (code, rules_of(report), report["summary"]["suppressed"]) == (
        1,
        [("PV103", "other/SHA256SUMS", 1)],
        2,
    )
    code, out, _ = run(capsys, "check", "--all", "--root", str(tmp_path))
    assert out.endswith(
        "3 files checked: 1 error, 0 warnings; 2 suppressed by [[ignore]] in the configuration\n"
    )
    code, out, _ = run(capsys, "check", "--all", "--root", str(tmp_path), "--format", "sarif")
    assert json.loads(out)["runs"][0]["properties"]["suppressed"] == 2


def test_other_rules_at_an_ignored_path_are_still_reported(
    tmp_path: Path, run_json: RunCLI
) -> None:
    write_tree(
        tmp_path,
        {**SUMS, "SHA256SUMS": f"{H_ALPHA}  gone.txt\n{H_ALPHA[:40]}  a.txt\n", "pyproject.toml":
         IGNORE.replace("[[ignore]]", "[[tool.continuity.ignore]]")},
    )  # fmt: skip
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, rules_of(report), report["summary"]["suppressed"]) == (
        1,
        [("PV102", "SHA256SUMS", 2)],
        1,
    )


def test_ignores_apply_to_history_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    b = path_of("2026-09-21T17-00-00p08-00--codex.json")
    repo.commit("base", {b: delta("2026-09-21T17:00:00+08:00", source="codex")})
    repo.commit("drop B", delete=[b])
    code, report = run_json("verify", "--root", str(repo.path), "--range", "HEAD")
    assert code == 1
    rules = sorted({f["rule"] for f in report["findings"]})
    config = tmp_path / "ignore.toml"
    config.write_text(
        f'[[ignore]]\nrules = {json.dumps(rules)}\npaths = [".deltalayer/changes/*.json"]\n'
        'reason = "the codex conversation was abandoned and removed on purpose"\n'
    )
    code, report = run_json(
        "verify", "--root", str(repo.path), "--range", "HEAD", "--config", str(config)
    )
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["suppressed"] >= 1


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ('rules = ["PV103"]\npaths = ["x"]\n', "ignore[0].reason"),
        ('rules = ["PV103"]\npaths = ["x"]\nreason = "  "\n', "ignore[0].reason"),
        ('rules = ["PV103"]\npaths = ["x"]\nreason = 3\n', "ignore[0].reason"),
        ('paths = ["x"]\nreason = "r"\n', "ignore[0].rules"),
        ('rules = ["PV103"]\nreason = "r"\n', "ignore[0].paths"),
        ('rules = []\npaths = ["x"]\nreason = "r"\n', "ignore[0].rules"),
        ('rules = ["PV103"]\npaths = []\nreason = "r"\n', "ignore[0].paths"),
        ('rules = ["PV999"]\npaths = ["x"]\nreason = "r"\n', "ignore[0].rules"),
        ('rules = "PV103"\npaths = ["x"]\nreason = "r"\n', "ignore[0].rules"),
        ('rules = ["PV103"]\npaths = ["/"]\nreason = "r"\n', "ignore[0].paths"),
        ('rules = ["PV103"]\npaths = ["x"]\nreason = "r"\nwhy = "r"\n', "ignore[0].why"),
    ],
)
def test_a_bad_ignore_is_exit_2_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, key: str
) -> None:
    write_tree(tmp_path, {**SUMS, ".continuity.toml": "[[ignore]]\n" + entry})
    code, out, err = run(capsys, "check", "--all", "--root", str(tmp_path))
    assert (code, out) == (2, "")
    first = err.splitlines()[0]
    assert str(tmp_path / ".continuity.toml") in first and f": {key}: " in first, first
    assert "Traceback" not in err


def test_ignore_must_be_an_array_of_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {**SUMS, ".continuity.toml": '[ignore]\nrules = ["PV103"]\n'})
    code, _, err = run(capsys, "check", "--all", "--root", str(tmp_path))
    assert code == 2 and ": ignore: expected an array of tables" in err
