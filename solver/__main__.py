"""``python -m solver`` and the ``solve`` command: the command line of `solver.cli`, loaded here so that Ctrl-C
while its libraries load ends as quietly as Ctrl-C while it solves."""

import sys


def main() -> int:
    """Load `solver.cli` and run its `main`; exit status 130, one line, for Ctrl-C while loading."""
    try:
        from solver.cli import main as cli_main
    except KeyboardInterrupt:
        print("solve: interrupted", file=sys.stderr)
        return 130  # solver.cli.status.INTERRUPTED, which may not have loaded
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
