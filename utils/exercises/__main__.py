"""The instructors' page's table of exercises, from the exercise registry.

    python -m utils.exercises marking            print the table (Markdown)
    python -m utils.exercises marking --write    put it into chapters/instructors.md

Each exercise's row (its minutes, what a full answer shows, what earns partial credit)
comes from its ``register(...)`` in ``utils/exercises/chNN.py``; ``tests/test_checkers.py``
fails while the page's table and the registry's differ.
"""

import sys

from . import INSTRUCTORS_PAGE, marking_table, write_marking_table


def main(argv: list[str]) -> int:
    """Run the command; return its exit status (2 for a usage error)."""
    if not argv or argv[0] != "marking" or set(argv[1:]) - {"--write"}:
        print(__doc__)
        return 2
    if "--write" in argv:
        changed = write_marking_table()
        print(f"{INSTRUCTORS_PAGE}: {'table updated' if changed else 'table already up to date'}")
    else:
        print(marking_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
