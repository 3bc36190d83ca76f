"""What ``continuity check`` makes of capture files, asked by the capture commands: ``capture
verify`` (every captures check on a directory), the ``[captures]`` options a command follows, and
whether a file a command would write is one that ``check`` reads. The only capture tool that
calls the engine, through its public functions."""

from __future__ import annotations

import os
from pathlib import Path

from continuity_checks import checks
from continuity_checks.checks.captures import layout
from continuity_checks.core import config as config_module
from continuity_checks.core.globs import Globs
from continuity_checks.tools.captures.results import Result, refuse


def verify(directory: str) -> Result:
    """Every captures check on the files under ``directory``, as ``continuity check DIR`` runs
    them: from the top of the repository that holds it, with its configuration."""
    from continuity_checks import engine

    # from the repository's top, as `continuity check DIR` does: a decision directory is known by
    # its name (decision-<id>/), which a check rooted inside it would not see
    top = config_module.project_root(Path(directory))
    under = engine.relative(top, directory) or ""
    try:
        config = config_module.load(top, checks.known())
        report = engine.check(top, config, under=(under,), only=("captures",))
    except config_module.ConfigError as exc:  # a bad key, or a bad value of a family option
        return refuse("capture-verify", "CONFIG_INVALID", f"configuration error in {exc}")
    if report.files == 0:  # a pass here would vouch for files no check read
        return refuse(
            "capture-verify",
            "NOTHING_CHECKED",
            f"expected capture files under {directory} that continuity check reads (capture.json, "
            "manifest.json, *.reader.json, decision-<id>/, cycle deltas, under [captures] roots "
            "when it is set), found none" + "".join(f"; {note}" for note in report.notes),
        )
    findings = [f.to_dict() for f in report.sorted_findings()]
    ok = report.errors == 0
    return (0 if ok else 1), {
        "ok": ok,
        "mode": "capture-verify",
        "files": report.files,
        "errors": report.errors,
        "warnings": report.warnings,
        "findings": findings,
    }


def configured(mode: str, directory: str = ".") -> layout.Settings | Result:
    """The ``[captures]`` options of the configuration of the repository that holds
    ``directory`` (as ``check`` finds it, from any directory of the repository), or a refusal
    naming the bad key. ``manifest``, ``read``, ``list``, ``diff`` and ``apply`` follow the same
    options as the checks, so that what they write passes ``check``."""
    try:
        top = config_module.project_root(Path(directory))
        config = config_module.load(top, checks.known())
        return layout.settings(config)
    except config_module.ConfigError as exc:
        return refuse(mode, "CONFIG_INVALID", f"configuration error in {exc}")


def unchecked(path: str) -> str | None:
    """Why ``continuity check`` would never read the file ``path`` is to be (None: it would):
    outside the configured ``roots``, excluded, or the family left out. A manifest or reader
    reference that no check reads would vouch for a capture that may change unseen."""
    from continuity_checks import engine
    from continuity_checks.checks.captures.family import CapturesFamily

    top = config_module.project_root(Path(os.path.dirname(os.path.abspath(path))))
    rel = engine.relative(top, path)
    try:
        config = config_module.load(top, checks.known())
        family = CapturesFamily(config)
    except config_module.ConfigError as exc:
        return f"configuration error in {exc}"
    if config.families is not None and "captures" not in config.families:
        return "the captures family is not checked (families in the configuration)"
    if rel is None or family.claims(rel) is None:
        return (
            "not a file continuity check reads as part of a capture (outside [captures] roots, "
            "or in another family's directory): write it in a capture directory"
        )
    if Globs(config.exclude).match(rel):
        return "excluded by the configuration (exclude): continuity check would never read it"
    return None
