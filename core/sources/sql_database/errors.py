"""The messages of the ``sql_database`` source's errors: one line naming the table, never a
password (the error class is ``loadstone.exceptions.SqlDatabaseError``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlalchemy as sa


def secret_parts(url: object) -> list[str]:
    """The password of a connection URL (an ``sa.URL`` or text), to be kept out of messages."""
    import sqlalchemy as sa

    try:
        parsed = url if isinstance(url, sa.URL) else sa.make_url(str(url))
    except (sa.exc.ArgumentError, ValueError):
        return []
    return [parsed.password] if parsed.password else []


def scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def describe(error: BaseException, engine: sa.Engine | None = None) -> str:
    """The first line of the driver's message (not SQLAlchemy's wrapping), password hidden."""
    cause = getattr(error, "orig", None) or error
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    text = lines[0] if lines else type(cause).__name__
    secrets = secret_parts(engine.url) if engine is not None else []
    return scrub(f"{type(cause).__name__}: {text}", secrets)
