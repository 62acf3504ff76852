"""Differential check of loadstone's naming conventions against dlt, live.

Generates fresh random identifiers (seeded, so a run can be repeated), runs every operation of
every built-in convention at several ``max_length`` values through loadstone here and through
dlt in another interpreter (``--dlt-python``, a throwaway environment with dlt installed; dlt
is used strictly as a black box through its public modules), and prints the number of
differences with the first few of them.

    python bench/naming_differential.py --dlt-python /work/venvs/dlt/bin/python \
        --seed 7 --count 3000

The same file, run by the dlt interpreter with ``--oracle``, is that black box: it reads the
cases as JSON on stdin and writes dlt's outputs as JSON on stdout. The case generator and the
operation runner are plain standard-library code so both sides share them; the recorded
fixture ``tests/fixtures/naming/dlt_cases.json.gz`` has the same layout.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import string
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

CONVENTIONS = ["snake_case", "sql_ci_v1", "sql_cs_v1", "direct", "duck_case", "s3_tables"]
MAX_LENGTHS: dict[str, list[int | None]] = {
    name: [None, 10, 63, 127] for name in CONVENTIONS if name != "s3_tables"
}
MAX_LENGTHS["s3_tables"] = [None, 10, 63, 127, 255]
#: (op, input list) of the per-instance operations; results align with their input list.
OPERATIONS = [
    ("normalize_identifier", "identifiers"),
    ("normalize_table_identifier", "identifiers"),
    ("normalize_path", "paths"),
    ("normalize_tables_path", "paths"),
    ("break_path", "paths"),
    ("make_path", "fragments"),
    ("shorten_fragments", "fragments"),
    ("shorten_normalized_fragments", "fragment_indexes"),
]
SHORTEN_MAX_LENGTHS = [None, 0, 1, 5, 6, 7, 8, 10, 11, 20, 63]

# --- case generation (deterministic for a seed) ---------------------------------------------

_ASCII = string.ascii_letters + string.digits
_PUNCTUATION = string.punctuation + "▶" * 4 + "_" * 8
_SPECIAL = "+-*@|▶\"'\n\r\t_ "
_UNICODE_LETTERS = "éüßçøÅÆŒİıſǅΣσςДжあ漢字한ÀÉÎÕÜÿĀžƒǆǈΩѣ"
_UNICODE_DIGITS = "٣९１²⅓"
_EMOJI = ["💥", "🙂", "👍🏽", "🇵🇱", "🧑‍💻", "✨", "❤️"]
_WHITESPACE = (
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u00a0\u1680\u2000\u2003\u2028\u2029\u202f\u205f\u3000"
)
_ODD = "\u200b\u200d\ufeff\x00\x7f\u0301\u0300\u00ad"
_WORDS = [
    "deal",
    "flow",
    "created",
    "at",
    "http",
    "response",
    "id",
    "user",
    "URL",
    "Json",
    "API",
    "value",
    "x",
    "a",
    "B",
    "data",
    "Type",
    "ETag",
    "iOS",
    "v2",
    "max",
    "min",
    "_dlt",
    "loads",
    "HTTPResponse",
    "XMLHttpRequest",
    "userID",
    "ABCdef",
    "fooBAR",
    "a1B2",
    "col",
    "Zürich",
]


def _random_char(rng: random.Random) -> str:
    pool = rng.random()
    if pool < 0.45:
        return rng.choice(_ASCII)
    if pool < 0.58:
        return rng.choice(_PUNCTUATION)
    if pool < 0.68:
        return rng.choice(_SPECIAL)
    if pool < 0.78:
        return rng.choice(_UNICODE_LETTERS)
    if pool < 0.82:
        return rng.choice(_UNICODE_DIGITS)
    if pool < 0.88:
        return rng.choice(_EMOJI)
    if pool < 0.95:
        return rng.choice(_WHITESPACE)
    return rng.choice(_ODD)


def _random_text(rng: random.Random, length: int) -> str:
    return "".join(_random_char(rng) for _ in range(length))


def _word_identifier(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(1, 5))]
    style = rng.randrange(7)
    if style == 0:  # camelCase
        return words[0].lower() + "".join(w[:1].upper() + w[1:] for w in words[1:])
    if style == 1:  # PascalCase
        return "".join(w[:1].upper() + w[1:] for w in words)
    if style == 2:  # SCREAMING
        return "_".join(words).upper()
    if style == 3:  # as-is with separators
        return rng.choice(["_", "__", "-", " ", ".", "___", "▶", "|"]).join(words)
    if style == 4:  # digits first
        return str(rng.randint(0, 999)) + "".join(words)
    if style == 5:  # trailing/leading underscores
        return rng.choice(["", "_", "__"]) + "".join(words) + rng.choice(["_", "__", "___", ""])
    return "".join(words)


def _long_identifier(rng: random.Random) -> str:
    length = rng.randint(100, 400)
    if rng.random() < 0.5:
        text = ""
        while len(text) < length:
            text += _word_identifier(rng) + rng.choice(["", "_", "__", " "])
        return text[:length]
    return _random_text(rng, length)


def generate_identifier(rng: random.Random) -> str:
    """One random identifier; the mix covers every rule of every convention."""
    kind = rng.random()
    if kind < 0.25:
        text = _random_text(rng, rng.randint(1, 12))
    elif kind < 0.50:
        text = _word_identifier(rng)
    elif kind < 0.62:
        text = _long_identifier(rng)
    elif kind < 0.72:
        text = _word_identifier(rng) + "__" + _word_identifier(rng)
    elif kind < 0.78:
        text = "".join(rng.choice("_▶ -+*@|\"'\n") for _ in range(rng.randint(1, 6)))
    elif kind < 0.86:
        text = _random_text(rng, rng.randint(13, 99))
    elif kind < 0.93:
        text = rng.choice(_EMOJI) + _word_identifier(rng) + rng.choice(_UNICODE_LETTERS)
    else:
        text = "".join(rng.choice(_ASCII + "_") for _ in range(rng.randint(1, 70)))
    if rng.random() < 0.15:
        text = rng.choice(_WHITESPACE) * rng.randint(1, 3) + text
    if rng.random() < 0.15:
        text = text + rng.choice(_WHITESPACE) * rng.randint(1, 3)
    return text


def generate_path(rng: random.Random, identifiers: list[str]) -> str:
    """A compound identifier made of random parts (blank parts and odd separators too)."""
    parts = [rng.choice(identifiers) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.2:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(["", " ", "  ", "\t"]))
    separator = rng.choice(["__", "__", "__", "▶", "___", "____", " __ ", "_"])
    return separator.join(parts)


def generate_cases(seed: int, count: int) -> dict[str, Any]:
    """The inputs of one differential run: identifiers, paths, fragment lists, shorten calls."""
    rng = random.Random(seed)
    fixed = [
        "DealFlow",
        "createdAt",
        "HTTPResponse",
        "2fa",
        "a+b",
        "trailing__",
        "a__b",
        "__",
        "_",
        "___",
        "  x  ",
        "_dlt_loads",
        "_dlt_version",
        "a▶b",
        "💥",
        "é",
        "a\nb",
        '"q"',
        "'q'",
        " ",
        "",
        "\t\n",
        "x" * 300,
        "Ab__Cd",
        "a__",
        "1_",
        "_1_",
        "İstanbul",
        "ǅemal",
    ]
    identifiers: list[Any] = [*fixed, None]
    identifiers += [generate_identifier(rng) for _ in range(count)]
    if count >= 100:  # a lone surrogate cannot be encoded: both sides must fail the same way
        identifiers += ["abc\ud800def" * 10, "\udfff"]
    texts = [identifier for identifier in identifiers if isinstance(identifier, str)]
    paths: list[Any] = [*identifiers, *(generate_path(rng, texts) for _ in range(count // 2))]
    fragments: list[Any] = [[]]
    for _ in range(count // 3):
        fragments.append([rng.choice(texts) for _ in range(rng.randint(1, 5))])
    fragment_indexes = [
        [rng.randrange(len(fixed), len(identifiers)) for _ in range(rng.randint(1, 4))]
        for _ in range(count // 4)
    ]
    shorten = []
    for _ in range(count // 4):
        normalized = rng.choice(texts)
        source = rng.choice(texts) if rng.random() < 0.5 else normalized
        shorten.append([normalized, source, rng.choice(SHORTEN_MAX_LENGTHS)])
    return {
        "seed": seed,
        "identifiers": identifiers,
        "paths": paths,
        "fragments": fragments,
        "fragment_indexes": fragment_indexes,
        "shorten": shorten,
    }


# --- running the operations (the same code drives dlt and loadstone) --------------------------


def _outcome(call: Callable[[], Any]) -> Any:
    """A call's result, or ``{"error": <exception class name>}`` when it raises."""
    try:
        result = call()
    except Exception as error:  # any failure is an outcome to compare
        return {"error": type(error).__name__}
    if isinstance(result, tuple):
        result = list(result)
    return result


def _operation(instance: Any, op: str, item: Any, identifiers: list[Any]) -> Callable[[], Any]:
    if op in ("make_path", "shorten_fragments"):
        return lambda: getattr(instance, op)(*item)
    if op == "shorten_normalized_fragments":
        return lambda: instance.shorten_fragments(
            *(instance.normalize_identifier(identifiers[index]) for index in item)
        )
    return lambda: getattr(instance, op)(item)


def run_cases(get_class: Callable[[str], Any], cases: dict[str, Any]) -> dict[str, Any]:
    """Every operation on every input, for every convention and max_length.

    ``results[convention][op][i]`` is the list of outcomes for input ``i``, one per entry of
    ``MAX_LENGTHS[convention]`` (adjacent outcomes are often equal: the fixture compresses).
    """
    results: dict[str, Any] = {}
    shorten_class = None
    for convention in CONVENTIONS:
        cls = get_class(convention)
        shorten_class = shorten_class or cls
        instances = []
        properties = []
        for max_length in MAX_LENGTHS[convention]:
            instance = cls(max_length)
            instances.append(instance)
            properties.append(
                {
                    "name": _outcome(instance.name),
                    "class_name": _outcome(cls.name),
                    "str": _outcome(lambda instance=instance: str(instance)),
                    "is_case_sensitive": _outcome(
                        lambda instance=instance: instance.is_case_sensitive
                    ),
                    "max_length": _outcome(lambda instance=instance: instance.max_length),
                    "path_separator": _outcome(lambda instance=instance: instance.PATH_SEPARATOR),
                }
            )
        per_op: dict[str, Any] = {"properties": properties}
        for op, source in OPERATIONS:
            per_op[op] = [
                [
                    _outcome(_operation(instance, op, item, cases["identifiers"]))
                    for instance in instances
                ]
                for item in cases[source]
            ]
        results[convention] = per_op
    results["shorten_identifier"] = [
        _outcome(lambda args=args: shorten_class.shorten_identifier(*args))
        for args in cases["shorten"]
    ]
    results["too_long_s3_tables"] = [
        _outcome(lambda max_length=max_length: get_class("s3_tables")(max_length).max_length)
        for max_length in (256, 1000)
    ]
    return results


def diff_results(
    expected: dict[str, Any], actual: dict[str, Any], cases: dict[str, Any]
) -> tuple[int, int, list[str]]:
    """(number of compared outcomes, number of differences, readable first differences)."""
    compared = 0
    differences: list[str] = []

    def compare(where: str, want: Any, got: Any) -> None:
        nonlocal compared
        compared += 1
        if _comparable(want) != _comparable(got):
            differences.append(f"{where}: dlt={want!r} loadstone={got!r}")

    for convention in CONVENTIONS:
        lengths = MAX_LENGTHS[convention]
        for index, max_length in enumerate(lengths):
            for key, want in expected[convention]["properties"][index].items():
                got = actual[convention]["properties"][index][key]
                compare(f"{convention}({max_length}).{key}", want, got)
        for op, source in OPERATIONS:
            for item, want_row, got_row in zip(
                cases[source], expected[convention][op], actual[convention][op], strict=True
            ):
                for max_length, want, got in zip(lengths, want_row, got_row, strict=True):
                    compare(f"{convention}({max_length}).{op}({item!r})", want, got)
    for args, want, got in zip(
        cases["shorten"], expected["shorten_identifier"], actual["shorten_identifier"], strict=True
    ):
        compare(f"shorten_identifier{tuple(args)!r}", want, got)
    for want, got in zip(expected["too_long_s3_tables"], actual["too_long_s3_tables"], strict=True):
        compare("s3_tables(max_length > 255)", want, got)
    return compared, len(differences), differences


def _comparable(outcome: Any) -> Any:
    """Errors compare by having happened: loadstone raises its own (ValueError) classes."""
    if isinstance(outcome, dict) and "error" in outcome:
        return "<error>"
    return outcome


# --- the two sides -------------------------------------------------------------------------------


def dlt_class(name: str) -> Any:
    return importlib.import_module(f"dlt.common.normalizers.naming.{name}").NamingConvention


def loadstone_class(name: str) -> Any:
    """A built-in convention the way users get it: entry point -> module -> pluggy hook."""
    from importlib.metadata import entry_points

    (entry_point,) = [ep for ep in entry_points(group="loadstone.naming") if ep.name == name]
    return entry_point.load().loadstone_naming_convention()


def _run_oracle() -> None:
    cases = json.loads(sys.stdin.read())
    json.dump(run_cases(dlt_class, cases), sys.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dlt-python", help="python of an environment where dlt is importable")
    parser.add_argument("--seed", type=int, default=None, help="default: from the clock")
    parser.add_argument("--count", type=int, default=3000, help="random identifiers to generate")
    parser.add_argument("--show", type=int, default=20, help="differences to print")
    parser.add_argument("--oracle", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.oracle:
        _run_oracle()
        return 0
    if not args.dlt_python:
        parser.error("--dlt-python is required (a python where `import dlt` works)")
    seed = args.seed if args.seed is not None else time.time_ns() % 2**31
    cases = generate_cases(seed, args.count)
    started = time.perf_counter()
    oracle = subprocess.run(
        [args.dlt_python, __file__, "--oracle"],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    dlt_seconds = time.perf_counter() - started
    expected = json.loads(oracle.stdout)
    started = time.perf_counter()
    actual = json.loads(json.dumps(run_cases(loadstone_class, cases)))
    loadstone_seconds = time.perf_counter() - started
    compared, count, differences = diff_results(expected, actual, cases)
    for line in differences[: args.show]:
        print(line)
    print(
        f"seed={seed} identifiers={len(cases['identifiers'])} paths={len(cases['paths'])} "
        f"compared outcomes={compared} differences={count}"
    )
    print(
        f"time: dlt {dlt_seconds:.2f}s (incl. interpreter start and JSON), "
        f"loadstone {loadstone_seconds:.2f}s, ratio loadstone/dlt "
        f"{loadstone_seconds / dlt_seconds:.2f}"
    )
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
