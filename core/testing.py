"""Conformance checks for naming conventions, for plugin authors and their test suites.

A naming convention decides the names of every table and column a pipeline creates, so a
subtle flaw (a path that normalizes differently the second time, a shortened name longer than
the destination allows, a tag that changes between runs) shows up late, as a duplicated
column in a warehouse. :func:`check_naming_convention` exercises a convention with messy,
realistic identifiers and reports each property it relies on::

    from loadstone.testing import check_naming_convention

    def test_my_convention_conforms():
        report = check_naming_convention(my_package.my_naming.NamingConvention)
        assert report.ok, report.render()

Installed with loadstone, this module is also a pytest plugin: the fixture
``naming_conformance`` returns :func:`check_naming_convention`.

The built-in conventions reproduce dlt's identifiers exactly, so the checks state only what
those identifiers guarantee (for example, the SQL conventions turn ``__`` into ``""``, hence
"non-empty output" is checked on identifiers that contain a letter or a digit).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

__all__ = [
    "DEFAULT_MAX_LENGTHS",
    "CheckResult",
    "ConformanceReport",
    "check_naming_convention",
    "default_samples",
    "naming_conformance",
]

#: Sizes the length checks use when a class (not a sized instance) is checked.
DEFAULT_MAX_LENGTHS: tuple[int, ...] = (10, 63)

#: Hand-picked identifiers that broke conventions before: camelCase, digits first, Unicode,
#: emoji, punctuation, separators inside, white space around, quotes, newlines, long ones.
_HAND_PICKED: tuple[str, ...] = (
    "DealFlow",
    "createdAt",
    "HTTPResponse",
    "getHTTPResponseCode",
    "2fa",
    "a+b",
    "user@host",
    "trailing__",
    "__leading",
    "a__b",
    "column__value",
    "a___b",
    "  spaced out  ",
    "Zürich",
    "naïve café",
    "💥boom",
    "emoji 🙂 inside",
    "a▶b",
    "a\nb",
    'say "hi"',
    "it's",
    "tab\there",
    "CamelCase_with_Snake",
    "x1",
    "١٢٣abc",
    "ALLCAPS",
    "a-b-c",
    "dots.in.name",
    "_dlt_id",
    "x" * 120,
    "VeryLongIdentifier" * 12,
    "Ω" * 80 + "end",
)


def default_samples(count: int = 200, seed: int = 7) -> list[str]:
    """Hand-picked identifiers plus ``count`` seeded random ones (the same on every run).

    Every sample contains an ASCII letter or digit, so every convention must produce a
    non-empty identifier from it.
    """
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "_ -+*@|.▶\"'\n\t" + "éÜßΩж漢💥"
    samples = list(_HAND_PICKED)
    for _ in range(count):
        length = rng.choice((1, 3, 8, 20, 70, 150))
        text = "".join(rng.choice(alphabet) for _ in range(length))
        samples.append(text + rng.choice(string.ascii_letters + string.digits))
    return samples


@attrs.frozen
class CheckResult:
    """The outcome of one conformance check; ``detail`` explains a failure (or a pass)."""

    name: str
    passed: bool
    detail: str = ""


@attrs.frozen
class ConformanceReport:
    """All checks of one convention; ``ok`` when every check passed."""

    convention: str
    results: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return all(result.passed for result in self.results)

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if not result.passed)

    def __getitem__(self, name: str) -> CheckResult:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def render(self) -> str:
        """A readable report: one line per check, failure details indented below it."""
        passed = sum(result.passed for result in self.results)
        verdict = "conforms" if self.ok else "DOES NOT CONFORM"
        lines = [
            f"naming convention {self.convention}: {verdict} "
            f"({passed}/{len(self.results)} checks passed)"
        ]
        for result in self.results:
            lines.append(f"  [{'PASS' if result.passed else 'FAIL'}] {result.name}")
            if result.detail and not result.passed:
                lines.extend(f"      {line}" for line in result.detail.splitlines())
        return "\n".join(lines)

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` with the rendered report unless every check passed."""
        if not self.ok:
            raise AssertionError(self.render())


# --- the checks ------------------------------------------------------------------------------

_MAX_SHOWN = 5
_MAX_LINE = 240
_TAGS_CHECK = "tags deterministic (same source, same tag; different source, different tag)"


def _result(name: str, problems: list[str], passed_detail: str = "") -> CheckResult:
    if not problems:
        return CheckResult(name, True, passed_detail)
    shown = [
        problem if len(problem) <= _MAX_LINE else problem[: _MAX_LINE - 3] + "..."
        for problem in problems[:_MAX_SHOWN]
    ]
    more = len(problems) - len(shown)
    detail = "\n".join(shown) + (f"\n... and {more} more" if more else "")
    return CheckResult(name, False, detail)


def _label(convention: object) -> str:
    try:
        return str(convention)
    except Exception:
        return type(convention).__name__


@attrs.define
class _Probe:
    """Calls a convention's operations; a raised exception becomes a reported problem."""

    convention: NamingConvention
    problems: list[str]

    @property
    def label(self) -> str:
        return _label(self.convention)

    def __call__(self, op: str, *args: Any) -> Any:
        try:
            return getattr(self.convention, op)(*args)
        except Exception as error:
            shown = ", ".join(repr(arg) for arg in args)
            self.problems.append(
                f"{self.label}.{op}({shown}) raised {type(error).__name__}: {error}"
            )
            return None

    def attribute(self, name: str) -> Any:
        try:
            return getattr(self.convention, name)
        except Exception as error:
            self.problems.append(f"{self.label}.{name} raised {type(error).__name__}: {error}")
            return None


def _check_non_empty(
    conventions: Sequence[NamingConvention], samples: Sequence[str]
) -> CheckResult:
    problems: list[str] = []
    for convention in conventions:
        probe = _Probe(convention, problems)
        for sample in samples:
            for op in ("normalize_identifier", "normalize_table_identifier", "normalize_path"):
                output = probe(op, sample)
                if output is not None and (not isinstance(output, str) or not output):
                    problems.append(
                        f"{probe.label}.{op}({sample!r}) returned {output!r}, "
                        "expected a non-empty str"
                    )
    return _result("non-empty output for non-blank input", problems)


def _check_blank_rejected(conventions: Sequence[NamingConvention]) -> CheckResult:
    problems: list[str] = []
    for convention in conventions:
        for blank in (None, "", "   ", "\t\n"):
            what = f"{_label(convention)}.normalize_identifier({blank!r})"
            try:
                output = convention.normalize_identifier(blank)  # type: ignore[arg-type]  # a wrong input on purpose
            except ValueError:
                continue
            except Exception as error:
                problems.append(f"{what} raised {type(error).__name__}, expected a ValueError")
                continue
            problems.append(f"{what} returned {output!r}, expected a ValueError")
    return _result("None and blank identifiers raise ValueError", problems)


def _unambiguous_and_unshortened(convention: NamingConvention, source: str, output: str) -> bool:
    """Whether ``output`` breaks back into the normalized parts of ``source``, unshortened.

    Only then can idempotence be asked for: dlt's own conventions re-break a shortened path at
    other places (a tail ``2_ab`` after a separator becomes ``_2_ab``), and a part that ends in
    a separator character runs into the separator (sql_cs_v1: ``:__0`` -> ``____0`` -> ``_0``).
    Identical identifiers matter more than this property, so those outputs are not checked.
    """
    parts = [convention.normalize_identifier(part) for part in convention.break_path(source)]
    if convention.make_path(*parts) != output:
        return False  # shortened as a whole
    return convention.break_path(output) == [part for part in parts if part.strip()]


def _check_idempotent(
    conventions: Sequence[NamingConvention], samples: Sequence[str]
) -> CheckResult:
    problems: list[str] = []
    checked = 0
    for convention in conventions:
        probe = _Probe(convention, problems)
        for sample in samples:
            first = probe("normalize_path", sample)
            if not isinstance(first, str) or not first:
                continue
            try:
                comparable = _unambiguous_and_unshortened(convention, sample, first)
            except Exception as error:
                problems.append(f"{probe.label}: breaking {sample!r} raised {error!r}")
                continue
            if not comparable:
                continue
            checked += 1
            second = probe("normalize_path", first)
            if second is not None and second != first:
                problems.append(
                    f"{probe.label}: normalize_path({sample!r}) = {first!r}, "
                    f"but normalize_path({first!r}) = {second!r}"
                )
    if not checked:
        problems.append("no sample produced an unambiguous, unshortened path to re-normalize")
    return _result(
        "normalize_path is idempotent on its own output",
        problems,
        f"{checked} unambiguous, unshortened outputs re-normalized",
    )


def _check_max_length(
    conventions: Sequence[NamingConvention], samples: Sequence[str]
) -> CheckResult:
    problems: list[str] = []
    sized = [convention for convention in conventions if convention.max_length]
    if not sized:
        return CheckResult(
            "max_length respected", False, "no convention with a max_length to check"
        )
    for convention in sized:
        probe = _Probe(convention, problems)
        limit = convention.max_length or 0
        for index, sample in enumerate(samples):
            outputs = {
                op: probe(op, sample)
                for op in (
                    "normalize_identifier",
                    "normalize_table_identifier",
                    "normalize_path",
                    "normalize_tables_path",
                )
            }
            neighbour = probe("normalize_identifier", samples[(index + 1) % len(samples)])
            if outputs["normalize_identifier"] is not None and neighbour is not None:
                outputs["shorten_fragments"] = probe(
                    "shorten_fragments", outputs["normalize_identifier"], neighbour
                )
            for op, output in outputs.items():
                if isinstance(output, str) and len(output) > limit:
                    problems.append(
                        f"{probe.label}.{op}({sample!r}) is {len(output)} characters long: "
                        f"{output!r}"
                    )
    checked = ", ".join(str(convention.max_length) for convention in sized)
    return _result("max_length respected", problems, f"max_length {checked}")


def _check_tags(conventions: Sequence[NamingConvention], samples: Sequence[str]) -> CheckResult:
    problems: list[str] = []
    sized = [convention for convention in conventions if convention.max_length]
    if not sized:
        problems.append("no convention with a max_length: tags are never made")
    for convention in sized:
        probe = _Probe(convention, problems)
        limit = convention.max_length or 0
        try:
            fresh: NamingConvention | None = type(convention)(convention.max_length)
        except Exception as error:
            problems.append(f"{type(convention).__name__}({limit}) raised {error!r}")
            fresh = None
        fresh_probe = _Probe(fresh or convention, problems)
        long_samples = [sample for sample in samples if len(sample) > limit]
        for sample in long_samples or ["identifier" * (limit // 5 + 2)]:
            first = probe("normalize_identifier", sample)
            again = probe("normalize_identifier", sample)
            other = fresh_probe("normalize_identifier", sample)
            if not first == again == other:
                problems.append(
                    f"{probe.label}.normalize_identifier({sample!r}) gave {first!r}, "
                    f"then {again!r}, on a new instance {other!r}"
                )
        # two sources sharing head and tail differ only in the middle: only a tag tells them apart
        left = "a" * (limit * 2) + "X" + "a" * (limit * 2)
        right = "a" * (limit * 2) + "Y" + "a" * (limit * 2)
        left_out = probe("normalize_identifier", left)
        right_out = probe("normalize_identifier", right)
        if left_out is not None and left_out == right_out:
            problems.append(
                f"{probe.label}: {left!r} and {right!r} shorten to the same {left_out!r}; "
                "the tag must come from the source identifier"
            )
    return _result(_TAGS_CHECK, problems)


def _check_round_trip(
    conventions: Sequence[NamingConvention], samples: Sequence[str]
) -> CheckResult:
    problems: list[str] = []
    for convention in conventions:
        probe = _Probe(convention, problems)
        separator = convention.PATH_SEPARATOR
        parts = []
        for sample in samples:
            normalized = probe("normalize_identifier", sample)
            # a part that begins or ends with a separator character makes the boundary
            # ambiguous (duck_case keeps "a_"): those parts cannot round-trip by design
            if (
                isinstance(normalized, str)
                and normalized
                and normalized[0] not in separator
                and normalized[-1] not in separator
            ):
                parts.append(normalized)
        for start in range(0, len(parts), 3):
            group = parts[start : start + 3]
            path = probe("make_path", *group)
            broken = probe("break_path", path) if path is not None else None
            if broken is not None and list(broken) != group:
                problems.append(f"{probe.label}: break_path(make_path(*{group!r})) = {broken!r}")
    return _result("make_path / break_path round trip on normalized parts", problems)


_CASE_WORDS = ("abc", "name", "value", "x", "created")


def _check_case_claim(
    conventions: Sequence[NamingConvention], samples: Sequence[str]
) -> CheckResult:
    problems: list[str] = []
    for convention in conventions:
        probe = _Probe(convention, problems)
        claim = probe.attribute("is_case_sensitive")
        if not isinstance(claim, bool):
            problems.append(f"{probe.label}.is_case_sensitive is {claim!r}, expected a bool")
            continue
        variants = {
            word: [
                probe("normalize_identifier", variant)
                for variant in (word, word.upper(), word.capitalize())
            ]
            for word in _CASE_WORDS
        }
        if claim:
            if all(len(set(outputs)) == 1 for outputs in variants.values()):
                problems.append(
                    f"{probe.label} claims to be case-sensitive but maps every case variant of "
                    f"{list(variants)!r} to the same identifier"
                )
            continue
        for word, outputs in variants.items():
            if len({output.casefold() for output in outputs if isinstance(output, str)}) > 1:
                problems.append(
                    f"{probe.label} claims to be case-insensitive but maps {word!r}, "
                    f"{word.upper()!r}, {word.capitalize()!r} to {outputs!r}"
                )
        texts = [
            output
            for output in (probe("normalize_identifier", sample) for sample in samples)
            if isinstance(output, str)
        ]
        if not (all(t == t.lower() for t in texts) or all(t == t.upper() for t in texts)):
            mixed = [t for t in texts if t != t.lower()][:3]
            problems.append(
                f"{probe.label} claims to be case-insensitive but its identifiers are not folded "
                f"to one case, e.g. {mixed!r}: a case-insensitive destination would merge "
                "identifiers that differ only in case"
            )
    return _result("case sensitivity claim consistent with output", problems)


def _check_str(conventions: Sequence[NamingConvention]) -> CheckResult:
    problems: list[str] = []
    for convention in conventions:
        probe = _Probe(convention, problems)
        name = probe("name")
        text = probe("__str__")
        sensitive = probe.attribute("is_case_sensitive")
        if name is None or text is None:
            continue
        expected = name + ("_cs" if sensitive else "_ci")
        if convention.max_length:
            expected += f"_{convention.max_length}"
        if text != expected:
            problems.append(f"str(convention) is {text!r}, expected {expected!r}")
    return _result("name() and str() identify the convention", problems)


# --- entry point ----------------------------------------------------------------------------


def _resolve(
    convention_or_class: NamingConvention | type[NamingConvention] | str,
    max_lengths: Sequence[int],
) -> tuple[str, list[NamingConvention]]:
    from loadstone.naming import NamingConvention

    target: Any = convention_or_class
    if isinstance(target, str):
        from loadstone.plugin_manager import naming_convention_class

        target = naming_convention_class(target)
    if isinstance(target, NamingConvention):
        conventions = [target]
        if not target.max_length:
            conventions += [type(target)(max_length) for max_length in max_lengths]
        return str(target), conventions
    if isinstance(target, type) and issubclass(target, NamingConvention):
        conventions = [target()]
        conventions += [target(max_length) for max_length in max_lengths]
        return target.name(), conventions
    raise TypeError(
        f"expected a NamingConvention subclass, an instance or a plugin name, got {target!r}"
    )


def check_naming_convention(
    convention_or_class: NamingConvention | type[NamingConvention] | str,
    *,
    samples: Iterable[str] | None = None,
    max_lengths: Sequence[int] = DEFAULT_MAX_LENGTHS,
) -> ConformanceReport:
    """Check a naming convention against the properties loadstone relies on.

    ``convention_or_class``: a :class:`~loadstone.naming.NamingConvention` subclass (checked
    unsized and at each of ``max_lengths``), an instance (checked as is, plus sized copies if
    it has no ``max_length``), or a plugin name. ``samples``: identifiers to use, each with at
    least one letter or digit (default :func:`default_samples`).
    """
    label, conventions = _resolve(convention_or_class, max_lengths)
    sample_list = list(samples) if samples is not None else default_samples()
    results = (
        _check_non_empty(conventions, sample_list),
        _check_blank_rejected(conventions),
        _check_idempotent(conventions, sample_list),
        _check_max_length(conventions, sample_list),
        _check_tags(conventions, sample_list),
        _check_round_trip(conventions, sample_list),
        _check_case_claim(conventions, sample_list),
        _check_str(conventions),
    )
    return ConformanceReport(label, results)


# --- pytest plugin (entry point group ``pytest11``) -----------------------------------------

try:
    import pytest
except ImportError:  # pytest is only needed by test suites; the checks work without it
    pytest = None  # type: ignore[assignment]  # pytest is optional at run time

if pytest is not None:

    @pytest.fixture
    def naming_conformance() -> Callable[..., ConformanceReport]:
        """The conformance check, as a fixture: ``naming_conformance(MyConvention).ok``."""
        return check_naming_convention
