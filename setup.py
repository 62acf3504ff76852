"""Package discovery for the `core/ -> loadstone`, `plugins/ -> loadstone.plugins` mapping.

pyproject.toml holds all metadata; this file only lists the sub-packages, so that a new
sub-package under core/ or plugins/ ships without editing a hand-kept list.
"""

from setuptools import find_packages, setup


def _mapped(folder: str, package: str) -> list[str]:
    return [package] + [f"{package}.{name}" for name in find_packages(folder)]


setup(packages=_mapped("core", "loadstone") + _mapped("plugins", "loadstone.plugins"))
