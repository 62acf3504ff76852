"""loadstone.testing: the conformance check plugin authors run against their conventions."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from loadstone.naming import NamingConvention
from loadstone.plugins.naming import snake_case
from loadstone.testing import CheckResult, ConformanceReport, check_naming_convention

BUILT_IN = ["snake_case", "sql_ci_v1", "sql_cs_v1", "direct", "duck_case", "s3_tables"]


class Lower(NamingConvention):
    """A small, correct third-party convention: lower-case, spaces to underscores."""

    @property
    def is_case_sensitive(self) -> bool:
        return False

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        normalized = re.sub(r"_+", "_", re.sub(r"[^a-z0-9]", "_", identifier.lower()))
        return self.shorten_identifier(normalized, identifier, self.max_length)


class IgnoresMaxLength(Lower):
    def normalize_identifier(self, identifier: str) -> str:
        return Lower(None).normalize_identifier(identifier)


class RandomTag(Lower):
    def normalize_identifier(self, identifier: str) -> str:
        normalized = Lower(None).normalize_identifier(identifier)
        if self.max_length and len(normalized) > self.max_length:
            return uuid.uuid4().hex[: self.max_length]
        return normalized


class TruncatesWithoutTag(Lower):
    def normalize_identifier(self, identifier: str) -> str:
        return Lower(None).normalize_identifier(identifier)[: self.max_length]


class ClaimsInsensitiveKeepsCase(NamingConvention):
    @property
    def is_case_sensitive(self) -> bool:
        return False

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        return self.shorten_identifier(identifier.replace(" ", "_"), identifier, self.max_length)


class ClaimsSensitiveLowers(Lower):
    @property
    def is_case_sensitive(self) -> bool:
        return True


class PrefixesEveryTime(Lower):
    def normalize_identifier(self, identifier: str) -> str:
        return super().normalize_identifier("c_" + identifier.strip())


class KeepsSeparatorInParts(NamingConvention):
    @property
    def is_case_sensitive(self) -> bool:
        return True

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        return self.shorten_identifier(identifier + "__x", identifier, self.max_length)


class EmptyForDigits(Lower):
    def normalize_identifier(self, identifier: str) -> str:
        normalized = super().normalize_identifier(identifier)
        return "" if normalized[:1].isdigit() else normalized


class AcceptsBlank(Lower):
    def normalize_identifier(self, identifier: str) -> str:
        if identifier is None or not identifier.strip():
            return "_empty"
        return super().normalize_identifier(identifier)


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_convention_conforms(name: str) -> None:
    report = check_naming_convention(name)
    assert report.ok, report.render()


def test_a_correct_third_party_convention_conforms() -> None:
    report = check_naming_convention(Lower)
    assert report.ok, report.render()
    assert report.convention == __name__


@pytest.mark.parametrize(
    ("broken", "failing_check"),
    [
        (IgnoresMaxLength, "max_length respected"),
        (RandomTag, "tags deterministic (same source, same tag; different source, different tag)"),
        (
            TruncatesWithoutTag,
            "tags deterministic (same source, same tag; different source, different tag)",
        ),
        (ClaimsInsensitiveKeepsCase, "case sensitivity claim consistent with output"),
        (ClaimsSensitiveLowers, "case sensitivity claim consistent with output"),
        (PrefixesEveryTime, "normalize_path is idempotent on its own output"),
        (KeepsSeparatorInParts, "make_path / break_path round trip on normalized parts"),
        (EmptyForDigits, "non-empty output for non-blank input"),
        (AcceptsBlank, "None and blank identifiers raise ValueError"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_a_broken_convention_fails_the_check_it_breaks(
    broken: type[NamingConvention], failing_check: str
) -> None:
    report = check_naming_convention(broken)
    assert not report.ok
    assert not report[failing_check].passed
    assert report[failing_check].detail


def test_the_report_renders_every_check_and_explains_failures() -> None:
    text = check_naming_convention(IgnoresMaxLength).render()
    assert text.splitlines()[0].endswith("DOES NOT CONFORM (7/8 checks passed)")
    assert "  [FAIL] max_length respected" in text
    assert "  [PASS] None and blank identifiers raise ValueError" in text
    assert "characters long" in text


def test_assert_ok_raises_with_the_rendered_report() -> None:
    report = check_naming_convention(IgnoresMaxLength)
    with pytest.raises(AssertionError, match="max_length respected"):
        report.assert_ok()


def test_a_sized_instance_is_checked_at_its_own_max_length() -> None:
    report = check_naming_convention(snake_case.NamingConvention(20))
    assert report.convention == "snake_case_ci_20"
    assert report["max_length respected"].detail == "max_length 20"


def test_an_unsized_instance_is_also_checked_at_the_default_lengths() -> None:
    report = check_naming_convention(snake_case.NamingConvention())
    assert report["max_length respected"].detail == "max_length 10, 63"


def test_custom_samples_are_used() -> None:
    report = check_naming_convention(Lower, samples=["Hello World", "x" * 100])
    assert report.ok, report.render()


def test_anything_else_is_refused() -> None:
    with pytest.raises(TypeError, match="NamingConvention"):
        check_naming_convention(42)  # type: ignore[arg-type]


def test_results_are_values() -> None:
    result = CheckResult("a check", True)
    assert result == CheckResult("a check", True, "")
    report = ConformanceReport("x", (result,))
    assert report.ok and report.failures == ()


def test_the_naming_conformance_fixture_works_in_a_plugin_authors_suite(tmp_path: Path) -> None:
    suite = tmp_path / "test_my_convention.py"
    suite.write_text(
        "from loadstone.plugins.naming import snake_case\n"
        "\n"
        "def test_conforms(naming_conformance):\n"
        "    report = naming_conformance(snake_case.NamingConvention)\n"
        "    assert report.ok, report.render()\n"
    )
    installed = any(ep.value == "loadstone.testing" for ep in entry_points(group="pytest11"))
    plugin = [] if installed else ["-p", "loadstone.testing"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, "-q", "-p", "no:cacheprovider", str(suite)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
