"""``continuity check``: file mode."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from continuity_checks import engine
from continuity_checks.cli.args import at_least, fail, parse, parser
from continuity_checks.cli.common import (
    WORKER_HINT,
    RunOptions,
    add_run_options,
    baseline_file,
    emit,
    load_config,
    progress_line,
    read_baseline,
)
from continuity_checks.core.config import ConfigError, project_root
from continuity_checks.core.git.errors import GitError
from continuity_checks.core.parallel import WorkerFailed

STDIN_LIMIT_HINT = "give the file's path instead of -, or raise [tool.continuity.limits]"

DESCRIPTION = """\
Check continuity files: the PATHS given (what pre-commit passes; a directory means every file
under it; - reads one file from standard input), or --all.

Findings name files relative to the top of the repository, whose configuration applies, from
any directory inside it. Files given that no family claims are named in a note. Findings the
baseline file knows are hidden, and counted in the summary.
"""


def main(argv: Sequence[str]) -> int:
    command = parser("check", DESCRIPTION)
    command.add_argument("paths", nargs="*", metavar="PATHS")
    command.add_argument(
        "--all",
        dest="all_files",
        action="store_true",
        help="Check every continuity file of the repository, from any directory in it (under "
        "--root when --root is given).",
    )
    command.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="With -, the path the file read from standard input has (what it is checked as).",
    )
    command.add_argument(
        "--staged",
        action="store_true",
        help="Also apply the history rules to what is staged, as the commit it will be (against "
        "HEAD): what the commit hook does, so that a frozen edit or a takeover is caught before "
        "it is committed. Without PATHS, every file the commit adds or changes is checked.",
    )
    command.add_argument(
        "--jobs",
        type=at_least(1),
        metavar="N",
        help="Processes that check the files of a large batch (default: one per CPU this process "
        "may use, by its affinity and cgroup quota, from 2,000 files on).",
    )
    add_run_options(command)
    args = parse(command, argv)
    return check(
        args.paths,
        all_files=args.all_files,
        stdin_filename=args.stdin_filename,
        staged=args.staged,
        jobs=args.jobs,
        options=RunOptions(args),
    )


def check(
    paths: list[str],
    *,
    all_files: bool,
    stdin_filename: str | None,
    staged: bool,
    jobs: int | None,
    options: RunOptions,
) -> int:
    """``continuity check``; ``options.root`` None: not given (the current directory, and --all
    means the whole repository)."""
    given_root = options.root
    root = Path(".") if given_root is None else given_root
    if not paths and not all_files and not staged:
        raise fail(
            "nothing to check",
            "give file paths, --all to check every file under --root, or --staged",
        )
    if not root.is_dir():
        raise fail(f"root {root} is not a directory")
    top = project_root(root)
    config = load_config(top, options.config_path)
    path = baseline_file(top, options)
    baseline = read_baseline(path, named=options.baseline_path is not None)
    relative: list[str] = []
    stdin: tuple[str, bytes] | None = None
    for given in paths:
        if given == "-":
            stdin = _stdin(top, stdin_filename, config.max_file_bytes)
            continue
        rel = engine.relative(top, given)
        if rel is None:
            raise fail(
                f"{given} is outside the repository {top}",
                "run continuity from inside the repository that holds the file",
            )
        relative.append(rel)
    if stdin is None and stdin_filename is not None:
        raise fail("--stdin-filename is given but no - among the paths")
    # --all from any directory of the repository means all of it, as from the top; --root
    # given on the command line narrows it to that directory
    where = str(top) if given_root is None else str(root)
    under = (engine.relative(top, where) or "",) if all_files else ()
    progress = progress_line(options.fmt, options.quiet, "check", "file")
    try:
        report = engine.check(
            top,
            config,
            relative,
            under=under,
            stdin=stdin,
            staged=staged,
            only=options.families,
            jobs=jobs,
            baseline=baseline,
            progress=progress,
        )
    except ConfigError as exc:
        raise fail(f"configuration error in {exc}") from None
    except GitError as exc:
        raise fail(f"--staged: {exc.message}", exc.hint) from None
    except WorkerFailed as exc:  # its files were not checked: never a report that passes
        raise fail(f"{exc}: not every file was checked", WORKER_HINT) from None
    finally:
        if progress is not None:
            progress.close()
    if all_files and report.files == 0:
        chosen = config.families is not None or options.families
        print(
            f"continuity: no continuity file found under {where}"
            + (" for the chosen families" if chosen else ""),
            file=sys.stderr,
        )
    return emit(report, options)


def _stdin(top: Path, name: str | None, limit: int) -> tuple[str, bytes]:
    """The file read from standard input, and the root-relative path it is checked as."""
    if not name:
        raise fail(
            "- reads a file from standard input, but what file is it?",
            "give its path with --stdin-filename PATH (it decides which family checks it)",
        )
    rel = engine.relative(top, name)
    if not rel:
        raise fail(f"--stdin-filename {name} is outside the repository {top}")
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise fail(f"standard input is larger than {limit} bytes", STDIN_LIMIT_HINT)
    return rel, data
