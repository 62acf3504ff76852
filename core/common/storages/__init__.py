"""``loadstone.common.storages``: dlt's ``dlt.common.storages`` names a pipeline imports."""
