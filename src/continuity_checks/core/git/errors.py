"""The one error of the git layer, and the hints that go with it."""

from __future__ import annotations

FETCH_HINT = (
    "fetch the whole history (actions/checkout with fetch-depth: 0, or git fetch --unshallow)"
)
UNKNOWN_REF_HINT = (
    "fetch the missing revision (git fetch origin <branch>; in GitHub Actions use "
    "actions/checkout with fetch-depth: 0), or check its spelling"
)
GIT_HINT = "run `git status` there to see what git objects to"
RANGE_HINT = "give --range BASE..HEAD (e.g. origin/main..HEAD) or a single revision such as HEAD"
REPOSITORY_HINT = "run verify inside a git work tree, or pass --root DIR"
INSTALL_HINT = "install git, on PATH"


class GitError(Exception):
    """A git context that makes verification impossible: exit 2 with ``message`` and ``hint``."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
