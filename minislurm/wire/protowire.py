"""Proto3 wire-format codec driven by the generated schema, without the protobuf runtime.

The commands cannot afford to import protobuf (tens of milliseconds), so they
encode requests and decode replies with this module, which reads the message
layouts from ``minislurm.wire.rpc.minislurm_schema`` (generated from the .proto by
scripts/gen_proto.py, so the .proto stays the single source of truth).

Encoding matches the protobuf runtime byte for byte (fields in number order,
implicit-presence defaults omitted, repeated numbers packed, map entries with
both key and value); decoding accepts anything the runtime accepts: packed
or unpacked repeated numbers, merged repeats of a message field, unknown
fields (skipped; as in the runtime, a map entry holding one is left out of
the map). Decoded values are plain Python: ``int``, ``float``,
``bool``, ``str``, ``bytes``, ``list``, ``dict`` and :class:`Message`
(minislurm.wire.protomessage).

Imports only minislurm.wire.protomessage at module level (``_struct`` on first
use of a fixed-size or floating-point field); none of ctld, nodeagent or cli.
"""

from __future__ import annotations

from minislurm.wire.protomessage import _MISSING, _new
from minislurm.wire.protomessage import Message as Message  # the codec's message type, re-exported

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Encoder = Callable[[Any, "_Field"], bytes]

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_BYTES = tuple(bytes((i,)) for i in range(128))

# Decoding operations. 0-6 read a varint, 7-12 a fixed-size value, 13-17 a
# length-delimited payload.
_VARINT_OPS = {
    "uint64": 0,
    "uint32": 1,
    "int64": 2,
    "int32": 3,
    "enum": 3,
    "bool": 4,
    "sint32": 5,
    "sint64": 6,
}
_FIXED = {
    "fixed32": (7, "<I"),
    "sfixed32": (8, "<i"),
    "float": (9, "<f"),
    "fixed64": (10, "<Q"),
    "sfixed64": (11, "<q"),
    "double": (12, "<d"),
}
_OP_STRING, _OP_BYTES, _OP_MESSAGE, _OP_PACKED, _OP_MAP = 13, 14, 15, 16, 17
_WIRE_TYPES = {
    "fixed32": 5,
    "sfixed32": 5,
    "float": 5,
    "fixed64": 1,
    "sfixed64": 1,
    "double": 1,
    "string": 2,
    "bytes": 2,
    "message": 2,
}
# How a decoded value is stored: implicit presence (a default removes it),
# explicit presence, repeated, map.
_IMPLICIT, _EXPLICIT, _REPEATED, _MAP = 0, 1, 2, 3

_SCALAR_DEFAULTS: dict[str, object] = {
    "double": 0.0,
    "float": 0.0,
    "bool": False,
    "string": "",
    "bytes": b"",
}


class Schema:
    """Message, enum and service descriptions in the generated schema format.

    Args:
        messages: ``MESSAGES`` of a generated schema module.
        enums: ``ENUMS`` of it.
        services: ``SERVICES`` of it.
    """

    def __init__(
        self,
        messages: Mapping[str, tuple[tuple[int, str, str, str, bool, str, str], ...]],
        enums: Mapping[str, tuple[tuple[str, int], ...]],
        services: Mapping[str, Mapping[str, tuple[str, str, bool, bool]]] | None = None,
    ) -> None:
        self.messages = messages
        self.enums = enums
        self.services = services or {}
        self._types: dict[str, _Type] = {}

    def encode(self, type_name: str, value: Mapping[str, Any] | Message) -> bytes:
        """Serialize ``value`` as message ``type_name``.

        Args:
            type_name: full message name.
            value: a dict of field values (nested dicts, lists, dicts for
                maps, enum values as int or name; None means absent) or a
                :class:`Message` of that type.

        Returns:
            The wire bytes, identical to the protobuf runtime's.

        Raises:
            KeyError: unknown message type.
            TypeError: a value of the wrong type (the message names the field).
            ValueError: an unknown field, an out-of-range value, unpaired
                surrogates in a string.
        """
        out = bytearray()
        _encode_into(self.type(type_name), value, out)
        return bytes(out)

    def decode(self, type_name: str, data: bytes | bytearray | memoryview) -> Message:
        """Parse wire bytes as message ``type_name``.

        Args:
            type_name: full message name.
            data: the serialized message.

        Returns:
            The decoded :class:`Message`.

        Raises:
            KeyError: unknown message type.
            ValueError: malformed input (truncated, bad wire type, bad UTF-8...).
        """
        t = self.type(type_name)
        if type(data) is not bytes:
            data = bytes(data)
        message = _new(t)
        try:
            _parse(t, data, 0, len(data), message.__dict__)
        except IndexError:
            raise ValueError(f"truncated {type_name} message") from None
        except RecursionError:
            raise ValueError(f"{type_name} message is nested too deeply") from None
        return message

    def type(self, type_name: str) -> _Type:
        """The compiled description of message ``type_name`` (built on first use).

        Raises:
            KeyError: unknown message type.
        """
        t = self._types.get(type_name)
        if t is None:
            if type_name not in self.messages:
                raise KeyError(f"unknown message type {type_name!r}")
            t = self._types[type_name] = _Type(type_name)
            t.build(self, self.messages[type_name])  # after caching: types may recurse
        return t


_default: list[Schema] = []


def default_schema() -> Schema:
    """The schema generated from minislurm's own .proto (imported on first use)."""
    if not _default:
        from minislurm.wire.rpc import minislurm_schema as generated

        _default.append(Schema(generated.MESSAGES, generated.ENUMS, generated.SERVICES))
    return _default[0]


def encode(type_name: str, value: Mapping[str, Any] | Message) -> bytes:
    """Serialize with the default schema; see :meth:`Schema.encode`."""
    return default_schema().encode(type_name, value)


def decode(type_name: str, data: bytes | bytearray | memoryview) -> Message:
    """Parse with the default schema; see :meth:`Schema.decode`."""
    return default_schema().decode(type_name, data)


# ---------------------------------------------------------------- compiled types


class _Field:
    """One field of a message, compiled for encoding."""

    __slots__ = (
        "encode_value",
        "enum_values",
        "key",
        "label",
        "name",
        "number",
        "owner",
        "presence",
        "sub",
        "tag",
        "type",
        "write",
        "zero",
    )

    def __init__(self, owner: str, spec: tuple[int, str, str, str, bool, str, str]) -> None:
        self.number, self.name, self.type, self.label = spec[0], spec[1], spec[2], spec[3]
        self.owner = owner
        self.presence = self.label == "optional" or (self.type == "message" and self.label == "")
        self.sub: _Type | None = None
        self.key: _Field | None = None
        self.enum_values: dict[str, int] = {}
        self.encode_value: Encoder = _ENCODERS[self.type]
        self.zero = _ZEROS.get(self.type, b"\x00")
        wire = 2 if self.label == "map" or spec[4] else _WIRE_TYPES.get(self.type, 0)
        self.tag = _varint_bytes(self.number << 3 | wire)
        kind = "packed" if spec[4] else self.label or "implicit"
        if self.type == "message" and self.label in ("", "optional"):
            kind = "message"
        self.write = _WRITERS[kind]


class _Type:
    """A message type compiled for decoding (``tags``) and encoding (``by_name``)."""

    __slots__ = ("by_name", "cls", "defaults", "name", "tags")

    def __init__(self, name: str) -> None:
        self.name = name
        self.by_name: dict[str, _Field] = {}
        self.tags: dict[int, tuple[str, int, int, Any]] = {}
        self.defaults: dict[str, Any] = {}
        # Its messages' class: the scalar defaults become its attributes (see protomessage).
        self.cls = type(name.rsplit(".", 1)[-1], (Message,), {"__slots__": (), "_t": self})

    def build(
        self, schema: Schema, specs: tuple[tuple[int, str, str, str, bool, str, str], ...]
    ) -> None:
        for spec in specs:
            field = _Field(self.name, spec)
            number, name, type_, label, _, type_name, key_type = spec
            if hasattr(Message, name):  # its value would hide the method
                raise ValueError(f"field {self.name}.{name} has the name of a Message method")
            if type_ == "message":
                field.sub = schema.type(type_name)
            elif type_ == "enum":
                field.enum_values = dict(schema.enums[type_name])
            self.by_name[name] = field
            if label == "map":
                entry = _map_entry(schema, f"{self.name}.{name}", key_type, spec)
                field.key = entry.by_name["key"]
                field.sub = entry
                self.tags[number << 3 | 2] = (name, _OP_MAP, _MAP, entry)
                self.defaults[name] = dict
                continue
            self._add_tags(field, label)

    def _add_tags(self, field: _Field, label: str) -> None:
        store = {"": _IMPLICIT, "optional": _EXPLICIT, "repeated": _REPEATED}[label]
        type_, name = field.type, field.name
        extra: Any = None
        wire = _WIRE_TYPES.get(type_, 0)
        if type_ == "message":
            store = _REPEATED if label == "repeated" else _EXPLICIT
            op, extra = _OP_MESSAGE, field.sub
        elif type_ in _FIXED:
            op, fmt = _FIXED[type_]
            extra = _packer(fmt)
        elif type_ in ("string", "bytes"):
            op = _OP_STRING if type_ == "string" else _OP_BYTES
        else:
            op = _VARINT_OPS[type_]
        self.tags[field.number << 3 | wire] = (name, op, store, extra)
        if label == "repeated" and type_ not in ("string", "bytes", "message"):
            # Packed and unpacked are both legal on the wire, whatever the schema says.
            self.tags[field.number << 3 | 2] = (name, _OP_PACKED, _REPEATED, (op, extra))
        self.defaults[name] = (
            list if label == "repeated" else field.sub or _SCALAR_DEFAULTS.get(type_, 0)
        )
        if label != "repeated" and field.sub is None:
            setattr(self.cls, name, self.defaults[name])

    def default(self, name: str) -> Any:
        value = self.defaults.get(name, _MISSING)
        if value is _MISSING:
            raise AttributeError(f"{self.name} has no field {name!r}")
        if type(value) is _Type:
            return _new(value)
        if value is list or value is dict:
            return value()
        return value


def _map_entry(
    schema: Schema, where: str, key_type: str, spec: tuple[int, str, str, str, bool, str, str]
) -> _Type:
    """The implicit key/value entry message of map field ``where``."""
    entry = _Type(f"{where} (map entry)")
    entry.build(
        schema,
        ((1, "key", key_type, "", False, "", ""), (2, "value", spec[2], "", False, spec[5], "")),
    )
    return entry


# ---------------------------------------------------------------- decoding


def _varint(data: bytes, pos: int, result: int) -> tuple[int, int]:
    """Finish a varint whose first octet ``result`` (>= 0x80) precedes ``pos``."""
    result &= 0x7F
    shift = 7
    while True:
        octet = data[pos]
        pos += 1
        result |= (octet & 0x7F) << shift
        if octet < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ValueError("varint is longer than 10 bytes")


def _convert(op: int, v: int) -> Any:
    """Turn a raw varint into the value of a field decoded by ``op``."""
    if op == 1:
        return v & _M32
    if op == 3:
        v &= _M32
        return v - 0x100000000 if v > 0x7FFFFFFF else v
    if op == 0:
        return v & _M64
    if op == 2:
        v &= _M64
        return v - 0x10000000000000000 if v > 0x7FFFFFFFFFFFFFFF else v
    if op == 4:
        return v != 0
    v &= _M32 if op == 5 else _M64
    return (v >> 1) ^ -(v & 1)


def _parse(t: _Type, data: bytes, pos: int, end: int, f: dict[str, Any]) -> bool:
    """Decode the fields in ``data[pos:end]`` into ``f`` (merging into what is there).

    One function on purpose: it runs once per field of every message (squeue
    decodes thousands of 52-field jobs), so the common cases are inlined here
    rather than dispatched through per-type calls.

    Returns:
        Whether an unknown field (or a known one with another wire type) was skipped.
    """
    tags = t.tags
    skipped = False
    while pos < end:
        key = data[pos]
        pos += 1
        if key > 127:  # two-byte keys (fields 16..2047) inline, longer ones in _varint
            octet = data[pos]
            if octet < 128:
                key = (key & 0x7F) | (octet << 7)
                pos += 1
            else:
                key, pos = _varint(data, pos, key)
        spec = tags.get(key)
        if spec is None:
            pos = _skip(t, data, pos, key)
            skipped = True
            continue
        name, op, store, extra = spec
        v: Any
        if op <= 6:
            v = data[pos]
            pos += 1
            if v > 127:
                v, pos = _varint(data, pos, v)
            if v > 0x7FFFFFFF or op > 3:  # small non-negative ints need no conversion
                v = _convert(op, v)
        elif op <= 12:
            if pos + extra.size > end:
                raise ValueError(f"truncated {t.name}.{name}")
            v = extra.unpack_from(data, pos)[0]
            pos += extra.size
        else:
            n = data[pos]
            pos += 1
            if n > 127:
                n, pos = _varint(data, pos, n)
            stop = pos + n
            if stop > end:
                raise ValueError(f"truncated {t.name}.{name}")
            if op > _OP_BYTES:
                _parse_nested(spec, data, pos, stop, f)
                pos = stop
                continue
            if op == _OP_BYTES:
                v = data[pos:stop]
            else:
                try:
                    v = data[pos:stop].decode()
                except UnicodeDecodeError:
                    raise ValueError(f"field {t.name}.{name}: invalid UTF-8 in a string") from None
            pos = stop
        if store == _IMPLICIT:
            if v or ((op == 9 or op == 12) and _packer("<d").pack(v) != b"\0" * 8):
                f[name] = v
            else:  # the default on the wire: proto3 treats it as absent
                f.pop(name, None)
        elif store == _EXPLICIT:
            f[name] = v
        elif name in f:
            f[name].append(v)
        else:
            f[name] = [v]
    if pos != end:
        raise ValueError(f"truncated {t.name} message")
    return skipped


def _parse_nested(
    spec: tuple[str, int, int, Any], data: bytes, pos: int, stop: int, f: dict[str, Any]
) -> None:
    name, op, store, extra = spec
    if op == _OP_MESSAGE:
        if store == _EXPLICIT:
            message = f.get(name)
            if message is None:  # a repeated message field merges into the first
                message = f[name] = _new(extra)
        else:
            message = _new(extra)
            f.setdefault(name, []).append(message)
        _parse(extra, data, pos, stop, message.__dict__)
    elif op == _OP_PACKED:
        values = _unpack(extra[0], extra[1], data, pos, stop)
        if values:
            f.setdefault(name, []).extend(values)
    else:
        entry: dict[str, Any] = {}
        if _parse(extra, data, pos, stop, entry):
            # The runtime (upb) keeps an entry holding any field but a well-typed key
            # and value as an unknown field of the message: it is not in the map.
            return
        key = entry["key"] if "key" in entry else extra.default("key")
        f.setdefault(name, {})[key] = entry["value"] if "value" in entry else extra.default("value")


def _unpack(op: int, fixed: Any, data: bytes, pos: int, stop: int) -> list[Any]:
    """Decode a packed repeated field's payload ``data[pos:stop]``."""
    if fixed is not None:
        count, rest = divmod(stop - pos, fixed.size)
        if rest:
            raise ValueError("packed fixed-size field has a partial element")
        import _struct

        return list(_struct.unpack_from(f"{fixed.format[0]}{count}{fixed.format[1]}", data, pos))
    values = []
    while pos < stop:
        v = data[pos]
        pos += 1
        if v > 127:
            v, pos = _varint(data, pos, v)
        values.append(_convert(op, v))
    if pos != stop:
        raise ValueError("packed varint field is truncated")
    return values


def _skip(t: _Type, data: bytes, pos: int, key: int) -> int:
    """Skip an unknown field's value; return the offset after it."""
    if key >> 3 == 0:
        raise ValueError(f"{t.name}: field number 0 on the wire")
    return _skip_value(t, data, pos, key)


def _skip_value(t: _Type, data: bytes, pos: int, key: int) -> int:
    """Skip the value of ``key``, of any field number (inside a group, as the runtime)."""
    wire = key & 7
    if wire == 0:
        _, pos = _varint(data, pos + 1, data[pos]) if data[pos] > 127 else (0, pos + 1)
        return pos
    if wire == 1 or wire == 5:
        return pos + (8 if wire == 1 else 4)
    if wire == 2:
        n = data[pos]
        if n > 127:
            n, pos = _varint(data, pos + 1, n)
            return pos + n
        return pos + 1 + n
    if wire == 3:  # a group (proto2): skip to its matching end-group
        while True:
            inner = data[pos]
            pos += 1
            if inner > 127:
                inner, pos = _varint(data, pos, inner)
            if inner & 7 == 4:
                if inner >> 3 != key >> 3:
                    raise ValueError(f"{t.name}: mismatched end-group on the wire")
                return pos
            pos = _skip_value(t, data, pos, inner)
    raise ValueError(f"{t.name}: invalid wire type {wire} on the wire")


# ---------------------------------------------------------------- encoding


def _varint_bytes(v: int) -> bytes:
    if v < 0x80:
        return _BYTES[v]
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _encode_into(t: _Type, value: Any, out: bytearray) -> None:
    if isinstance(value, Message):
        if value._t.name != t.name:
            raise TypeError(f"expected a {t.name} message, got a {value._t.name}")
        items = value.__dict__.items()
    elif hasattr(value, "items"):
        items = value.items()
    else:
        raise TypeError(f"expected a dict or Message for {t.name}, got {type(value).__name__}")
    fields = []
    by_name = t.by_name
    for name, v in items:
        field = by_name.get(name)
        if field is None:
            raise ValueError(f"{t.name} has no field {name!r}")
        if v is not None:
            fields.append((field.number, field, v))
    fields.sort(key=_number)
    for _, field, v in fields:
        field.write(field, v, out)


def _number(entry: tuple[int, _Field, Any]) -> int:
    return entry[0]


def _value(field: _Field, v: Any) -> bytes:
    """Encode one scalar value of ``field``; errors name the field."""
    try:
        return field.encode_value(v, field)
    except (TypeError, ValueError) as e:
        raise type(e)(f"field {field.owner}.{field.name}: {e}") from None


def _write_implicit(field: _Field, v: Any, out: bytearray) -> None:
    encoded = _value(field, v)
    if encoded != field.zero:
        out += field.tag
        out += encoded


def _write_explicit(field: _Field, v: Any, out: bytearray) -> None:
    out += field.tag
    out += _value(field, v)


def _write_message(field: _Field, v: Any, out: bytearray) -> None:
    assert field.sub is not None
    payload = bytearray()
    _encode_into(field.sub, v, payload)
    out += field.tag
    out += _varint_bytes(len(payload))
    out += payload


def _items(field: _Field, v: Any, kind: type) -> Any:
    if kind is list and type(v) in (list, tuple):
        return v
    if kind is dict and hasattr(v, "items") and not isinstance(v, Message):
        return v.items()
    raise TypeError(
        f"field {field.owner}.{field.name}: expected a {kind.__name__}, got {type(v).__name__}"
    )


def _write_repeated(field: _Field, v: Any, out: bytearray) -> None:
    for item in _items(field, v, list):
        if item is None:
            raise TypeError(f"field {field.owner}.{field.name}: None in a repeated field")
        if field.sub is not None:
            _write_message(field, item, out)
        else:
            _write_explicit(field, item, out)


def _write_packed(field: _Field, v: Any, out: bytearray) -> None:
    payload = b"".join([_value(field, item) for item in _items(field, v, list)])
    if payload:
        out += field.tag
        out += _varint_bytes(len(payload))
        out += payload


def _write_map(field: _Field, v: Any, out: bytearray) -> None:
    entry_type = field.sub
    assert entry_type is not None and field.key is not None
    value_field = entry_type.by_name["value"]
    for key, value in _items(field, v, dict):
        if value is None:
            raise TypeError(f"field {field.owner}.{field.name}: None as a map value")
        entry = bytearray(field.key.tag)
        entry += _value(field.key, key)
        if value_field.sub is not None:
            _write_message(value_field, value, entry)
        else:
            _write_explicit(value_field, value, entry)
        out += field.tag
        out += _varint_bytes(len(entry))
        out += entry


_WRITERS: dict[str, Callable[[_Field, Any, bytearray], None]] = {
    "implicit": _write_implicit,
    "optional": _write_explicit,
    "repeated": _write_repeated,
    "packed": _write_packed,
    "map": _write_map,
    "message": _write_message,
}


def _check_int(v: Any, low: int, high: int) -> int:
    if type(v) is not int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"expected an int, got {type(v).__name__}")
    if not low <= v <= high:
        raise ValueError(f"{v} is out of range [{low}, {high}]")
    return int(v)


def _varint_encoder(low: int, high: int, zigzag: int = 0) -> Encoder:
    def encode_varint(v: Any, field: _Field) -> bytes:
        v = _check_int(v, low, high)
        if zigzag:
            return _varint_bytes((v << 1) ^ (v >> zigzag))
        return _varint_bytes(v & _M64)

    return encode_varint


def _packer(fmt: str) -> Any:
    """A cached ``struct.Struct`` (``_struct`` costs the commands 0.5 ms to import)."""
    packer = _STRUCTS.get(fmt)
    if packer is None:
        import _struct

        packer = _STRUCTS[fmt] = _struct.Struct(fmt)
    return packer


_STRUCTS: dict[str, Any] = {}


def _fixed_encoder(fmt: str, low: int = 0, high: int = 0) -> Encoder:
    def encode_fixed(v: Any, field: _Field) -> bytes:
        if high:
            return bytes(_packer(fmt).pack(_check_int(v, low, high)))
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"expected a float, got {type(v).__name__}")
        try:
            return bytes(_packer(fmt).pack(v))
        except OverflowError:
            raise ValueError(f"{v!r} is out of range for a {field.type}") from None

    return encode_fixed


def _encode_enum(v: Any, field: _Field) -> bytes:
    if type(v) is str:
        number = field.enum_values.get(v)
        if number is None:
            raise ValueError(f"unknown enum value name {v!r}")
        v = number
    return _varint_bytes(_check_int(v, -(1 << 31), (1 << 31) - 1) & _M64)


def _encode_bool(v: Any, field: _Field) -> bytes:
    if type(v) is not bool:
        raise TypeError(f"expected a bool, got {type(v).__name__}")
    return b"\x01" if v else b"\x00"


def _encode_string(v: Any, field: _Field) -> bytes:
    if type(v) is not str:
        raise TypeError(f"expected a str, got {type(v).__name__}")
    try:
        raw = v.encode()
    except UnicodeEncodeError:
        raise ValueError("string is not valid Unicode (unpaired surrogate)") from None
    return _varint_bytes(len(raw)) + raw


def _encode_bytes(v: Any, field: _Field) -> bytes:
    if not isinstance(v, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected bytes, got {type(v).__name__}")
    return _varint_bytes(len(v)) + bytes(v)


def _encode_message_value(v: Any, field: _Field) -> bytes:
    raise TypeError("a message field has no scalar encoding")  # never called: sub is set


_I32, _I64 = 1 << 31, 1 << 63
_ENCODERS: dict[str, Encoder] = {
    "int32": _varint_encoder(-_I32, _I32 - 1),
    "int64": _varint_encoder(-_I64, _I64 - 1),
    "uint32": _varint_encoder(0, _M32),
    "uint64": _varint_encoder(0, _M64),
    "sint32": _varint_encoder(-_I32, _I32 - 1, 31),
    "sint64": _varint_encoder(-_I64, _I64 - 1, 63),
    "fixed32": _fixed_encoder("<I", 0, _M32),
    "fixed64": _fixed_encoder("<Q", 0, _M64),
    "sfixed32": _fixed_encoder("<i", -_I32, _I32 - 1),
    "sfixed64": _fixed_encoder("<q", -_I64, _I64 - 1),
    "float": _fixed_encoder("<f"),
    "double": _fixed_encoder("<d"),
    "bool": _encode_bool,
    "enum": _encode_enum,
    "string": _encode_string,
    "bytes": _encode_bytes,
    "message": _encode_message_value,
}
# The encoding of each type's default, which an implicit-presence field omits.
_ZEROS = {
    "fixed32": b"\0" * 4,
    "sfixed32": b"\0" * 4,
    "float": b"\0" * 4,
    "fixed64": b"\0" * 8,
    "sfixed64": b"\0" * 8,
    "double": b"\0" * 8,
}
