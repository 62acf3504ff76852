"""The load step: loads normalized packages into the destination (see step.py)."""
