"""The process entry point: ``python -m continuity_checks`` and the ``continuity`` script."""

import gc

#: Allocations of tracked objects between two collections of the youngest generation while the
#: program's command line is imported (the interpreter's default is 700): the objects it makes
#: live until the process exits, and a collection set off by them would only traverse them.
YOUNG = 50_000


def main() -> None:
    """The command line (:func:`continuity_checks.cli.run`), imported with the collector's
    first threshold at :data:`YOUNG` (``typing`` among its imports: its import here would be
    made under the default threshold), and frozen once imported (as ``cli`` freezes what a
    command's own imports make), so that no collection of the run traverses it; the run itself
    collects with the thresholds the process had, so that the garbage a long run makes in
    reference cycles does not pile up. It exits."""
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG, *thresholds[1:])
    from continuity_checks.cli import run

    gc.freeze()
    gc.set_threshold(*thresholds)
    run()


if __name__ == "__main__":
    main()
