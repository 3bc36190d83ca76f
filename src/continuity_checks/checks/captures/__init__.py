"""LoopX 2.2.0 context delivery: captures and their manifests, reader references, decision
directories (projection, required context, delivery) and cycle deltas."""

from continuity_checks.core.family import Command, Declaration

DECLARATION = Declaration(
    name="captures",
    family="continuity_checks.checks.captures.family:CapturesFamily",
    rules="continuity_checks.checks.captures.rules",
    prefix="CX",
    summary="LoopX context captures, manifests, reader references, deliveries and cycle deltas",
    # the names the family claims (family.py decides by the whole path; this only narrows the
    # files pre-commit hands the hook)
    files=(
        r"(^|/)(manifest|capture|required-context|cycle-base|cycle-delta|projection|delivery)"
        r"\.json$|\.reader\.json$"
    ),
    hook_id="check-context-captures",
    options=(
        "roots",
        "capture-digest",
        "selection-digest",
        "context-ref",
        "list-size",
        "list-depth-origin",
        "duplicate-pointers",
        "delta-ops",
    ),
    # a decision directory committed as a symlink (CX203) is a path no family claims: seen in
    # CommitContext.paths, of every commit
    every_commit=True,
    commands=(
        Command(
            "capture",
            "continuity_checks.cli.capture:main",
            "LoopX captures: write manifests, verified paged reads, cycle deltas.",
        ),
    ),
)
