"""``continuity check``: file mode."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from continuity_checks.cli.common import (
    baseline_file,
    baseline_options,
    config_option,
    emit,
    fail,
    family_option,
    format_option,
    load_config,
    only,
    progress_line,
    read_baseline,
    root_option,
    terminal_options,
)
from continuity_checks.core.config import ConfigError, project_root

STDIN_LIMIT_HINT = "give the file's path instead of -, or raise [tool.continuity.limits]"


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--all",
    "all_files",
    is_flag=True,
    help="Check every continuity file of the repository, from any directory in it (under "
    "--root when --root is given).",
)
@click.option(
    "--stdin-filename",
    metavar="PATH",
    help="With -, the path the file read from standard input has (what it is checked as).",
)
@click.option(
    "--staged",
    is_flag=True,
    help="Also apply the history rules to what is staged, as the commit it will be (against "
    "HEAD): what the commit hook does, so that a frozen edit or a takeover is caught before it "
    "is committed.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes for a large batch (default: one per CPU from 2,000 files on).",
)
@root_option
@config_option
@family_option
@format_option
@baseline_options
@terminal_options
def check(
    paths: tuple[str, ...],
    all_files: bool,
    stdin_filename: str | None,
    staged: bool,
    jobs: int | None,
    root: Path,
    config_path: Path | None,
    families: tuple[str, ...],
    fmt: str,
    baseline_path: Path | None,
    no_baseline: bool,
    quiet: bool,
    no_color: bool,
) -> None:
    """Check continuity files: the PATHS given (what pre-commit passes; a directory means every
    file under it; - reads one file from standard input), or --all.

    Findings name files relative to the top of the repository, whose configuration applies,
    from any directory inside it. Files given that no family claims are named in a note.
    Findings the baseline file knows are hidden, and counted in the summary.
    """
    from continuity_checks import engine
    from continuity_checks.core.git import GitError

    if not paths and not all_files and not staged:
        raise fail(
            "nothing to check",
            "give file paths, --all to check every file under --root, or --staged",
        )
    if not root.is_dir():
        raise fail(f"root {root} is not a directory")
    top = project_root(root)
    config = load_config(top, config_path)
    baseline = read_baseline(baseline_file(top, baseline_path, no_baseline))
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
    narrowed = click.get_current_context().get_parameter_source("root")
    where = str(root) if narrowed is not click.core.ParameterSource.DEFAULT else str(top)
    under = (engine.relative(top, where) or "",) if all_files else ()
    progress = progress_line(fmt, quiet, "check", "file")
    try:
        report = engine.check(
            top,
            config,
            relative,
            under=under,
            stdin=stdin,
            staged=staged,
            only=only(families),
            jobs=jobs,
            baseline=baseline,
            progress=progress,
        )
    except ConfigError as exc:
        raise fail(f"configuration error in {exc}") from None
    except GitError as exc:
        raise fail(f"--staged: {exc.message}", exc.hint) from None
    finally:
        if progress is not None:
            progress.close()
    if all_files and report.files == 0:
        click.echo(
            f"continuity: no continuity file found under {where}"
            + ("" if config.families is None and not families else " for the chosen families"),
            err=True,
        )
    raise click.exceptions.Exit(emit(report, fmt, quiet=quiet, no_color=no_color))


def _stdin(top: Path, name: str | None, limit: int) -> tuple[str, bytes]:
    """The file read from standard input, and the root-relative path it is checked as."""
    from continuity_checks import engine

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
