"""Schema files: YAML and JSON, import/export folders, a source's bundled schema.

Formats are dlt's: a stored schema (engine_version 11) as YAML (``<name>.schema.yaml``, as
dlt's ``export_schema_path`` writes) or JSON (``<name>.schema.json``). A file written here
loads in dlt and a file exported by dlt loads here.

* :func:`export_schema` / :func:`import_schema` back the pipeline's ``export_schema_path`` and
  ``import_schema_path``: export writes ``<name>.schema.yaml`` after every change; import
  reads the user's (possibly hand-edited) file, whose edits become a new version.
* :func:`find_source_schema_file` finds ``<source name>_schema.yml`` next to a source's module.

Errors name the file and, for YAML/JSON syntax errors, the line.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Literal

import yaml

from loadstone.exceptions import InvalidSchemaError, SchemaFileError
from loadstone.schema.schema import Schema

__all__ = [
    "SCHEMA_FILE_SUFFIXES",
    "export_schema",
    "export_schema_file_name",
    "find_source_schema_file",
    "import_schema",
    "load_schema_file",
    "save_schema_file",
    "schema_from_text",
]

SchemaFormat = Literal["yaml", "json"]
SCHEMA_FILE_SUFFIXES: dict[str, SchemaFormat] = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}


def _format_of(path: Path, format: SchemaFormat | None) -> SchemaFormat:
    if format is not None:
        if format not in ("yaml", "json"):
            raise ValueError(f"schema format must be 'yaml' or 'json', got {format!r}")
        return format
    return SCHEMA_FILE_SUFFIXES.get(path.suffix.lower(), "yaml")


def schema_from_text(text: str, format: SchemaFormat, path: str = "<text>") -> Schema:
    """Parse a stored schema from YAML or JSON text."""
    try:
        if format == "json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except json.JSONDecodeError as ex:
        raise SchemaFileError(path, f"invalid JSON: {ex.msg}", ex.lineno) from None
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        raise SchemaFileError(path, f"invalid YAML: {getattr(ex, 'problem', ex)}", line) from None
    if not isinstance(data, dict):
        raise SchemaFileError(path, "does not hold a schema document (a mapping)")
    try:
        return Schema.from_dict(data)
    except InvalidSchemaError as ex:
        raise SchemaFileError(path, str(ex)) from None


def load_schema_file(path: str | os.PathLike[str], format: SchemaFormat | None = None) -> Schema:
    """Read a schema file (YAML or JSON by suffix unless ``format`` says)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as ex:
        raise SchemaFileError(file, ex.strerror or str(ex)) from None
    return schema_from_text(text, _format_of(file, format), str(file))


def _dump(schema: Schema, format: SchemaFormat, bump_version: bool) -> str:
    if format == "json":
        return schema.to_pretty_json(bump_version=bump_version)
    return schema.to_pretty_yaml(bump_version=bump_version)


def save_schema_file(
    schema: Schema,
    path: str | os.PathLike[str],
    format: SchemaFormat | None = None,
    *,
    bump_version: bool = True,
) -> Path:
    """Write ``schema`` atomically (temp file + rename); returns the path.

    Saving records a version (``bump_version``): a changed schema gets version + 1.
    """
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    text = _dump(schema, _format_of(file, format), bump_version)
    fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return file


def export_schema_file_name(schema_name: str, format: SchemaFormat = "yaml") -> str:
    """``<name>.schema.yaml`` (or ``.json``), dlt's export file name."""
    return f"{schema_name}.schema.{format}"


def export_schema(
    schema: Schema, folder: str | os.PathLike[str], format: SchemaFormat = "yaml"
) -> Path:
    """Write ``<folder>/<name>.schema.yaml`` (dlt's ``export_schema_path`` layout)."""
    return save_schema_file(
        schema, Path(folder) / export_schema_file_name(schema.name, format), format
    )


def import_schema(name: str, folder: str | os.PathLike[str]) -> Schema | None:
    """Read ``<folder>/<name>.schema.yaml`` (or ``.yml`` / ``.json``); ``None`` if absent.

    The file's name must match the schema inside it (a copied file under the wrong name
    would otherwise silently replace another source's schema).
    """
    base = Path(folder)
    for suffix in ("yaml", "yml", "json"):
        file = base / f"{name}.schema.{suffix}"
        if file.is_file():
            schema = load_schema_file(file)
            if schema.name != name:
                raise SchemaFileError(
                    file, f"holds schema {schema.name!r}, expected {name!r} (file name)"
                )
            return schema
    return None


def find_source_schema_file(module_file: str | os.PathLike[str], source_name: str) -> Path | None:
    """``<source name>_schema.yml`` (or ``.yaml``) beside the module defining a source."""
    folder = Path(module_file).resolve().parent
    for suffix in ("yml", "yaml"):
        candidate = folder / f"{source_name}_schema.{suffix}"
        if candidate.is_file():
            return candidate
    return None
