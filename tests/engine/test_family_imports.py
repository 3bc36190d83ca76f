"""The commit hook's start-up: importing a family module does not import its checks.

``continuity check --staged`` builds every family to ask which staged paths it claims; most
commits touch no provenance or working-state file, so their check modules (parsers, schemas,
the state hash) are imported only inside ``check_file`` / ``check_tree`` / ``check_commit``.
Each import runs in a fresh interpreter, so nothing another test imported can hide one.
"""

from __future__ import annotations

import pytest

from continuity_checks import checks
from tests.helpers.python import run_python

CASES = {
    # family package: modules that must not be imported with its family module
    "provenance": {"files", "history", "listed", "manifest", "sums"},
    "working_state": {"files", "history", "rules", "state"},
}


def imported_after(module: str, prefix: str) -> list[str]:
    code = (
        f"import {module}, sys; "
        f"print('\\n'.join(sorted(m for m in sys.modules if m.startswith({prefix!r}))))"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.parametrize("package", sorted(CASES))
def test_the_family_module_imports_none_of_its_checks(package: str) -> None:
    prefix = f"continuity_checks.checks.{package}"
    loaded = imported_after(f"{prefix}.family", prefix)
    assert f"{prefix}.family" in loaded  # the import did happen, in this interpreter
    checks = {f"{prefix}.{name}" for name in CASES[package]}
    assert checks.isdisjoint(loaded), sorted(checks & set(loaded))


@pytest.mark.parametrize("package", sorted(CASES))
def test_the_check_modules_are_real(package: str) -> None:
    """The names above are modules of the package: a rename cannot make the test pass
    vacuously."""
    prefix = f"continuity_checks.checks.{package}"
    for name in CASES[package]:
        assert f"{prefix}.{name}" in imported_after(f"{prefix}.{name}", prefix)


def test_no_family_module_imports_a_tool() -> None:
    """The helper commands that write (tools/) are imported by their commands only: importing
    every family module imports none of them."""
    modules = [f"{package}.family" for package in checks.PACKAGES]
    loaded = imported_after(", ".join(modules), "continuity_checks.")
    assert set(modules) <= set(loaded)  # the imports did happen, in this interpreter
    assert [m for m in loaded if m.startswith("continuity_checks.tools")] == []


@pytest.mark.parametrize("package", sorted(CASES))
def test_the_registry_loads_the_rules_the_family_module_leaves(package: str) -> None:
    """``continuity rules``, ``docs/rules.md`` and the configuration's rule ids come from
    :func:`checks.load_rules`, which imports each family's rules module itself."""
    prefix = f"continuity_checks.checks.{package}"
    code = (
        f"import {prefix}.family, sys; from continuity_checks import checks; checks.load_rules(); "
        f"print({prefix!r} + '.rules' in sys.modules)"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"]
