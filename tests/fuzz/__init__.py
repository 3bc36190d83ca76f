"""The fuzz and crash sessions (``nox -s fuzz``, ``nox -s crash``; docs/reliability.md).

The harness (``python -m tests.fuzz``) runs outside pytest; ``test_smoke.py`` here runs a few
hundred inputs of it in the default run, and ``test_regressions.py`` every input it ever caught.
"""
