"""``loadstone.common.libs``: dlt's ``dlt.common.libs`` names (``pydantic``)."""
