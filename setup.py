"""Package discovery for the `core/ -> loadstone`, `plugins/ -> loadstone.plugins` mapping,
and the relational normalizer's C hot path and native engine core.

pyproject.toml holds all metadata; this file only lists the sub-packages, so that a new
sub-package under core/ or plugins/ ships without editing a hand-kept list, and declares the
two extension modules. Both are optional at build time (a machine without a C/C++ compiler or
simdjson still installs loadstone, and the engine runs its pure-Python reference), but the
test suite fails when one is missing, so CI never measures the slow path by accident.
"""

from setuptools import Extension, find_packages, setup


def _mapped(folder: str, package: str) -> list[str]:
    return [package] + [f"{package}.{name}" for name in find_packages(folder)]


setup(
    packages=_mapped("core", "loadstone") + _mapped("plugins", "loadstone.plugins"),
    ext_modules=[
        Extension(
            "loadstone.plugins.normalizers.relational._speedups",
            ["plugins/normalizers/relational/_speedups.c"],
            depends=["plugins/normalizers/relational/iso_text.h"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        # the native engine core (issue 37): simdjson (Debian's libsimdjson-dev) parses a
        # chunk's lines straight into Arrow column buffers; optional like the one above
        Extension(
            "loadstone.plugins.normalizers.relational._native_core",
            ["plugins/normalizers/relational/_native_core.cpp"],
            depends=["plugins/normalizers/relational/iso_text.h"],
            language="c++",
            libraries=["simdjson"],
            extra_compile_args=["-O2", "-std=c++20"],
            optional=True,
        ),
    ],
)
