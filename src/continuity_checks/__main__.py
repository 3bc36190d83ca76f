from continuity_checks.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
