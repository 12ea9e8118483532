"""Built on first use, once: how taskgate keeps a cold start to what its first request needs.

``Lazy(build)`` is a value ``build()`` makes the first time it is asked for (``lazy()``);
``@once`` makes a method of the composition root such a value, one per instance. The
local server asks from many threads at once, so the build runs under a lock and exactly
one thread builds; a build that raises leaves nothing behind, and the next ask builds again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Self, overload


class Lazy[T]:
    __slots__ = ("_build", "_built", "_lock", "_value")

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        # Re-entrant: a build may ask for another Lazy that asks back for nothing of its own.
        self._lock = threading.RLock()
        self._value: T | None = None
        self._built = False

    def __call__(self) -> T:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return self._value  # type: ignore[return-value]

    @property
    def built(self) -> bool:
        return self._built


class once[T]:
    """``@once def name(self) -> T``: ``obj.name`` is built by the method on first access,
    once per instance (a ``Lazy`` kept in the instance), then read like an attribute."""

    def __init__(self, build: Callable[[Any], T]) -> None:
        self._build = build
        self._name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type) -> Self: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...
    def __get__(self, obj: object | None, owner: type) -> Self | T:
        if obj is None:
            return self
        slots: dict[str, Lazy[Any]] = obj.__dict__.setdefault("_once", {})
        # setdefault is atomic: two threads arriving first share one Lazy.
        lazy = slots.get(self._name) or slots.setdefault(self._name, Lazy(lambda: self._build(obj)))
        return lazy()  # type: ignore[no-any-return]

    @staticmethod
    def built(obj: object, name: str) -> bool:
        """Whether ``obj.name`` has been built (tests and benchmarks check what a cold start built)."""
        lazy = obj.__dict__.get("_once", {}).get(name)
        return lazy is not None and bool(lazy.built)
