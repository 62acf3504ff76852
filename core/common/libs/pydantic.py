"""``loadstone.common.libs.pydantic``: dlt's ``DltConfig``, the ``dlt_config`` of a model.

A model given as ``columns=`` may say how dlt reads it::

    class User(BaseModel):
        dlt_config: ClassVar[DltConfig] = {"skip_nested_types": True}

``skip_nested_types`` (old name ``skip_complex_types``): nested fields (models, lists,
dicts) are no ``json`` columns; their values are normalized into columns and nested tables.
"""

from __future__ import annotations

from typing import TypedDict


class DltConfig(TypedDict, total=False):
    """How a pydantic model given as ``columns=`` is read (dlt 1.31's keys)."""

    skip_nested_types: bool
    skip_complex_types: bool
    return_validated_models: bool
    is_authoritative_model: bool | None


__all__ = ["DltConfig"]
