"""A dlt compatibility suite: the same programs run under loadstone and (recorded) dlt 1.31."""
