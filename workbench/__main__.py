"""The ``workbench`` command (``python -m workbench`` and the installed script).

``workbench trec-eval ...`` goes straight to :mod:`workbench.trec_eval_command`, without
loading click or the command group, so that its whole-process time stays close to the
evaluation's own; every other command goes through the click group (``workbench.cli``).
"""

from __future__ import annotations

import sys


def run() -> None:
    if sys.argv[1:2] == ["trec-eval"]:
        from workbench.trec_eval_command import run_trec_eval

        sys.exit(run_trec_eval(sys.argv[2:]))
    from workbench.cli import main

    main()


if __name__ == "__main__":
    run()
