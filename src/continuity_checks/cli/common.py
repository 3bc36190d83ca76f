"""Options and plumbing shared by the commands that report findings."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks import checks
from continuity_checks.cli.args import directory_path, fail, file_path
from continuity_checks.cli.terminal import ProgressLine, show_progress, use_color
from continuity_checks.core import config as config_module
from continuity_checks.core.config import Config, ConfigError
from continuity_checks.core.findings import Report
from continuity_checks.report import FORMATS, render

if TYPE_CHECKING:
    from continuity_checks.core.baseline import Baseline

#: core.baseline.FILE_NAME, without importing that module into every run (a test keeps the two
#: equal): a run without a baseline file pays nothing for the feature
BASELINE_NAME = ".continuity-baseline.json"

#: What to do when a worker process of ``check`` died (core.parallel.WorkerFailed): its files
#: were not checked, so the run ends with exit 2, never a report that passes.
WORKER_HINT = "run again; if it recurs, with --jobs 1 (one process: no worker to lose)"


def add_where(parser: argparse.ArgumentParser) -> None:
    """The options that say where a command works: ``--root`` (None when not given, so that a
    command can tell the default from ``--root .``) and ``--config``."""
    parser.add_argument(
        "--root",
        type=directory_path,
        metavar="ROOT",
        help="Where to look: --all checks every file under it. Findings name files relative to "
        "the top of the repository that contains it (ROOT itself outside a repository), whose "
        "configuration applies. Default: the current directory.",
    )
    parser.add_argument(
        "--config",
        dest="config_path",
        type=file_path,
        metavar="FILE",
        help="Configuration file (default: .continuity.toml at the top of the repository that "
        "holds ROOT, else [tool.continuity] in its pyproject.toml; ROOT's own outside a "
        "repository).",
    )


def add_report(parser: argparse.ArgumentParser) -> None:
    """The options that say what a report holds and how it is shown: which families
    (``--family``), its format, the baseline file whose known findings it hides (``--baseline``
    and ``--no-baseline``, which :func:`baseline_file` refuses together), and what a person at a
    terminal sees (``-q/--quiet``, ``--no-color``)."""
    parser.add_argument(
        "--family",
        dest="families",
        choices=checks.names(),
        action="append",
        help="Check only this family (repeatable). Default: all, or the configured ones.",
    )
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=FORMATS,
        default="text",
        help="Output format (default: %(default)s).",
    )
    parser.add_argument(
        "--baseline",
        dest="baseline_path",
        type=file_path,
        metavar="FILE",
        help=f"Baseline file whose known findings are hidden (default: {BASELINE_NAME} at the top "
        "of the repository, when it exists).",
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="Report every finding, whatever the baseline file knows.",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="Print only errors: no warnings, notes, summary or progress (text format).",
    )
    parser.add_argument(
        "--no-color",
        action="store_true",
        help="No colour, even on a terminal (also NO_COLOR; FORCE_COLOR forces it).",
    )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options ``check`` and ``verify`` share (:class:`RunOptions` reads them back)."""
    add_where(parser)
    add_report(parser)


class RunOptions:
    """The options of :func:`add_run_options`, read back from the parsed arguments: ``root``
    None when not given (the current directory), ``families`` None when ``--family`` is not
    given. A plain class: the commit hook pays for every class a dataclass or a NamedTuple
    would generate code for."""

    __slots__ = (
        "baseline_path",
        "config_path",
        "families",
        "fmt",
        "no_baseline",
        "no_color",
        "quiet",
        "root",
    )

    def __init__(self, args: argparse.Namespace) -> None:
        self.root: Path | None = args.root
        self.config_path: Path | None = args.config_path
        self.families: tuple[str, ...] | None = tuple(args.families) if args.families else None
        self.fmt: str = args.fmt
        self.baseline_path: Path | None = args.baseline_path
        self.no_baseline: bool = args.no_baseline
        self.quiet: bool = args.quiet
        self.no_color: bool = args.no_color


def baseline_file(top: Path, options: RunOptions) -> Path | None:
    """The baseline file a run reads: the one ``--baseline`` names (which must exist), else the
    default one at ``top``; None with ``--no-baseline``."""
    given = options.baseline_path
    if given is not None and options.no_baseline:
        raise fail("--baseline and --no-baseline contradict each other", "give one of them")
    if options.no_baseline:
        return None
    if given is not None:
        if not given.is_file():
            raise fail(f"baseline file {given} does not exist", BASELINE_HINT)
        return given
    return top / BASELINE_NAME


BASELINE_HINT = "write one with `continuity baseline check|verify`, or run with --no-baseline"


def read_baseline(path: Path | None, *, named: bool = False) -> Baseline | None:
    """The baseline at ``path`` (None: none there); exit 2 when it is not a baseline or may not
    be read (``named``: given with ``--baseline``, see core.baseline.read)."""
    if path is None:
        return None
    try:
        os.stat(path)
    except FileNotFoundError:
        return None  # anything else (a directory, no permission) is for the reader to say
    except OSError:
        pass
    # imported here, when there is a baseline file: at the top it costs every commit hook run
    # about 12.6 M instructions (+3 %)
    from continuity_checks.core.baseline import BaselineError, read

    try:
        return read(path, named=named)
    except BaselineError as exc:
        raise fail(f"baseline error in {exc}", BASELINE_FIX) from None


BASELINE_FIX = (
    "fix the file, or write it again with `continuity baseline check|verify` (after removing "
    "it), or run with --no-baseline"
)


def progress_line(fmt: str, quiet: bool, label: str, unit: str) -> ProgressLine | None:
    """A progress line on standard error, when a person is watching (see show_progress)."""
    if not show_progress(sys.stderr, fmt, quiet):
        return None
    return ProgressLine(sys.stderr, label, unit)


def load_config(root: Path, config_path: Path | None) -> Config:
    """The configuration of ``root`` (the top of the repository), or ``config_path``."""
    if not root.is_dir():
        raise fail(f"root {root} is not a directory")
    try:
        return config_module.load(root.resolve(), checks.known(), config_path)
    except ConfigError as exc:
        raise fail(
            f"configuration error in {exc}", "fix the key named above; see README, Configuration"
        ) from None


def emit(report: Report, options: RunOptions) -> int:
    """Print the report; the exit code: 1 when any error-severity finding, else 0."""
    fmt = options.fmt
    color = fmt == "text" and use_color(sys.stdout, options.no_color)
    # a reader that stopped (| head): the exit code still says what was found, as when the pipe
    # closes after the write (cli.run's flush); the unwritten rest is dropped there
    text = render(report, fmt, color=color, quiet=options.quiet)
    with contextlib.suppress(BrokenPipeError):
        if text:  # -q on a clean run: nothing, which even a full stdout takes
            sys.stdout.write(encodable(text))
    return report.exit_code


def encodable(text: str) -> str:
    """``text`` with what the console cannot encode (a file name on a cp1252 or latin-1
    console) written as ``\\uXXXX`` escapes (UTF-16, as JSON writes them), so that JSON and
    SARIF stay valid and read back as the same characters; not a UnicodeEncodeError."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, _JSON_ESCAPE).decode(encoding)
    except LookupError:  # an encoding Python does not know: leave it to the stream
        pass
    return text


def _json_escapes(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass")
    escaped = "".join(
        f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
    )
    return escaped, error.end


_JSON_ESCAPE = "continuity-json-escape"
codecs.register_error(_JSON_ESCAPE, _json_escapes)
