"""Every public error lives in ``loadstone.exceptions`` (one module per step inside it) and is
exported at the top level."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import loadstone
import loadstone.plugins
from loadstone import exceptions

#: defined beside what they subclass (``requests``' errors); found through the module anyway
ELSEWHERE = {"RequestFailed", "HTTPStatusError"}


def _all_modules() -> list[str]:
    names = []
    for package in (loadstone, loadstone.plugins):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):  # importing it runs the CLI
                names.append(info.name)
    return names


def _public_errors_of(module_name: str) -> set[type[BaseException]]:
    module = importlib.import_module(module_name)
    return {
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, exceptions.LoadstoneError)
        and value.__module__ == module_name
    }


def test_every_error_class_is_defined_in_the_exceptions_module() -> None:
    strays = {
        f"{error.__module__}.{error.__name__}"
        for name in _all_modules()
        for error in _public_errors_of(name)
        if not name.startswith("loadstone.exceptions") and error.__name__ not in ELSEWHERE
    }
    assert strays == set()


def test_every_error_class_is_exported_at_the_top_level() -> None:
    defined = {
        name
        for name, value in vars(exceptions).items()
        if inspect.isclass(value) and issubclass(value, exceptions.LoadstoneError)
    }
    missing = {name for name in defined | ELSEWHERE if getattr(loadstone, name, None) is None}
    assert missing == set()


def test_the_errors_defined_elsewhere_are_found_through_the_module() -> None:
    for name in ELSEWHERE:
        error = getattr(exceptions, name)
        assert issubclass(error, exceptions.LoadstoneError)
        assert getattr(loadstone, name) is error


def test_a_failed_step_reads_as_one_sentence_per_part_whatever_the_cause_ends_with() -> None:
    for cause in ("the worker died.", "the worker died"):
        error = exceptions.PipelineStepFailed("p", "normalize", "1.5", ValueError(cause))
        assert "died. The package is kept" in str(error) and ".." not in str(error)
