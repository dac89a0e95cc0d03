"""Loading on first use, so that importing a module does not import what only some of its
callers need:

- `lazy_attributes`: names a package re-exports but loads on first use (PEP 562), so that
  importing one of its submodules does not import the others;
- `stats`, `special` and `optimize`: scipy's modules, imported at the first attribute read.
  Their imports are over a second of CPU, most of a CLI command's start-up, and most commands
  (imports, pools, exports, progress) never compute a test or an interval. Modules write
  `from workbench.lazy import stats` where they would write `from scipy import stats`; type
  checkers see scipy's own modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``name`` comes from the module ``homes[name]``
    (absolute, or relative to ``package`` when it starts with a dot), imported on first use."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home, package), name)

    return __getattr__


class ModuleOnFirstUse:
    """Stands for the module `name`: each attribute read imports it (once) and reads it there."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


if TYPE_CHECKING:
    from scipy import optimize as optimize
    from scipy import special as special
    from scipy import stats as stats
else:
    optimize = ModuleOnFirstUse("scipy.optimize")
    special = ModuleOnFirstUse("scipy.special")
    stats = ModuleOnFirstUse("scipy.stats")
