"""``continuity verify``: history mode."""

from __future__ import annotations

import os
from pathlib import Path

import click

from continuity_checks.cli.common import (
    config_option,
    emit,
    fail,
    family_option,
    format_option,
    load_config,
    only,
    root_option,
)
from continuity_checks.core.config import ConfigError, project_root


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


@click.command()
@click.option(
    "--range",
    "revision_range",
    metavar="BASE..HEAD",
    help="Commits to check: BASE..HEAD, or one revision for all its history. An empty or "
    "all-zeros BASE means the commits not on any remote-tracking branch. "
    "Default: the range of a pre-commit pre-push run.",
)
@click.option(
    "--shard",
    "shard_spec",
    metavar="K/N",
    help="Check only the K-th of N slices of the range's commits (a CI matrix of N jobs): "
    "together the N jobs report what one run reports.",
)
@root_option
@config_option
@family_option
@format_option
def verify(
    revision_range: str | None,
    shard_spec: str | None,
    root: Path,
    config_path: Path | None,
    families: tuple[str, ...],
    fmt: str,
) -> None:
    """Check every commit of a range: ownership, frozen bytes, legacy history (history mode).

    Paths in findings are relative to the top of the git work tree that contains --root.
    """
    from continuity_checks import engine
    from continuity_checks.core.git import GitError
    from continuity_checks.core.shard import Shard, ShardError

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
    config = load_config(project_root(root), config_path)  # the top's, from any subdirectory
    try:
        # judged by the base's configuration, unless one is given on the command line
        report = engine.verify(
            root,
            config,
            revision_range,
            only=only(families),
            config_at_base=config_path is None,
            shard=shard,
        )
    except ConfigError as exc:
        raise fail(f"configuration error in {exc}") from None
    except GitError as exc:
        raise fail(exc.message, exc.hint) from None
    raise click.exceptions.Exit(emit(report, fmt))
