"""DSH durable context: WORKING_STATE.json, the other .dsh/project files, runtime files that must
never be committed, and captured projections."""

from continuity_checks.core.family import Command, Declaration

DECLARATION = Declaration(
    name="working-state",
    family="continuity_checks.checks.working_state.family:WorkingStateFamily",
    rules="continuity_checks.checks.working_state.rules",
    prefix="WS",
    summary="DSH durable working state (.dsh/project, WORKING_STATE.json) and its projections",
    # anything under a .dsh/ directory, any WORKING_STATE.json, and the default projection names
    files=r"(^|/)(\.dsh/|WORKING_STATE\.json$)|\.projection\.json$|-injection\.raw\.txt$",
    hook_id="check-working-state",
    options=("projections", "compress-warn-chars"),
    # a DSH directory committed as a symlink (WS206) is a path no family claims: seen in
    # CommitContext.paths, of every commit
    every_commit=True,
    commands=(
        Command(
            "state",
            "continuity_checks.cli.state:main",
            "DSH working state: recompute state_hash, render the bounded projection.",
        ),
    ),
)
