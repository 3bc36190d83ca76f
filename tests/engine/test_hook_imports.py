"""What the commit hook imports (its cost is mostly imports). One staged delta, the
hook's command line, in a fresh interpreter: only the ``check`` command's module of the CLI, no
baseline machinery without a baseline file, and no third-party argument parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.git import GitRepo, delta, isolate_git, path_of
from tests.helpers.python import run_python

NAME = "2026-09-21T16-20-00p08-00--agent.json"
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("start", {**PROJECT, path_of(NAME): delta(changes=["a"])})
    repo.write({path_of(NAME): delta(changes=["a", "b"], updated="2026-09-21T17:00:00+08:00")})
    repo.git("add", "-A")
    return repo


def hook_modules(repo: GitRepo) -> tuple[int, set[str]]:
    """The exit code of the hook and the modules it imported (not those the interpreter had
    imported before it: a site's ``.pth`` files may import ``tempfile`` and more at start-up)."""
    code = (
        "import sys\n"
        "started = set(sys.modules)\n"
        "from continuity_checks.cli import main\n"
        f"code = main(['check', '--staged', {path_of(NAME)!r}])\n"
        "print('\\n'.join(sorted(set(sys.modules) - started)), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = run_python(code, repo.path)
    return done.returncode, set(done.stderr.split())


def test_the_hook_imports_only_what_it_uses(repo: GitRepo) -> None:
    code, modules = hook_modules(repo)
    assert code == 0, modules
    assert "continuity_checks.engine" in modules  # it did check, in this interpreter
    assert "continuity_checks.checks.deltas.history" in modules  # and applied the history rules
    cli = {m for m in modules if m.startswith("continuity_checks.cli.")}
    assert cli == {
        "continuity_checks.cli.args",
        "continuity_checks.cli.check",
        "continuity_checks.cli.common",
        "continuity_checks.cli.terminal",
    }
    assert "continuity_checks.core.baseline" not in modules
    assert "click" not in modules


def test_a_delta_commit_imports_no_sessions_history_rule(repo: GitRepo) -> None:
    """The sessions family's history rules run on every commit, but a delta's commit in a
    project without OpenProgram's files gives them nothing to find: the family answers without
    importing them (``tests/sessions/test_staged_history.py`` holds the answer to theirs)."""
    code, modules = hook_modules(repo)
    assert code == 0, modules
    assert "continuity_checks.checks.sessions.history" not in modules
    assert "continuity_checks.checks.sessions.rules" not in modules


def test_a_delta_commit_leaves_the_other_families_checks_unloaded(repo: GitRepo) -> None:
    """The families a delta's commit does not touch are built and asked, but load neither the
    working-state rules (registered by ``checks.load_rules`` when a command lists them) nor
    the sessions layout's memory-file expressions (compiled when a path under ``memory/`` is
    first asked about)."""
    code = (
        "import sys\n"
        "from continuity_checks.cli import main\n"
        f"code = main(['check', '--staged', {path_of(NAME)!r}])\n"
        "from continuity_checks.checks.sessions import layout\n"
        "memory = (layout._ARCHIVE, layout._TOPIC, layout._RECORDS)\n"
        "print(sum(e._compiled is not None for e in memory), file=sys.stderr)\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = run_python(code, repo.path)
    assert done.returncode == 0, done.stderr
    compiled, *modules = done.stderr.split()
    assert "continuity_checks.checks.working_state.family" in modules  # built, in this run
    assert "continuity_checks.checks.working_state.rules" not in modules
    assert compiled == "0"


def test_the_hook_parses_its_options_without_shutil(repo: GitRepo) -> None:
    """argparse makes a help formatter for every option added; the command line's formatter
    finds the terminal's width without ``shutil`` (whose import brings ``bz2``, ``lzma`` and
    ``zlib``): ``tests/cli/test_help_width.py`` holds it to ``shutil``'s."""
    code, modules = hook_modules(repo)
    assert code == 0, modules
    assert not modules & {"shutil", "bz2", "lzma"}


def test_a_delta_that_passes_needs_no_position(repo: GitRepo) -> None:
    """The position scanner is imported for a finding's position or a refusal's, never for a
    delta that passes."""
    code, modules = hook_modules(repo)
    assert code == 0, modules
    assert "continuity_checks.core.strict_json" in modules
    assert "continuity_checks.core.json_positions" not in modules


def test_a_baseline_file_is_read_when_there_is_one(repo: GitRepo) -> None:
    (repo.path / ".continuity-baseline.json").write_text("not a baseline\n", encoding="utf-8")
    code, modules = hook_modules(repo)
    assert code == 2  # read, and refused
    assert "continuity_checks.core.baseline" in modules


def test_the_hook_makes_no_forward_reference(repo: GitRepo) -> None:
    """A ``typing.ForwardRef`` (a NamedTuple field or a TypeVar bound given as a string)
    compiles its text at import, and the first compile builds every AST type: the hook's modules
    give NamedTuples and TypeVars their types as objects."""
    code = (
        "import sys, typing\n"
        "made = []\n"
        "init = typing.ForwardRef.__init__\n"
        "def counted(self, *args, **kwargs):\n"
        "    made.append(args[0])\n"
        "    init(self, *args, **kwargs)\n"
        "typing.ForwardRef.__init__ = counted\n"
        "from continuity_checks.cli import main\n"
        f"code = main(['check', '--staged', {path_of(NAME)!r}])\n"
        "print(made, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = run_python(code, repo.path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "[]"


def test_the_program_is_imported_without_a_collection(repo: GitRepo) -> None:
    """The process entry point raises the collector's first threshold while it imports the
    command line, whose objects live until the process exits, and restores it for the run."""
    code = (
        "import gc, sys\n"
        "from continuity_checks.__main__ import main\n"
        "collections = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and collections.append(info))\n"
        "before = gc.get_threshold()\n"
        "def imported(name, *args, **kwargs):\n"
        "    module = real(name, *args, **kwargs)\n"
        "    if name == 'continuity_checks.cli':\n"
        "        seen.append(len(collections))\n"
        "    return module\n"
        "seen = []\n"
        "import builtins\n"
        "real = builtins.__import__\n"
        "builtins.__import__ = imported\n"
        f"sys.argv = ['continuity', 'check', '--staged', {path_of(NAME)!r}]\n"
        "sys.exit = lambda code: print(code, seen[0], gc.get_threshold() == before, file=sys.stderr)\n"
        "main()\n"
    )
    done = run_python(code, repo.path)
    assert done.stderr.split() == ["0", "0", "True"], done.stderr


def test_the_hook_asks_who_created_a_delta_without_temporary_files(repo: GitRepo) -> None:
    """The creator of the changed delta (``Repository.added_by``'s ``git log``) is asked and
    answered through pipes: the hook imports no ``tempfile`` (nor its ``random`` seeding)."""
    code, modules = hook_modules(repo)
    assert code == 0, modules
    assert "continuity_checks.checks.deltas.owners" in modules  # ownership was judged
    assert "tempfile" not in modules


def test_no_collection_runs_before_the_command_is_imported(repo: GitRepo) -> None:
    """The entry point freezes the command line once imported, before it restores the
    threshold: no collection traverses the start-up's objects before the command's module (the
    command line's own freeze) is imported."""
    code = (
        "import gc, importlib, sys\n"
        "from continuity_checks.__main__ import main\n"
        "collections = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and collections.append(info))\n"
        "seen = []\n"
        "load = importlib.import_module\n"
        "def loaded(name, *args):\n"
        "    if name == 'continuity_checks.cli.check' and not seen:\n"
        "        seen.append(len(collections))\n"
        "    return load(name, *args)\n"
        "importlib.import_module = loaded\n"
        f"sys.argv = ['continuity', 'check', '--staged', {path_of(NAME)!r}]\n"
        "sys.exit = lambda code: print(code, seen, file=sys.stderr)\n"
        "main()\n"
    )
    done = run_python(code, repo.path)
    assert done.stderr.split() == ["0", "[0]"], done.stderr
