"""A base for value classes that a ``typing.NamedTuple`` cannot stand for (one that checks
what it is given, one that must not be a tuple): set once in ``__init__``, then compared,
hashed, shown, copied with changes and pickled by their fields."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar


class Frozen:
    """A value whose attributes (``_fields``, in order: also its ``__slots__`` and the names of
    its ``__init__``'s parameters) are set by ``__init__`` (through :meth:`_set`, or
    ``object.__setattr__`` itself) and never assigned after: assignment and deletion raise
    ``AttributeError``. Two values are equal when they are of the same class with equal
    attributes."""

    _fields: ClassVar[tuple[str, ...]] = ()
    __slots__ = ()

    def _set(self, *values: object) -> None:
        """Set the attributes, in the order of ``_fields``."""
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def _replace(self: _V, **changes: Any) -> _V:
        """A copy with the attributes named in ``changes`` changed (as ``NamedTuple._replace``)."""
        values = {**dict(zip(self._fields, self._values(), strict=True)), **changes}
        copy: _V = type(self)(**values)
        return copy

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to {name!r}: a {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete {name!r}: a {type(self).__name__} is frozen")

    def __reduce__(self: _V) -> tuple[type[_V], tuple[Any, ...]]:
        return type(self), self._values()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Frozen)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"


#: after the class: a bound given as a string would make ``typing`` compile it at import
_V = TypeVar("_V", bound=Frozen)
