"""`python -m mrc_transport build|status`: the compiled transport (compiled.py)."""

from __future__ import annotations

import argparse
import sys

from mrc_transport import compiled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrc_transport",
                                     description=compiled.__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the transport's modules unless already built")
    b.add_argument("--force", action="store_true", help="build again even when cached")
    b.add_argument("--optional", action="store_true",
                   help="on failure print one warning line and exit 0 (the Python transport "
                        "then runs)")
    sub.add_parser("status", help="which transport a process started here runs, and why")
    args = parser.parse_args(argv)
    if args.command == "status":
        print(compiled.status())
        return 0
    try:
        folder = compiled.build(force=args.force)
    except compiled.BuildError as exc:
        if not args.optional:
            print(exc, file=sys.stderr)
            return 1
        print(f"warning: {exc.summary}; the transport runs as Python", file=sys.stderr)
        return 0
    print(f"mrc_transport: compiled modules in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
