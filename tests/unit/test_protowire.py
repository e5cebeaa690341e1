"""minislurm.wire.protowire against the official protobuf runtime.

Two schemas are exercised: minislurm's own (generated into minislurm/wire/rpc/) and
a test-only proto3 file built here as a descriptor, covering every scalar type
singular, optional, packed, unpacked and as map keys and values, enums with
negative values, and recursive messages. Its protowire schema comes from the
same generator code (scripts/gen_proto.py) as the real one.
"""

from __future__ import annotations

import importlib.util
import math
import re
import struct
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minislurm.wire import protowire
from minislurm.wire.protowire import Message, Schema
from minislurm.wire.rpc import minislurm_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]
FD = FieldDescriptor
SCALARS = [
    "double",
    "float",
    "int64",
    "uint64",
    "int32",
    "fixed64",
    "fixed32",
    "bool",
    "string",
    "bytes",
    "uint32",
    "sfixed32",
    "sfixed64",
    "sint32",
    "sint64",
]
TYPE_NUMBERS = {name: getattr(FD, f"TYPE_{name.upper()}") for name in SCALARS}
TEST_PACKAGE = "minislurm.test"


def load_gen_proto() -> Any:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the all-types test proto


def _field(
    message: Any, name: str, number: int, type_name: str, *, repeated: bool = False, ref: str = ""
) -> Any:
    field = message.field.add(name=name, number=number)
    field.label = FD.LABEL_REPEATED if repeated else FD.LABEL_OPTIONAL
    if type_name in TYPE_NUMBERS:
        field.type = TYPE_NUMBERS[type_name]
    else:
        field.type = FD.TYPE_MESSAGE if type_name == "message" else FD.TYPE_ENUM
        field.type_name = f".{TEST_PACKAGE}.{ref}"
    return field


def _optional(message: Any, name: str, number: int, type_name: str, ref: str = "") -> None:
    field = _field(message, name, number, type_name, ref=ref)
    field.proto3_optional = True
    field.oneof_index = len(message.oneof_decl)
    message.oneof_decl.add(name=f"_{name}")


def _map(message: Any, name: str, number: int, key: str, value: str, ref: str = "") -> None:
    entry_name = "".join(part.title() for part in name.split("_")) + "Entry"
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    _field(entry, "key", 1, key)
    _field(entry, "value", 2, value, ref=ref)
    _field(message, name, number, "message", repeated=True, ref=f"{message.name}.{entry_name}")


def all_types_file() -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(
        name="minislurm_test/all_types.proto", package=TEST_PACKAGE, syntax="proto3"
    )
    color = f.enum_type.add(name="Color")
    for name, number in (("COLOR_UNSET", 0), ("RED", 1), ("BLUE", 2), ("INFRARED", -1)):
        color.value.add(name=name, number=number)
    tree = f.message_type.add(name="Tree")
    _field(tree, "value", 1, "sint32")
    _field(tree, "children", 2, "message", repeated=True, ref="Tree")
    _optional(tree, "leaf", 3, "message", ref="AllTypes")
    m = f.message_type.add(name="AllTypes")
    for i, scalar in enumerate(SCALARS):
        _field(m, f"{scalar}_value", 1 + i, scalar)
        _optional(m, f"opt_{scalar}", 100 + i, scalar)
        _field(m, f"rep_{scalar}", 200 + i, scalar, repeated=True)
        if scalar not in ("string", "bytes"):
            _field(m, f"unpacked_{scalar}", 300 + i, scalar, repeated=True).options.packed = False
    _field(m, "color", 400, "enum", ref="Color")
    _optional(m, "opt_color", 401, "enum", ref="Color")
    _field(m, "rep_color", 402, "enum", repeated=True, ref="Color")
    _field(m, "tree", 410, "message", ref="Tree")
    _field(m, "forest", 411, "message", repeated=True, ref="Tree")
    _map(m, "int_to_string", 420, "int32", "string")
    _map(m, "string_to_tree", 421, "string", "message", ref="Tree")
    _map(m, "bool_to_bytes", 422, "bool", "bytes")
    _map(m, "uint64_to_double", 423, "uint64", "double")
    _map(m, "sint64_to_color", 424, "sint64", "enum", ref="Color")
    _map(m, "fixed32_to_sfixed64", 425, "fixed32", "sfixed64")
    _map(m, "string_to_float", 426, "string", "float")
    return f


class World:
    """A schema for protowire next to the runtime's classes for the same messages."""

    def __init__(self, schema: Schema, pool: Any) -> None:
        self.schema = schema
        self.pool = pool

    def descriptor(self, name: str) -> Descriptor:
        return self.pool.FindMessageTypeByName(name)

    def cls(self, name: str) -> Any:
        return message_factory.GetMessageClass(self.descriptor(name))


def make_test_world() -> World:
    gen = load_gen_proto()
    file_proto = all_types_file()
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    namespace: dict[str, Any] = {}
    source = gen.render_schema(gen.build_schema([file_proto]), ["all_types.proto"])
    exec(compile(source, "all_types_schema", "exec"), namespace)
    return World(Schema(namespace["MESSAGES"], namespace["ENUMS"], namespace["SERVICES"]), pool)


MINISLURM = World(protowire.default_schema(), pb.DESCRIPTOR.pool)
ALL_TYPES = make_test_world()
CASES = [(MINISLURM, name) for name in MINISLURM.schema.messages] + [
    (ALL_TYPES, name) for name in ALL_TYPES.schema.messages
]
CASE_IDS = [name for _, name in CASES]


# ---------------------------------------------------------------- values and comparisons

INT_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "sint32": (-(2**31), 2**31 - 1),
    "sfixed32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "sint64": (-(2**63), 2**63 - 1),
    "sfixed64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
    "fixed32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "fixed64": (0, 2**64 - 1),
}
TYPE_WORDS = {number: word for word, number in TYPE_NUMBERS.items()}


def scalar_strategy(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    if field.type == FD.TYPE_ENUM:
        known = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.integers(-(2**31), 2**31 - 1))
    word = TYPE_WORDS[field.type]
    if word in INT_RANGES:
        low, high = INT_RANGES[word]
        return st.one_of(
            st.integers(low, high),
            st.sampled_from([low, high, 0, 1, -1]).filter(lambda v: low <= v <= high),
        )
    return {
        "double": st.floats(),
        "float": st.floats(width=32),
        "bool": st.booleans(),
        "string": st.text(max_size=20),
        "bytes": st.binary(max_size=20),
    }[word]


@cache
def message_strategy(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts of field values (each field present or not) for ``descriptor``."""
    return st.fixed_dictionaries(
        {}, optional={f.name: field_strategy(f, depth) for f in descriptor.fields}
    )


def element_strategy(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    if field.type == FD.TYPE_MESSAGE:
        if depth >= 2:
            return st.just({})
        return st.deferred(lambda: message_strategy(field.message_type, depth + 1))
    return scalar_strategy(field)


def field_strategy(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    if is_map(field):
        entry = field.message_type
        return st.dictionaries(
            scalar_strategy(entry.fields_by_name["key"]),
            element_strategy(entry.fields_by_name["value"], depth),
            max_size=3,
        )
    element = element_strategy(field, depth)
    return st.lists(element, max_size=4) if field.is_repeated else element


def is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def runtime_plain(message: Any) -> dict[str, Any]:
    """A runtime message as the plain values protowire's ``to_dict`` gives."""
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        if is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {k: runtime_value(value_field, v) for k, v in value.items()}
        elif field.is_repeated:
            out[field.name] = [runtime_value(field, v) for v in value]
        else:
            out[field.name] = runtime_value(field, value)
    return out


def runtime_value(field: FieldDescriptor, value: Any) -> Any:
    return runtime_plain(value) if field.type == FD.TYPE_MESSAGE else value


def canon(value: Any) -> Any:
    """Comparable form: floats by bit pattern (NaN == NaN, -0.0 != 0.0)."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("float", struct.pack("<d", value))
    if isinstance(value, dict):
        return {canon(k): canon(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canon(v) for v in value]
    return value


def has_multi_entry_map(descriptor: Descriptor, value: dict[str, Any]) -> bool:
    """Whether any map in ``value`` has two entries or more.

    The runtime's entry order is a hash order, or with ``deterministic=True`` an
    upb quirk (e.g. integer keys descending); protowire keeps insertion order.
    """
    for name, v in value.items():
        field = descriptor.fields_by_name[name]
        if is_map(field):
            if len(v) > 1:
                return True
            v = list(v.values())
            field = field.message_type.fields_by_name["value"]
        elif not field.is_repeated:
            v = [v]
        if field.type == FD.TYPE_MESSAGE and any(
            has_multi_entry_map(field.message_type, item) for item in v
        ):
            return True
    return False


PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
THOROUGH = settings(PROPERTY, max_examples=200)
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")


# ---------------------------------------------------------------- property tests


@pytest.mark.parametrize(("world", "name"), CASES, ids=CASE_IDS)
@PROPERTY
@given(data=st.data())
def test_runtime_encodings_decode_to_the_same_values(
    world: World, name: str, data: st.DataObject
) -> None:
    value = data.draw(message_strategy(world.descriptor(name)))
    message = world.cls(name)(**value)
    decoded = world.schema.decode(name, message.SerializeToString())
    assert canon(decoded.to_dict()) == canon(runtime_plain(message))


@pytest.mark.parametrize(("world", "name"), CASES, ids=CASE_IDS)
@PROPERTY
@given(data=st.data())
def test_protowire_encodings_are_byte_identical_to_the_runtime(
    world: World, name: str, data: st.DataObject
) -> None:
    descriptor = world.descriptor(name)
    value = data.draw(message_strategy(descriptor))
    encoded = world.schema.encode(name, value)
    expected = world.cls(name)(**value)
    assert canon(runtime_plain(world.cls(name).FromString(encoded))) == canon(
        runtime_plain(expected)
    )
    if not has_multi_entry_map(descriptor, value):
        assert encoded == expected.SerializeToString()


@pytest.mark.parametrize(("world", "name"), CASES, ids=CASE_IDS)
@PROPERTY
@given(data=st.data())
def test_concatenated_encodings_merge_like_the_runtime(
    world: World, name: str, data: st.DataObject
) -> None:
    strategy = message_strategy(world.descriptor(name))
    cls = world.cls(name)
    wire = cls(**data.draw(strategy)).SerializeToString() + world.schema.encode(
        name, data.draw(strategy)
    )
    assert canon(world.schema.decode(name, wire).to_dict()) == canon(
        runtime_plain(cls.FromString(wire))
    )


@THOROUGH
@given(data=st.data())
def test_decoded_messages_reencode_to_the_same_bytes(data: st.DataObject) -> None:
    name = f"{TEST_PACKAGE}.AllTypes"
    descriptor = ALL_TYPES.descriptor(name)
    wire = ALL_TYPES.cls(name)(**data.draw(message_strategy(descriptor))).SerializeToString()
    decoded = ALL_TYPES.schema.decode(name, wire)
    assert ALL_TYPES.schema.encode(name, decoded) == wire
    assert ALL_TYPES.schema.encode(name, decoded.to_dict()) == wire
    again = ALL_TYPES.schema.decode(name, wire)
    assert canon(again.to_dict()) == canon(decoded.to_dict())
    if "nan" not in repr(decoded):  # NaN != NaN, in messages as in the runtime
        assert again == decoded


@THOROUGH
@given(data=st.data())
def test_corrupted_input_is_rejected_with_value_error_or_decoded_like_the_runtime(
    data: st.DataObject,
) -> None:
    name = f"{TEST_PACKAGE}.AllTypes"
    value = data.draw(message_strategy(ALL_TYPES.descriptor(name)))
    wire = bytearray(ALL_TYPES.cls(name)(**value).SerializeToString())
    if wire:
        cut = data.draw(st.integers(0, len(wire)))
        wire[cut : cut + 1] = data.draw(st.binary(max_size=2))
    try:
        ours: Any = canon(ALL_TYPES.schema.decode(name, bytes(wire)).to_dict())
    except ValueError:
        ours = "rejected"
    try:
        theirs: Any = canon(runtime_plain(ALL_TYPES.cls(name).FromString(bytes(wire))))
    except DecodeError:
        theirs = "rejected"
    if ours != "rejected" and theirs != "rejected":
        assert ours == theirs
    if theirs != "rejected":  # we never refuse what the runtime accepts
        assert ours != "rejected"


def test_schema_describes_every_message_of_the_proto() -> None:
    def walk(descriptors: Any) -> list[str]:
        names = []
        for d in descriptors:
            if not d.GetOptions().map_entry:
                names.append(d.full_name)
            names += walk(d.nested_types)
        return names

    assert sorted(MINISLURM.schema.messages) == sorted(
        walk(pb.DESCRIPTOR.message_types_by_name.values())
    )
    assert "minislurm.v1.HoldJobsRequest.Action" in MINISLURM.schema.enums
    assert MINISLURM.schema.services["minislurm.v1.SlurmController"]["Ping"][:2] == (
        "minislurm.v1.PingRequest",
        "minislurm.v1.PingReply",
    )


# ---------------------------------------------------------------- edge cases


def test_negative_int32_is_ten_bytes_of_twos_complement() -> None:
    encoded = protowire.encode("minislurm.v1.JobSpec", {"nice": -1})
    assert encoded == b"\xc8\x01" + b"\xff" * 9 + b"\x01"
    assert encoded == pb.JobSpec(nice=-1).SerializeToString()
    assert protowire.decode("minislurm.v1.JobSpec", encoded).nice == -1


def test_max_uint64_round_trips() -> None:
    encoded = protowire.encode("minislurm.v1.NodeAllocation", {"mem": 2**64 - 1})
    assert encoded == pb.NodeAllocation(mem=2**64 - 1).SerializeToString()
    assert protowire.decode("minislurm.v1.NodeAllocation", encoded).mem == 2**64 - 1


def test_optional_set_to_its_default_is_present_unlike_an_absent_one() -> None:
    present = protowire.encode("minislurm.v1.UpdateJobRequest", {"job_id": 5, "time_limit": 0})
    absent = protowire.encode("minislurm.v1.UpdateJobRequest", {"job_id": 5})
    assert present == pb.UpdateJobRequest(job_id=5, time_limit=0).SerializeToString()
    assert absent == b"\x08\x05"
    assert protowire.decode("minislurm.v1.UpdateJobRequest", present).has("time_limit")
    assert not protowire.decode("minislurm.v1.UpdateJobRequest", absent).has("time_limit")
    assert pb.UpdateJobRequest.FromString(present).HasField("time_limit")


def test_implicit_fields_at_their_default_are_not_encoded() -> None:
    assert (
        protowire.encode(
            "minislurm.v1.JobSpec",
            {"name": "", "uid": 0, "hold": False, "argv": [], "environment": {}},
        )
        == b""
    )


def test_nested_messages_read_as_attributes_with_empty_defaults() -> None:
    wire = pb.SubmitJobRequest(spec=pb.JobSpec(name="train", argv=["a"])).SerializeToString()
    request = protowire.decode("minislurm.v1.SubmitJobRequest", wire)
    assert request.spec.name == "train"
    assert request.spec.argv == ["a"]
    assert request.spec.uid == 0
    assert request.has("spec")
    empty = protowire.decode("minislurm.v1.SubmitJobRequest", b"")
    assert not empty.has("spec")
    assert empty.spec == Message("minislurm.v1.JobSpec")
    assert empty.spec.environment == {}
    assert empty.spec.script == b""


def test_map_fields_decode_to_dicts() -> None:
    env = {"PATH": "/bin", "EMPTY": "", "": "x"}
    wire = pb.JobSpec(environment=env).SerializeToString()
    assert protowire.decode("minislurm.v1.JobSpec", wire).environment == env


def test_unicode_strings_round_trip() -> None:
    name = "héllo ✓ 🚀 \u0000 日本"
    wire = protowire.encode("minislurm.v1.JobSpec", {"name": name})
    assert wire == pb.JobSpec(name=name).SerializeToString()
    assert protowire.decode("minislurm.v1.JobSpec", wire).name == name


def test_unknown_fields_of_every_wire_type_are_skipped() -> None:
    known = pb.PingReply(cluster="c", now=7).SerializeToString()
    unknown = (
        b"\xa0\x06\x96\x01"  # field 100 varint
        + b"\xa9\x06"
        + bytes(8)  # field 101 fixed64
        + b"\xb2\x06\x03abc"  # field 102 length-delimited
        + b"\xbd\x06"
        + bytes(4)  # field 103 fixed32
        + b"\xc3\x06\x08\x01\xc4\x06"  # field 104 group holding field 1
    )
    decoded = protowire.decode("minislurm.v1.PingReply", unknown + known + unknown)
    assert decoded.to_dict() == {"cluster": "c", "now": 7}


# An AllTypes message with its byte 307 deleted: a uint64_to_double entry then
# holds key 17 and an unknown fixed64 field 9, and the next entry's tag became
# an unknown field 3 of AllTypes.
CORRUPTED_ALL_TYPES = bytes.fromhex(
    "18d19cd02928023d447b000078808001b006bdc8a0fdffffffffff01ea0606beb519c8cb0e900700ca0c0800"
    "00000000000000e20c0affffffffffffffffff01b20d0affffffffffffffffff018913000000000000000089"
    "130000000000000000891309b46901000000008913fc2cda0301000000bd1300000000bd1300000000bd1300"
    "000000bd1300000000d219870108ffffffff0f120a08ffffffff0f120012001a730945e607ef151668cf1802"
    "5203fc9310b00680808080808080808001d80600f006ffffffff0ffd0600efffff8107fe1d000000000000ca"
    "0c08a188d45ad9ea5bdbfa0c0400000000920d06006fbf2ed5669a0d10000000000000000000000000000000"
    "008019f9d3ffffffffffffff01d21900b21a140800121000000000000000000000000000000000ba1a0b0811"
    "49a5d238e7ad1fa7ba1a0b0800110000000000000000"
)


def all_types_decoded_by_both(wire: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """``wire`` decoded as AllTypes by protowire and by the runtime, as plain values."""
    name = f"{TEST_PACKAGE}.AllTypes"
    ours = ALL_TYPES.schema.decode(name, wire).to_dict()
    return ours, runtime_plain(ALL_TYPES.cls(name).FromString(wire))


def test_field_number_0_inside_an_unknown_group_is_skipped_like_the_runtime() -> None:
    # Found by the property test: an AllTypes message whose first byte was
    # deleted starts with a group of field 2 holding a varint of field 0. upb
    # refuses field number 0 only outside groups; inside one it skips it.
    for wire in ("1300ba1a14", "1300ba1a140880808080808080808001110000000000000000"):
        ours, theirs = all_types_decoded_by_both(bytes.fromhex(wire))
        assert canon(ours) == canon(theirs)
    for refused in ("00", "1300", "0000"):  # outside a group (or the group is cut short)
        with pytest.raises(ValueError):
            ALL_TYPES.schema.decode(f"{TEST_PACKAGE}.AllTypes", bytes.fromhex(refused))


def test_corrupted_map_entry_found_by_the_property_test_decodes_like_the_runtime() -> None:
    ours, theirs = all_types_decoded_by_both(CORRUPTED_ALL_TYPES)
    assert canon(ours) == canon(theirs)
    assert "uint64_to_double" not in ours
    assert ours["sint64_value"] == 8192


def _entry(field_tag: bytes, entry: bytes) -> bytes:
    return field_tag + bytes([len(entry)]) + entry


UINT64_TO_DOUBLE = b"\xba\x1a"  # field 423, length-delimited
STRING_TO_TREE = b"\xaa\x1a"  # field 421, length-delimited
DOUBLE_ONE = b"\x11" + struct.pack("<d", 1.0)  # entry field 2 (value) as fixed64


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (_entry(UINT64_TO_DOUBLE, b"\x08\x11" + DOUBLE_ONE), {"uint64_to_double": {17: 1.0}}),
        (_entry(UINT64_TO_DOUBLE, b"\x08\x11"), {"uint64_to_double": {17: 0.0}}),
        (_entry(UINT64_TO_DOUBLE, b"\x08\x11\x49" + bytes(8)), {}),  # unknown field 9
        (_entry(UINT64_TO_DOUBLE, b"\x18\x00\x08\x11" + DOUBLE_ONE), {}),  # unknown field 3 first
        (_entry(UINT64_TO_DOUBLE, b"\x08\x11" + DOUBLE_ONE + b"\x1b\x08\x01\x1c"), {}),  # a group
        (_entry(UINT64_TO_DOUBLE, b"\x08\x11\x10\x05"), {}),  # value as a varint
        (_entry(UINT64_TO_DOUBLE, b"\x0d\x11\x00\x00\x00" + DOUBLE_ONE), {}),  # key as fixed32
        (_entry(UINT64_TO_DOUBLE, b"\x08\x11\x12\x00"), {}),  # value length-delimited
        (  # a dropped entry leaves the earlier one of its key alone
            _entry(UINT64_TO_DOUBLE, b"\x08\x11" + DOUBLE_ONE)
            + _entry(UINT64_TO_DOUBLE, b"\x08\x11\x11" + bytes(8) + b"\x18\x00"),
            {"uint64_to_double": {17: 1.0}},
        ),
        (  # an unknown field inside a message value belongs to the value: entry kept
            _entry(STRING_TO_TREE, b"\x0a\x01k\x12\x04\x08\x02\x78\x00"),  # Tree field 15
            {"string_to_tree": {"k": {"value": 1}}},
        ),
    ],
    ids=[
        "key-value",
        "key-only",
        "unknown-field",
        "unknown-field-first",
        "unknown-group",
        "value-as-varint",
        "key-as-fixed32",
        "value-as-bytes",
        "earlier-entry-kept",
        "unknown-in-value",
    ],
)
def test_map_entries_holding_unknown_fields_are_left_out_of_the_map_like_the_runtime(
    wire: bytes, expected: dict[str, Any]
) -> None:
    ours, theirs = all_types_decoded_by_both(wire)
    assert canon(theirs) == canon(expected)
    assert canon(ours) == canon(expected)


def test_unpacked_encoding_of_a_packed_field_is_accepted() -> None:
    unpacked = b"\x20\x01\x20\x02\x20\xac\x02"  # field 4 (gpus) as three varints
    assert protowire.decode("minislurm.v1.NodeAllocation", unpacked).gpus == [1, 2, 300]
    assert list(pb.NodeAllocation.FromString(unpacked).gpus) == [1, 2, 300]


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (b"\x0a\x05abc", "truncated"),  # string shorter than its length
        (b"\x18", "truncated"),  # varint missing
        (b"\x18\xff", "truncated"),  # varint cut short
        (b"\x0f", "wire type 7"),
        (b"\x00\x01", "field number 0"),
        (b"\x0a\x02\xff\xfe", "UTF-8"),
        (b"\x18" + b"\xff" * 10 + b"\x01", "longer than 10 bytes"),
        (b"\xc3\x06\x08\x01", "truncated"),  # group without its end
    ],
)
def test_malformed_input_raises_value_error(wire: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        protowire.decode("minislurm.v1.PingReply", wire)


def test_every_truncation_of_a_message_raises_value_error_or_decodes_a_prefix() -> None:
    job = pb.JobInfo(job_id=3, name="n" * 40, allocation=[pb.NodeAllocation(node="a", gpus=[1])])
    wire = pb.GetJobsReply(jobs=[job, job], now=9).SerializeToString()
    rejected = 0
    for cut in range(len(wire)):
        try:
            protowire.decode("minislurm.v1.GetJobsReply", wire[:cut])
        except ValueError:
            rejected += 1
    assert rejected >= len(wire) - 4  # only cuts at top-level field boundaries parse
    with pytest.raises(ValueError, match="truncated"):
        protowire.decode("minislurm.v1.GetJobsReply", wire[:-1])


# ---------------------------------------------------------------- encoding errors


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ({"uid": "5"}, TypeError, "JobSpec.uid: expected an int, got str"),
        ({"uid": True}, TypeError, "JobSpec.uid: expected an int, got bool"),
        ({"uid": -1}, ValueError, "JobSpec.uid: -1 is out of range"),
        ({"uid": 2**32}, ValueError, "JobSpec.uid"),
        ({"nice": 2**31}, ValueError, "JobSpec.nice"),
        ({"name": b"x"}, TypeError, "JobSpec.name: expected a str"),
        ({"name": "\ud800"}, ValueError, "JobSpec.name"),
        ({"script": "text"}, TypeError, "JobSpec.script: expected bytes"),
        ({"hold": 1}, TypeError, "JobSpec.hold: expected a bool"),
        ({"argv": "abc"}, TypeError, "JobSpec.argv: expected a list"),
        ({"argv": [None]}, TypeError, "JobSpec.argv"),
        ({"argv": [1]}, TypeError, "JobSpec.argv"),
        ({"environment": [("a", "b")]}, TypeError, "JobSpec.environment: expected a dict"),
        ({"environment": {"a": 1}}, TypeError, "JobSpec.environment"),
        ({"no_such_field": 1}, ValueError, "no field 'no_such_field'"),
    ],
)
def test_bad_values_are_rejected_naming_the_field(
    value: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        protowire.encode("minislurm.v1.JobSpec", value)


def test_float_fields_reject_values_out_of_float32_range() -> None:
    with pytest.raises(ValueError, match="opt_float"):
        ALL_TYPES.schema.encode(f"{TEST_PACKAGE}.AllTypes", {"opt_float": 1e300})


def test_enums_accept_value_names_and_reject_unknown_names() -> None:
    wire = protowire.encode("minislurm.v1.HoldJobsRequest", {"action": "RELEASE"})
    assert wire == pb.HoldJobsRequest(action=pb.HoldJobsRequest.RELEASE).SerializeToString()
    assert protowire.decode("minislurm.v1.HoldJobsRequest", wire).action == 2
    with pytest.raises(ValueError, match=r"HoldJobsRequest\.action: unknown enum value name"):
        protowire.encode("minislurm.v1.HoldJobsRequest", {"action": "EXPLODE"})


def test_sub_message_of_the_wrong_type_is_rejected() -> None:
    with pytest.raises(TypeError, match=r"expected a minislurm\.v1\.JobSpec message"):
        protowire.encode(
            "minislurm.v1.SubmitJobRequest", {"spec": Message("minislurm.v1.PingReply")}
        )


def test_none_means_absent() -> None:
    assert (
        protowire.encode("minislurm.v1.UpdateJobRequest", {"job_id": 1, "time_limit": None})
        == b"\x08\x01"
    )


def test_unknown_message_type_raises_key_error() -> None:
    with pytest.raises(KeyError, match=r"minislurm\.v1\.Nope"):
        protowire.encode("minislurm.v1.Nope", {})


# ---------------------------------------------------------------- the Message API


def test_message_attribute_defaults_and_errors() -> None:
    info = Message("minislurm.v1.NodeInfo", name="n1", cpus=8)
    assert (info.name, info.cpus, info.cpu_load, info.flags, info.addr) == ("n1", 8, 0.0, [], "")
    with pytest.raises(AttributeError, match="no field 'bogus'"):
        _ = info.bogus
    with pytest.raises(AttributeError):
        info.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="has no presence"):
        info.has("name")
    with pytest.raises(AttributeError, match="no field 'bogus'"):
        info.has("bogus")


def test_message_equality_repr_and_to_dict() -> None:
    a = Message("minislurm.v1.PingReply", {"cluster": "c"}, now=3)
    b = protowire.decode(
        "minislurm.v1.PingReply", pb.PingReply(cluster="c", now=3).SerializeToString()
    )
    assert a == b
    assert a != Message("minislurm.v1.PingReply", cluster="c")
    assert a != Message("minislurm.v1.GetNodesRequest")
    assert repr(a) == "PingReply(cluster='c', now=3)"
    assert a.to_dict() == {"cluster": "c", "now": 3}
    assert "cluster" in dir(a)


def test_message_constructor_validates_like_encode() -> None:
    with pytest.raises(TypeError, match=r"PingReply\.now"):
        Message("minislurm.v1.PingReply", now="3")


def test_to_dict_converts_nested_messages_and_is_a_copy() -> None:
    reply = protowire.decode(
        "minislurm.v1.GetJobsReply",
        pb.GetJobsReply(
            jobs=[pb.JobInfo(job_id=1, allocation=[pb.NodeAllocation(node="a")])]
        ).SerializeToString(),
    )
    plain = reply.to_dict()
    assert plain == {"jobs": [{"job_id": 1, "allocation": [{"node": "a"}]}]}
    plain["jobs"].clear()
    assert len(reply.jobs) == 1


ENCODERS: list[Callable[..., bytes]] = [protowire.encode, MINISLURM.schema.encode]


@pytest.mark.parametrize("encode", ENCODERS)
def test_messages_are_accepted_as_values_to_encode(encode: Callable[..., bytes]) -> None:
    spec = Message("minislurm.v1.JobSpec", name="x", environment={"A": "1"})
    assert (
        encode("minislurm.v1.SubmitJobRequest", {"spec": spec})
        == pb.SubmitJobRequest(
            spec=pb.JobSpec(name="x", environment={"A": "1"})
        ).SerializeToString()
    )
