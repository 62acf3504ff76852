"""A table the dataset lacks is refused as dlt 1.31 refuses it: ``dataset["name"]`` raises a
``KeyError``, ``dataset.name`` an ``AttributeError`` (so ``getattr`` with a default and
``hasattr`` answer instead of raising); both stay loadstone's ``DatasetError``."""

from __future__ import annotations

from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import DatasetError


@pytest.fixture
def dataset() -> Any:
    pipe = dlt.pipeline("lookups", destination="duckdb", dataset_name="d")
    pipe.run([{"a": 1}], table_name="t1")
    return pipe.dataset()


def test_an_attribute_that_is_no_table_answers_getattr_and_hasattr(dataset: Any) -> None:
    assert getattr(dataset, "nope", "default") == "default"
    assert hasattr(dataset, "nope") is False
    assert hasattr(dataset, "t1") is True


def test_an_item_that_is_no_table_is_a_key_error_naming_the_tables(dataset: Any) -> None:
    with pytest.raises(KeyError) as info:
        dataset["nope"]
    assert isinstance(info.value, DatasetError)
    assert str(info.value) == "dataset 'd' has no table 'nope'; it has: " + ", ".join(
        dataset.tables
    )


def test_the_first_argument_names_a_schema_of_the_pipeline() -> None:
    """dlt 1.31: ``pipeline.dataset(schema=None)``; ``dataset("alpha")`` reads the tables of
    the pipeline's schema ``alpha`` in the pipeline's dataset (not a dataset named alpha)."""

    @dlt.source(name="alpha")
    def alpha() -> Any:
        return dlt.resource([{"a": 1}], name="ta")

    pipe = dlt.pipeline("schemas_of", destination="duckdb", dataset_name="d")
    pipe.run([{"z": True}], table_name="plain")
    pipe.run(alpha())
    for ds in (pipe.dataset("alpha"), pipe.dataset(schema=pipe.schemas["alpha"])):
        assert (ds.schema.name, ds.dataset_name) == ("alpha", "d")
        assert ds.tables == ["ta", "_dlt_version", "_dlt_loads"]
        assert ds.row_counts().fetchall() == [("ta", 1)]


def test_the_pipelines_dataset_lists_its_other_schemas_tables_last() -> None:
    """dlt 1.31 (probe after p281): the default schema's data and ``_dlt`` tables, then the
    data tables of the pipeline's other schemas; ``row_counts`` counts them all."""

    @dlt.source(name="alpha")
    def alpha() -> Any:
        return dlt.resource([{"a": 1}], name="ta")

    pipe = dlt.pipeline("all_schemas", destination="duckdb", dataset_name="d")
    pipe.run([{"z": True}], table_name="plain")
    pipe.run(alpha())
    ds = pipe.dataset()
    assert ds.tables == ["plain", "_dlt_version", "_dlt_loads", "_dlt_pipeline_state", "ta"]
    assert ds.row_counts().fetchall() == [("plain", 1), ("ta", 1)]
