"""The ``workbench`` command (``python -m workbench`` and the installed script).

``workbench trec-eval ...`` goes straight to :mod:`workbench.trec_eval_command`, without
loading click or the command group, so that its whole-process time stays close to the
evaluation's own; every other command goes through the click group (``workbench.cli``).
"""

from __future__ import annotations

import sys

from workbench.bulk import skip_exit_collections


def run() -> None:
    """Run the command; then skip the interpreter's final collections (the command has
    released its store: `workbench.bulk.skip_exit_collections`)."""
    try:
        if sys.argv[1:2] == ["trec-eval"]:
            from workbench.trec_eval_command import run_trec_eval

            sys.exit(run_trec_eval(sys.argv[2:]))
        from workbench.cli import main

        main()
    finally:
        skip_exit_collections()


if __name__ == "__main__":
    run()
