"""Bytecode kept between test runs, outside the checkout, where $PYTHONDONTWRITEBYTECODE is set.

Imported by tests/conftest.py before the package. With $PYTHONDONTWRITEBYTECODE set, every
pytest worker compiled the package and assert-rewrote every test module again at its start
(7 s of CPU of its 13 s), and each command or server the tests start compiled the package
again. Here the bytecode goes to a folder of the temporary directory instead (never the
checkout), for this process and the processes it starts; an explicit $PYTHONPYCACHEPREFIX is
kept. Python and pytest check each cached file against its source's time and size.
"""

from __future__ import annotations

import os
import sys
import tempfile

if sys.dont_write_bytecode and not sys.pycache_prefix:
    sys.pycache_prefix = os.path.join(tempfile.gettempdir(), f"workbench-pycache-{os.getuid()}")
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
