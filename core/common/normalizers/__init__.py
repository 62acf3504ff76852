"""``loadstone.common.normalizers``: dlt's path to its naming conventions (``.naming``)."""
