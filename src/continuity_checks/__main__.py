"""The process entry point: ``python -m continuity_checks`` and the ``continuity`` script."""

import gc

#: Allocations of tracked objects between two collections of the youngest generation in the
#: program's own process (the interpreter's default is 700). The commit hook of a few files
#: makes fewer in all (one delta: about 24,000), so that it collects nothing before it exits;
#: a longer run still collects, each time this many more are made.
YOUNG = 50_000


def main() -> None:
    """The command line (:func:`continuity_checks.cli.run`), with the collector's first
    threshold at :data:`YOUNG` from before the program's modules are imported (``typing``
    among them: its import here would be made under the default threshold); it exits."""
    gc.set_threshold(YOUNG, *gc.get_threshold()[1:])
    from continuity_checks.cli import run

    run()


if __name__ == "__main__":
    main()
