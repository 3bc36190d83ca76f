"""``continuity baseline check|verify``: record the findings a repository has today, so that
``check`` and ``verify`` report only new ones."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks import engine
from continuity_checks.cli.args import (
    at_least,
    fail,
    file_path,
    group_usage,
    parse_group,
    parser,
)
from continuity_checks.cli.common import (
    BASELINE_FIX,
    WORKER_HINT,
    add_where,
    load_config,
    progress_line,
)
from continuity_checks.core import baseline as baseline_file
from continuity_checks.core.config import ConfigError, project_root
from continuity_checks.core.git.errors import GitError
from continuity_checks.core.parallel import WorkerFailed

if TYPE_CHECKING:
    import argparse

    from continuity_checks.core.findings import Report

OUTPUT_HELP = "Where to write (default: .continuity-baseline.json at the top of the repository)."

DESCRIPTION = """\
Write the baseline file: the findings a repository already has.

`check` and `verify` then hide what it lists and report only new findings. Each subcommand
rewrites its own section (file mode, history mode) and keeps the other one: a finding that was
fixed drops out on the next write.
"""


def main(argv: Sequence[str]) -> int:
    group = parser("baseline", DESCRIPTION)
    check = group.add_command(
        "check",
        "Record what `continuity check --all` finds in the whole repository (every configured\n"
        "family) as the file-mode section of the baseline.",
    )
    check.add_argument(
        "--jobs",
        type=at_least(1),
        metavar="N",
        help="Processes that check the files (default: one per CPU from 2,000 files on).",
    )
    verify = group.add_command(
        "verify",
        "Record what `continuity verify` finds in a range (default: all of HEAD's history) as\n"
        "the history-mode section of the baseline.",
    )
    verify.add_argument(
        "--range",
        dest="revision_range",
        metavar="BASE..HEAD",
        default="HEAD",
        help="Commits whose findings to record: BASE..HEAD, or one revision for all its "
        "history (default: %(default)s).",
    )
    for each in (check, verify):
        add_where(each)
        _add_output(each)
    args = parse_group(group, argv)
    if args.command is None:
        return group_usage(group)
    root = args.root or Path(".")
    if args.command == "check":
        return baseline_check(args.jobs, root, args.config_path, args.output)
    return baseline_verify(args.revision_range, root, args.config_path, args.output)


def _add_output(command: argparse.ArgumentParser) -> None:
    command.add_argument("-o", "--output", type=file_path, metavar="FILE", help=OUTPUT_HELP)


def baseline_check(
    jobs: int | None, root: Path, config_path: Path | None, output: Path | None
) -> int:
    """``continuity baseline check``."""
    top = project_root(root)
    config = load_config(top, config_path)
    progress = progress_line("text", False, "baseline check", "file")
    try:
        report = engine.check(top, config, under=("",), jobs=jobs, progress=progress)
    except ConfigError as exc:
        raise fail(f"configuration error in {exc}") from None
    except WorkerFailed as exc:  # its files were not checked: no baseline of part of them
        raise fail(f"{exc}: not every file was checked", WORKER_HINT) from None
    finally:
        if progress is not None:
            progress.close()
    return _write(
        top, output, "check", report, f"{report.files} file{'s' if report.files != 1 else ''}"
    )


def baseline_verify(
    revision_range: str, root: Path, config_path: Path | None, output: Path | None
) -> int:
    """``continuity baseline verify``."""
    top = project_root(root)
    config = load_config(top, config_path)
    progress = progress_line("text", False, "baseline verify", "commit")
    try:
        report = engine.verify(
            root, config, revision_range, config_at_base=config_path is None, progress=progress
        )
    except ConfigError as exc:
        raise fail(f"configuration error in {exc}") from None
    except GitError as exc:
        raise fail(exc.message, exc.hint) from None
    finally:
        if progress is not None:
            progress.close()
    scope = f"{report.commits} commit{'s' if report.commits != 1 else ''}"
    return _write(top, output, "verify", report, scope)


def _write(top: Path, output: Path | None, section: str, report: Report, scope: str) -> int:
    """Replace ``section`` of the baseline file with the findings of ``report``, keeping the
    other section as it is. An existing file that is not a baseline is left alone (exit 2)."""
    target = output if output is not None else top / baseline_file.FILE_NAME
    try:
        existing = baseline_file.read(target, named=output is not None)
    except baseline_file.BaselineError as exc:
        raise fail(f"baseline error in {exc}; not overwritten", BASELINE_FIX) from None
    sections = {
        name: list(existing.entries(name)) if existing else [] for name in baseline_file.SECTIONS
    }
    before = sum(e.count for e in sections[section])
    sections[section] = list(baseline_file.entries_of(report.distinct()))
    after = sum(e.count for e in sections[section])
    try:
        baseline_file.write(target, sections)
    except OSError as exc:
        raise fail(f"cannot write {target}: {exc.strerror or exc}") from None
    dropped = f", {before} before" if existing is not None else ""
    print(
        f"{target}: {section} section: {after} known finding{'s' if after != 1 else ''} "
        f"in {scope}{dropped}"
    )
    return 0
