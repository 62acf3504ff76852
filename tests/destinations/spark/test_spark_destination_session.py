"""The Spark destination refuses a session whose catalog forgets tables when it stops."""

from __future__ import annotations

import pytest

import loadstone
from loadstone.exceptions import InMemoryCatalog


@pytest.mark.spark
def test_an_in_memory_catalog_is_refused_with_how_to_fix_it(spark: object) -> None:
    destination = loadstone.destinations.spark(spark)
    with pytest.raises(InMemoryCatalog, match=r'spark.sql.catalogImplementation = "hive"'):
        destination.client(None, "shop")
