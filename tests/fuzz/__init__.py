"""The fuzz and crash sessions (``nox -s fuzz``, ``nox -s crash``; docs/reliability.md).

Not collected by the default test run (no ``test_*.py`` here); ``tests/test_fuzz_smoke.py`` runs
a few hundred inputs of the same harness there.
"""
