"""The request records and their messages agree, field by field, and convert whole."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from google.protobuf.descriptor import FieldDescriptor

from minislurm.requests import HoldAction
from minislurm.wire import convert
from minislurm.wire.rpc import minislurm_pb2 as pb

PAIRS = sorted(convert.RECORDS.items(), key=lambda pair: pair[0].__name__)


@pytest.mark.parametrize(("cls", "message"), PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_a_record_has_exactly_its_messages_fields(cls: type, message: type) -> None:
    fields = {f.name for f in dataclasses.fields(cls)}
    assert fields == set(message.DESCRIPTOR.fields_by_name)


@pytest.mark.parametrize(("cls", "message"), PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_an_optional_field_is_none_when_unset_and_no_other_is(cls: type, message: type) -> None:
    record = convert.record(cls, message())
    for desc in message.DESCRIPTOR.fields:
        optional = desc.has_presence and desc.type != FieldDescriptor.TYPE_MESSAGE
        assert (getattr(record, desc.name) is None) == optional, desc.name


def _filled(message: type) -> typing.Any:
    """A message with every field set to a value other than its default."""
    msg = message()
    for desc in message.DESCRIPTOR.fields:
        if desc.type == FieldDescriptor.TYPE_MESSAGE:
            if desc.message_type.GetOptions().map_entry:
                getattr(msg, desc.name)["k"] = "v"
            elif desc.is_repeated:
                getattr(msg, desc.name).append(_filled(desc.message_type._concrete_class))
            else:
                getattr(msg, desc.name).CopyFrom(_filled(desc.message_type._concrete_class))
            continue
        value: typing.Any = {
            FieldDescriptor.TYPE_STRING: "x",
            FieldDescriptor.TYPE_BYTES: b"x",
            FieldDescriptor.TYPE_BOOL: True,
            FieldDescriptor.TYPE_DOUBLE: 1.5,
            FieldDescriptor.TYPE_ENUM: 3,
        }.get(desc.type, 7)
        if desc.is_repeated:
            getattr(msg, desc.name).append(value)
        else:
            setattr(msg, desc.name, value)
    return msg


@pytest.mark.parametrize(("cls", "message"), PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_every_field_of_a_message_reaches_its_record(cls: type, message: type) -> None:
    msg = _filled(message)
    record = convert.record(cls, msg)
    for desc in message.DESCRIPTOR.fields:
        got = getattr(record, desc.name)
        if desc.type == FieldDescriptor.TYPE_MESSAGE and desc.message_type.GetOptions().map_entry:
            assert got == {"k": "v"}
        elif desc.type == FieldDescriptor.TYPE_MESSAGE:
            assert dataclasses.is_dataclass(got[0] if desc.is_repeated else got), desc.name
        elif desc.is_repeated:
            assert got == tuple(getattr(msg, desc.name)), desc.name
        else:
            assert got == getattr(msg, desc.name), desc.name


@pytest.mark.parametrize(("cls", "message"), PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_a_record_converts_back_to_the_same_message(cls: type, message: type) -> None:
    for msg in (message(), _filled(message)):
        assert convert.message(convert.record(cls, msg)) == msg


def test_hold_actions_are_the_messages_numbers() -> None:
    names = pb.HoldJobsRequest.Action.keys()
    assert {a.name: a.value for a in HoldAction} == {
        n: pb.HoldJobsRequest.Action.Value(n) for n in names
    }
