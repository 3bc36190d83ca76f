"""The commit being made, where the history rules can find nothing: the sessions family answers
without importing them, and answers as they do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from continuity_checks.checks.sessions.family import SessionsFamily
from continuity_checks.core.config import Config
from continuity_checks.core.family import STAGED
from tests.conftest import REPO, Symlink
from tests.sessions.test_history import META, OP, make

#: paths of every kind the rules look at (session repository, registries, memory sources,
#: OpenProgram's state in a project) and of none; no path is another's directory
_PATHS = (
    "meta.json",
    "history/0001-u-1a2b3c4d.json",
    ".openprogram/settings.json",
    ".openprogram/sessions/s1/meta.json",
    "memory/sources/_v2/a.md",
    "memory/sources/b.md",
    "sources/c.md",
    "sessions/index.json",
    "sessions/s2/meta.json",
    "sessions/s2/history/0001-u-1a2b3c4d.json",
    "memory/topics/t.md",
    ".deltalayer/changes/d.json",
    "notes.txt",
)
_CONTENTS = st.sampled_from(["a", "ab", "{}", META, Symlink("notes.txt"), Symlink("missing")])
_TREES = st.dictionaries(st.sampled_from(_PATHS), _CONTENTS, max_size=5)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_TREES, _TREES)
@example({}, {".deltalayer/changes/d.json": "{}"})  # another family's file: the shortcut
@example({"meta.json": META}, {"meta.json": META, "notes.txt": "a"})  # a session repository
@example({}, {".openprogram/settings.json": "{}"})  # state brought into a project
@example({"notes.txt": "a"}, {"notes.txt": "a", "memory/topics/t.md": Symlink("notes.txt")})
def test_the_commit_being_made_is_judged_as_the_rules_judge_it(
    tmp_path_factory: object, before: dict[str, str], after: dict[str, str]
) -> None:
    tmp = tmp_path_factory.mktemp("commit")  # type: ignore[attr-defined]
    family = SessionsFamily(Config())
    context = make(tmp, family, before, after, "", ("p" * 40,), OP, STAGED)
    rules = SessionsFamily(Config()).history  # the rules themselves, on a family of their own
    assert list(family.check_commit(context)) == rules.check_commit(context)


def test_a_delta_commit_imports_no_history_rule(tmp_path: Path) -> None:
    """The shortcut is taken where nothing can be found: the commit hook of a delta."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from continuity_checks.checks.sessions.family import SessionsFamily\n"
        "from continuity_checks.core.config import Config\n"
        "from continuity_checks.core.family import STAGED\n"
        "from tests.sessions.test_history import OP, make\n"
        "family = SessionsFamily(Config())\n"
        f"context = make(Path({str(tmp_path)!r}), family, {{}}, {{'.deltalayer/changes/d.json': '{{}}'}},\n"
        "    '', ('p' * 40,), OP, STAGED)\n"
        "assert list(family.check_commit(context)) == []\n"
        "print('continuity_checks.checks.sessions.history' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.stdout.strip() == "False", done.stderr
