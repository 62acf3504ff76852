"""``loadstone.defer``: a function whose calls run on extract's thread pool (dlt's ``defer``).

A resource or transformer that yields ``fetch(item)`` for a ``@defer`` function ``fetch``
gets the call run on the pool of ``extract.workers`` threads, many at once, and its result
loaded as if yielded there::

    @loadstone.transformer(data_from=users)
    def details(user):
        @loadstone.defer
        def fetch():
            return http.get(f"/users/{user['id']}").json()
        yield fetch()
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import attrs

from loadstone.typing import TDataItem


@attrs.frozen
class Deferred:
    """One call of a ``@defer`` function, made when extract runs it on its thread pool."""

    func: Callable[..., TDataItem]
    args: tuple[TDataItem, ...] = ()
    kwargs: dict[str, TDataItem] = attrs.Factory(dict)

    def __call__(self) -> TDataItem:
        return self.func(*self.args, **self.kwargs)


def defer(func: Callable[..., TDataItem]) -> Callable[..., Deferred]:
    """Decorate ``func`` so that calling it returns a :class:`Deferred` call to yield."""

    @functools.wraps(func)
    def deferred(*args: TDataItem, **kwargs: TDataItem) -> Deferred:
        return Deferred(func, args, kwargs)

    return deferred
