"""Data run() cannot take fails the extract with dlt 1.31's exception classes (as
``PipelineStepFailed.exception``), so code written for dlt catches them; nothing is loaded."""

from __future__ import annotations

from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import PipelineStepFailed
from loadstone.extract.exceptions import (
    InvalidResourceDataTypeBasic,
    ParametrizedResourceUnbound,
    ResourceNameMissing,
)


@dlt.resource
def needs_a_page(page: int) -> Any:
    yield {"page": page}


@pytest.mark.parametrize(
    ("data", "kwargs", "raised", "says"),
    [
        ([{"a": 1}], {}, ResourceNameMissing, "pass table_name="),
        ("hello", {"table_name": "t"}, InvalidResourceDataTypeBasic, "a str is read as a file"),
        (needs_a_page, {}, ParametrizedResourceUnbound, "needs arguments of needs_a_page()"),
    ],
    ids=["list_without_table_name", "text_naming_no_file", "resource_not_called"],
)
def test_data_run_cannot_take_fails_with_dlts_exception(
    data: Any, kwargs: dict[str, Any], raised: type[Exception], says: str
) -> None:
    pipe = dlt.pipeline("inputs", destination="duckdb", dataset_name="d")
    with pytest.raises(PipelineStepFailed) as failed:
        pipe.run(data, **kwargs)
    assert failed.value.step == "extract"
    assert isinstance(failed.value.exception, raised) and says in str(failed.value)
    assert pipe.list_pending_packages() == []
    assert needs_a_page(2) is not None  # called with its argument, the resource is fine
