"""Build hook: compile the run reader's C accelerator (workbench/trec/_fastscan.c).

The wheel then carries ``workbench/trec/_fastscan.<platform>.so`` and is tagged for this
platform; an editable install (``pip install -e .``) compiles it next to its source.  Without
a working C compiler (or with ``WORKBENCH_BUILD_NATIVE=0``) the build goes on, warns, and
gives a pure-Python wheel: the run reader then uses numpy alone (same results, slower).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("workbench/trec/_fastscan.c")
MODULE = "workbench.trec._fastscan"


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("WORKBENCH_BUILD_NATIVE") == "0":
            return
        root = Path(self.root)
        editable = version == "editable"
        out_dir = root if editable else Path(tempfile.mkdtemp(prefix="workbench-build-"))
        try:
            built = _compile(root, out_dir)
        except Exception as error:  # any compiler or toolchain failure: a pure wheel instead
            sys.stderr.write(
                f"warning: the C run reader ({SOURCE}) was not built ({error}); "
                "workbench will read runs with numpy alone (same results, slower)\n"
            )
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if not editable:
            build_data["force_include"][str(built)] = str(built.relative_to(out_dir))


def _compile(root: Path, out_dir: Path) -> Path:
    """Compile the extension with setuptools' compiler driver into ``out_dir`` (a package
    tree: out_dir/workbench/trec/_fastscan<EXT_SUFFIX>); returns the file."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    extension = Extension(MODULE, [str(SOURCE)], extra_compile_args=_flags())
    distribution = Distribution({"name": "workbench-native", "ext_modules": [extension]})
    command = build_ext(distribution)
    command.build_lib = str(out_dir)
    command.build_temp = tempfile.mkdtemp(prefix="workbench-build-temp-")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        command.ensure_finalized()
        command.run()
    finally:
        os.chdir(cwd)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    built = out_dir / "workbench" / "trec" / f"_fastscan{suffix}"
    if not built.exists():
        raise FileNotFoundError(built)
    return built


def _flags() -> list[str]:
    if sysconfig.get_platform().startswith("win"):
        return ["/O2"]
    return ["-O2"]
