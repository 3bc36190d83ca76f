"""A family of ~50 lines that exercises the whole seam, as a test fixture: it claims one kind of
file (``notes/*.note``), reads a sibling through the snapshot in both modes, and asks history
mode for every commit and its author. Registered by one line (``checks.PACKAGES``) in the tests.
"""

from __future__ import annotations

from collections.abc import Iterable

from continuity_checks.core.config import Config
from continuity_checks.core.family import (
    Claimed,
    CommitContext,
    Declaration,
    Family,
    FileInput,
    options,
)
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import rule
from continuity_checks.core.snapshot import Snapshot, Unreadable

DECLARATION = Declaration(
    name="notes",
    family="tests.example_family:NotesFamily",
    rules="tests.example_family",
    prefix="ZZ",
    summary="example notes",
    files=r"(^|/)notes/",
    hook_id="check-notes",
    options=("authors",),
    fields=frozenset({"author_email"}),
    every_commit=True,
)
UNLISTED = rule("ZZ101", "notes", "note not in the index", "A note must be listed in notes/INDEX.")
STRANGER = rule("ZZ201", "notes", "commit by an unknown author", "Authors are in notes/AUTHORS.")


def _lines(snapshot: Snapshot, path: str) -> set[str]:
    data = snapshot.read(path)
    return set() if isinstance(data, Unreadable) else set(data.decode().split())


class NotesFamily(Family):
    def __init__(self, config: Config) -> None:
        self.authors_file = options(config, DECLARATION).get("authors", "notes/AUTHORS")

    def claims(self, path: str) -> str | None:
        return "note" if path.startswith("notes/") and path.endswith(".note") else None

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        if file.path.rpartition("/")[2] not in _lines(file.snapshot, "notes/INDEX"):
            yield UNLISTED.finding(file.path, f"expected in notes/INDEX, found {file.data!r}")

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        return ()

    def dependents(self, path: str, tree: Snapshot, edited: bool) -> Iterable[str]:
        if path != "notes/INDEX":
            return ()
        names = tree.list("notes")
        return () if isinstance(names, Unreadable) else [f"notes/{name}" for name in names]

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        email = context.commit.fields["author_email"]
        if email not in _lines(context.before, self.authors_file) | _lines(
            context.after, self.authors_file
        ):
            changed = ",".join(c.path for c in context.changes) or "nothing"
            touched = ",".join(c.path for c in context.paths)  # claimed or not
            yield STRANGER.finding(
                self.authors_file,
                f"expected a listed author, found {email} ({changed}; {touched})",
                commit=context.commit.sha,
            )
