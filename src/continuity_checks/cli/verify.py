"""``continuity verify``: history mode."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from continuity_checks import engine
from continuity_checks.cli.args import fail, parse, parser
from continuity_checks.cli.common import (
    BASELINE_FIX,
    RunOptions,
    add_run_options,
    baseline_file,
    emit,
    load_config,
    progress_line,
)
from continuity_checks.core.baseline import BaselineError, BaselineSource
from continuity_checks.core.config import ConfigError, project_root
from continuity_checks.core.git.errors import GitError
from continuity_checks.core.shard import Shard, ShardError

DESCRIPTION = """\
Check every commit of a range: ownership, frozen bytes, legacy history (history mode).

Paths in findings are relative to the top of the git work tree that contains --root. The range
is judged by the configuration at its base (the defaults for a range with no base), unless
--config names one. Findings the baseline file knows are hidden, and counted in the summary;
the baseline is the one at the range's base (the work tree's for a range with no base), unless
--baseline names one. In CI (CI set, or --format github) the commits are taken as pushed:
the hints say how to mend a pushed commit, not one that is still to be pushed.
"""


def range_from_environment() -> str | None:
    """The range a pre-commit ``pre-push`` run describes, when ``--range`` is not given.

    pre-commit exports PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF for an ordinary push; when the push
    includes the root commit it exports neither, only the local branch: then every commit of that
    branch not on a remote-tracking branch is checked (an empty base).
    """
    from_ref = os.environ.get("PRE_COMMIT_FROM_REF", "")
    to_ref = os.environ.get("PRE_COMMIT_TO_REF", "")
    if to_ref:
        return f"{from_ref}..{to_ref}"
    local_branch = os.environ.get("PRE_COMMIT_LOCAL_BRANCH", "")
    if local_branch:
        return f"..{local_branch}"
    return None


def pushed(fmt: str) -> bool:
    """Whether the commits a run judges are already pushed: a run in CI (``CI`` set and not
    empty, as GitHub Actions and GitLab CI set it) or one that writes workflow annotations."""
    return fmt == "github" or bool(os.environ.get("CI"))


def main(argv: Sequence[str]) -> int:
    command = parser("verify", DESCRIPTION)
    command.add_argument(
        "--range",
        dest="revision_range",
        metavar="BASE..HEAD",
        help="Commits to check: BASE..HEAD, or one revision for all its history. An empty or "
        "all-zeros BASE means the commits not on any remote-tracking branch. "
        "Default: the range of a pre-commit pre-push run.",
    )
    command.add_argument(
        "--shard",
        dest="shard_spec",
        metavar="K/N",
        help="Check only the K-th of N slices of the range's commits (a CI matrix of N jobs): "
        "together the N jobs report what one run reports.",
    )
    add_run_options(command)
    args = parse(command, argv)
    return verify(args.revision_range, args.shard_spec, RunOptions(args))


def verify(revision_range: str | None, shard_spec: str | None, options: RunOptions) -> int:
    """``continuity verify``."""
    shard = None
    if shard_spec is not None:
        try:
            shard = Shard.parse(shard_spec)
        except ShardError as exc:
            raise fail(
                f"--shard: {exc}", "give --shard K/N with 1 <= K <= N, e.g. --shard 2/4"
            ) from None
    revision_range = revision_range or range_from_environment()
    if revision_range is None:
        raise fail("no range to verify", "give --range BASE..HEAD, e.g. --range origin/main..HEAD")
    root = options.root or Path(".")
    top = project_root(root)
    config = load_config(top, options.config_path)  # the top's, from any subdirectory
    path = baseline_file(top, options)
    # judged by the base's configuration and baseline, unless given on the command line
    at_base = options.config_path is None
    named = options.baseline_path is not None
    source = None if path is None else BaselineSource(path, at_base and not named, named)
    progress = progress_line(options.fmt, options.quiet, "verify", "commit")
    try:
        report = engine.verify(
            root,
            config,
            revision_range,
            only=options.families,
            config_at_base=at_base,
            shard=shard,
            baseline=source,
            progress=progress,
            pushed=pushed(options.fmt),
        )
    except ConfigError as exc:
        raise fail(f"configuration error in {exc}") from None
    except BaselineError as exc:
        raise fail(f"baseline error in {exc}", BASELINE_FIX) from None
    except GitError as exc:
        raise fail(exc.message, exc.hint) from None
    finally:
        if progress is not None:
            progress.close()
    return emit(report, options)
