"""The Spark options whose names are camelCase, so that configuration from environment names
(upper case, ``SPARK__TASK__MAXFAILURES``) reaches the key Spark reads: Spark's keys are
case-sensitive, and it ignores ``spark.task.maxfailures`` without a word. ``config.py`` restores
these; a name written in mixed case is kept as written, for any other option.
"""

from __future__ import annotations

CAMEL_CASE = (
    "spark.sql.session.timeZone",
    "spark.driver.extraJavaOptions",
    "spark.executor.extraJavaOptions",
    "spark.driver.extraClassPath",
    "spark.executor.extraClassPath",
    "spark.driver.maxResultSize",
    "spark.ui.showConsoleProgress",
    "spark.sql.files.maxPartitionBytes",
    "spark.sql.files.maxRecordsPerFile",
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.sql.adaptive.coalescePartitions.enabled",
    "spark.sql.adaptive.skewJoin.enabled",
    "spark.sql.execution.arrow.pyspark.enabled",
    "spark.sql.execution.arrow.maxRecordsPerBatch",
    "spark.sql.sources.partitionOverwriteMode",
    "spark.sql.caseSensitive",
    "spark.executor.memoryOverhead",
    "spark.executor.heartbeatInterval",
    "spark.driver.extraLibraryPath",
    "spark.executor.extraLibraryPath",
    "spark.driver.bindAddress",
    "spark.driver.blockManager.port",
    "spark.blockManager.port",
    "spark.port.maxRetries",
    "spark.task.maxFailures",
    "spark.dynamicAllocation.enabled",
    "spark.dynamicAllocation.minExecutors",
    "spark.dynamicAllocation.maxExecutors",
    "spark.dynamicAllocation.initialExecutors",
    "spark.dynamicAllocation.executorIdleTimeout",
    "spark.dynamicAllocation.shuffleTracking.enabled",
    "spark.memory.offHeap.enabled",
    "spark.memory.offHeap.size",
    "spark.sql.catalogImplementation",
    "spark.sql.files.openCostInBytes",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes",
    "spark.sql.legacy.timeParserPolicy",
    "spark.sql.execution.pythonUDF.arrow.enabled",
)
#: lower-cased key -> the key as Spark spells it
CAMEL_CASE_BY_LOWER = {key.lower(): key for key in CAMEL_CASE}
