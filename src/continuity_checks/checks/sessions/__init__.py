"""OpenProgram session histories: session repositories, history DAGs, registries, agent commits."""

from continuity_checks.core.family import Declaration

DECLARATION = Declaration(
    name="sessions",
    family="continuity_checks.checks.sessions.family:SessionsFamily",
    rules="continuity_checks.checks.sessions.rules",
    prefix="SS",
    summary="OpenProgram session repositories, history DAGs, registries and agent commits",
    # a session directory (the root, sessions/<sid>/ or .openprogram/sessions/<sid>/): its meta,
    # history nodes, backup manifests and stray temp files; the registries; a project's
    # .openprogram/.gitignore
    files=(
        r"(^|/)(history/[^/]+\.(json|tmp)$|meta\.json$|file_backups/[^/]+/manifest\.json$"
        r"|sessions/(index|locations)\.json$|projects/projects\.json$|\.openprogram/\.gitignore$"
        r"|sessions/[^/]+/[^/]+\.tmp$|memory/(sources/.*_v2/[^/]+|topics/.*)\.md$"
        r"|memory/(timeline|graph)/[^/]+\.jsonl$)"
    ),
    hook_id="check-openprogram-sessions",
    options=("path-map",),
    fields=frozenset(
        {"author_name", "author_email", "committer_name", "committer_email", "message"}
    ),
    every_commit=True,
    # a session repository committed into a project as a nested repository (SS208)
    gitlinks=True,
    # names seen and turns pending since the last turn commit: a sharded verify replays the
    # commits before the shard (see SessionsFamily.history_needed)
    history_state=True,
)
