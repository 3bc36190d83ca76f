"""DeltaLayer (v0.2.1): Conversation Deltas, legacy changes.jsonl, AGENTS.md and PROJECT.md."""

from continuity_checks.core.family import Command, Declaration

DECLARATION = Declaration(
    name="deltas",
    family="continuity_checks.checks.deltas.family:DeltasFamily",
    rules="continuity_checks.checks.deltas.rules",
    prefix="DL",
    summary="DeltaLayer Conversation Deltas, the legacy changes.jsonl and AGENTS.md",
    # anything under a .deltalayer/ directory (deltas, the legacy history, stray *.tmp files)
    # and the AGENTS.md files that hold the continuity section
    files=r"(^|/)(\.deltalayer/|AGENTS\.md$)",
    hook_id="check-conversation-deltas",
    options=(
        "legacy",
        "ownership",
        "allow-delete",
        "legacy-files",
        "owner-identity",
        "owner-allowed",
    ),
    trailers=("Continuity-Delta",),
    # who created a delta owns it (DL211): the identity of each commit that changes one
    fields=frozenset({"author_email", "committer_email"}),
    # a store directory committed as a symlink (DL212) is a path no family claims: seen in
    # CommitContext.paths, of every commit
    every_commit=True,
    commands=(
        Command(
            "delta",
            "continuity_checks.cli.delta:main",
            "Write DeltaLayer Conversation Deltas (a drop-in for the prototype CLI).",
        ),
    ),
)
