"""The collector around a command's start-up: the process entry point freezes what the
command's imports made; ``main`` (a caller's process, the tests) leaves the collector as it was."""

from __future__ import annotations

import gc

from continuity_checks.cli import main
from tests.helpers.python import run_python


def test_main_leaves_the_collector_as_it_was() -> None:
    frozen = gc.get_freeze_count()
    assert main(["rules"]) == 0
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled()


def test_the_process_entry_point_freezes_the_start_up() -> None:
    code = (
        "import gc, sys\n"
        "from continuity_checks import cli\n"
        "sys.argv = ['continuity', 'rules']\n"
        "sys.exit = lambda code: print(code, gc.isenabled(), gc.get_freeze_count() > 0)\n"
        "cli.run()\n"
    )
    done = run_python(code)
    assert done.stdout.splitlines()[-1] == "0 True True", done.stderr


def test_a_disabled_collector_stays_disabled() -> None:
    code = (
        "import gc, sys\n"
        "from continuity_checks import cli\n"
        "gc.disable()\n"
        "sys.argv = ['continuity', 'rules']\n"
        "sys.exit = lambda code: print(code, gc.isenabled())\n"
        "cli.run()\n"
    )
    done = run_python(code)
    assert done.stdout.splitlines()[-1] == "0 False", done.stderr


def test_the_entry_point_imports_the_program_itself_and_restores_the_threshold() -> None:
    code = (
        "import gc, sys\n"
        "from continuity_checks import __main__ as entry\n"
        "print('continuity_checks.cli' in sys.modules)\n"
        "sys.argv = ['continuity', 'rules']\n"
        "before = gc.get_threshold()\n"
        "sys.exit = lambda code: print(code, gc.get_threshold() == before)\n"
        "entry.main()\n"
    )
    done = run_python(code)
    assert done.stdout.splitlines()[0] == "False", done.stderr
    assert done.stdout.splitlines()[-1] == "0 True", done.stderr
