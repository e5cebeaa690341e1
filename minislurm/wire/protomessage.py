"""The decoded protobuf message of minislurm.wire.protowire: read-only fields by name.

Each message type has a class of its own, a subclass of :class:`Message` made
by ``protowire._Type``: its compiled type (``_t``) and the proto3 default of
each scalar field are class attributes, and the fields set on the wire are the
instance's ``__dict__``, which the codec fills directly. Reading a
field is then Python's own attribute lookup (squeue reads hundreds of
thousands of them); only an absent list, map or message field reaches
``__getattr__``.

Imports nothing at module level; constructing a Message from values imports
the codec (minislurm.wire.protowire), which imports this module.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from minislurm.wire.protowire import _Type

_MISSING = object()  # a field absent from a message's dict


class Message:
    """A decoded message: read-only attribute access by field name.

    An absent field reads as its proto3 default (0, "", False, b"", an empty
    list or dict, an empty Message for a sub-message). Construct one from a
    dict with ``Message(type_name, {...})`` or keywords; the value is
    validated and normalised exactly as :func:`encode` would.

    Args:
        type_name: full message name, e.g. ``"minislurm.v1.JobSpec"``.
        fields: field values, as :func:`encode` accepts them.
        **kwargs: more field values.

    Raises:
        TypeError, ValueError: as :func:`encode`.
    """

    __slots__ = ("__dict__",)  # the fields set on the wire
    _t: _Type  # set on each message type's class

    def __init__(
        self, type_name: str, fields: Mapping[str, Any] | None = None, /, **kwargs: Any
    ) -> None:
        from minislurm.wire.protowire import default_schema  # the codec imports this module

        schema = default_schema()
        values = {**(fields or {}), **kwargs}
        decoded = schema.decode(type_name, schema.encode(type_name, values))
        object.__setattr__(self, "__class__", type(decoded))
        self.__dict__.update(decoded.__dict__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{self._t.name} is read-only (see replaced)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{self._t.name} is read-only")

    def __getattr__(self, name: str) -> Any:
        # Reached only for what the instance and its class lack: an absent list, map or
        # message field (a new empty one), or no field at all (AttributeError).
        if name == "_t" or name.startswith("__"):  # a bare Message, protocols
            raise AttributeError(name)
        return self._t.default(name)

    def has(self, name: str) -> bool:
        """Whether a field with presence (proto3 ``optional``, a message) is set.

        Args:
            name: the field name.

        Returns:
            True when the field was present on the wire (or given).

        Raises:
            AttributeError: no such field.
            ValueError: the field has no presence (implicit, repeated, map).
        """
        field = self._t.by_name.get(name)
        if field is None:
            raise AttributeError(f"{self._t.name} has no field {name!r}")
        if not field.presence:
            raise ValueError(f"field {self._t.name}.{name} has no presence to test")
        return name in self.__dict__

    def replaced(self, **values: Any) -> Message:
        """A copy with some fields changed, without re-encoding (values are trusted).

        Args:
            **values: new field values, as the decoder would give them.

        Returns:
            The copy.
        """
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **values)
        return copy

    def to_dict(self) -> dict[str, Any]:
        """The fields that are set, as plain values (nested messages as dicts).

        Returns:
            A new dict, acceptable to :func:`encode`.
        """
        return {name: _plain(value) for name, value in self.__dict__.items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return self._t.name == other._t.name and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{self._t.name.rsplit('.', 1)[-1]}({inner})"

    def __dir__(self) -> list[str]:
        return sorted(self._t.by_name)


def _plain(value: Any) -> Any:
    if isinstance(value, Message):
        return value.to_dict()
    if type(value) is list:
        return [_plain(v) for v in value]
    if type(value) is dict:
        return {k: _plain(v) for k, v in value.items()}
    return value


def _new(t: _Type) -> Message:
    message: Message = object.__new__(t.cls)
    return message
