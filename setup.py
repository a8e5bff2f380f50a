"""Declares the compiled extensions; all metadata lives in pyproject.toml.

Every ``src/freshcore/*.pyx`` becomes the extension ``freshcore.<name>``.
Set ``FRESHCORE_DEBUG_CYTHON=1`` to build with bounds and initialisation
checks switched back on (for a debug test run).
"""
import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("FRESHCORE_DEBUG_CYTHON", "") not in ("", "0")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "binding": True,
    "embedsignature": True,
    "cpow": True,
}

# No -march=native: the same flags make the wheels users install.
# -ffp-contract=off: no fused multiply-adds behind our back. On targets where FMA is baseline
# (aarch64, Apple silicon) GCC and clang would otherwise contract a*b + c differently in
# differently inlined copies of one formula, and the streaming and batched estimators must give
# the same bits.
compile_args = (["-O3"] if not DEBUG else ["-O0", "-g"]) + ["-ffp-contract=off"]
extensions = [
    Extension(
        f"freshcore.{pyx.stem}",
        [str(pyx)],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        include_dirs=["src/freshcore"],  # the C headers (src/freshcore/*.h) beside the .pyx
        depends=[str(h) for h in sorted(Path("src/freshcore").glob("*.h"))],
    )
    for pyx in sorted(Path("src/freshcore").glob("*.pyx"))
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=directives,
        annotate=os.environ.get("FRESHCORE_ANNOTATE", "") not in ("", "0"),
    ),
)
