"""How to mend the commit a history finding names: the sentence the engine adds to its hint.

The commit being made (the commit hook) is mended by fixing or unstaging what is staged. A made
commit is mended by rewriting it: a new commit that puts things right leaves the old one in the
range, where the same rule fails again. Before the push (the push hook, a run by hand) that is
the whole advice; once the commit is pushed (CI) a rewrite is only for a branch no one else has
built on, and a shared branch keeps the commit: what cannot be fixed goes in the baseline.
"""

from __future__ import annotations

from continuity_checks.core.family import STAGED, Commit
from continuity_checks.core.findings import Finding


def rewrite_hint(finding: Finding, commit: Commit, *, pushed: bool = False) -> Finding:
    """``finding`` with how to mend ``commit`` added to its hint, when the finding is the
    commit's; ``pushed`` says that the commit is already pushed (a run in CI)."""
    if finding.commit != commit.sha:
        return finding
    if commit.sha == STAGED:
        if finding.unstage:
            how = (
                "not committed yet: leave that change out of this commit with "
                f"`git restore --staged -- {' '.join(finding.unstage)}`"
            )
        else:
            how = (
                "not committed yet: fix the file and stage it again, or leave the change out of "
                f"this commit with `git restore --staged -- {finding.path}`"
            )
    else:
        how = _pushed(commit) if pushed else _not_pushed(commit)
    return finding._replace(hint=f"{finding.hint}; {how}" if finding.hint else how)


def _rewrite(commit: Commit) -> str:
    """The steps that rewrite ``commit`` in place."""
    short = commit.sha[:12]
    if not commit.parents:
        rebase = "git rebase -i --root"
    elif commit.is_merge:
        rebase = f"git rebase -i --rebase-merges {commit.parents[0][:12]}"
    else:
        rebase = f"git rebase -i {commit.parents[0][:12]}"
    return (
        f"`{rebase}`, mark {short} `edit`, make the change, `git commit --amend --no-verify` "
        "(the commit hook compares what is staged with the commit being replaced, so it would "
        "take the mending for the change), `git rebase --continue`"
    )


def _not_pushed(commit: Commit) -> str:
    return f"commit {commit.sha[:12]} must be rewritten before it is pushed: {_rewrite(commit)}"


def _pushed(commit: Commit) -> str:
    short = commit.sha[:12]
    return (
        f"commit {short} is already pushed. On a branch no one else has built on (a pull "
        f"request's own), rewrite it: {_rewrite(commit)}, `git push --force-with-lease`. On a "
        "shared branch it stays in history: fix in a new commit what a new commit may change "
        "(changing a frozen or pinned file back is a change too, and is reported), and record "
        "the finding with `continuity baseline verify`, committed"
    )
