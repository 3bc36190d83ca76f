"""Provenance: SHA256SUMS-style files and provenance manifests, and the bytes they pin."""

from continuity_checks.core.family import Command, Declaration

DECLARATION = Declaration(
    name="provenance",
    family="continuity_checks.checks.provenance.family:ProvenanceFamily",
    rules="continuity_checks.checks.provenance.rules",
    prefix="PV",
    summary="SHA256SUMS-style files, provenance manifests and the artifacts they pin",
    # the default names of sums files (in any case) and manifests; configured other names need
    # their own `files` in the hook entry of .pre-commit-config.yaml
    files=(
        r"(^|/)((?i:sha256sums)(\.(?i:txt))?|[^/]*\.sha256|PROVENANCE\.json"
        r"|[^/]*\.provenance\.json)$"
    ),
    hook_id="check-sha256sums",
    options=("sums-files", "manifests", "relative-to"),
    # an original's bytes never change: a commit that edits or deletes a listed file without
    # touching its listing is checked too (PV203), through CommitContext.paths
    every_commit=True,
    commands=(
        Command(
            "provenance",
            "continuity_checks.cli.provenance:main",
            "List files in a SHA256SUMS file (atomically, under a lock).",
        ),
    ),
)
