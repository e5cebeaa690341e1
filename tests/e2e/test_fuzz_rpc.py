"""Fuzzing the controller's RPC handlers through its real socket.

Hypothesis builds random requests for every SlurmController method from the
message descriptors (any field set or not, edge integers, odd strings,
nested messages and maps) and also sends raw random bytes; each goes through
our HTTP/2 client with a valid root credential, so it reaches the handler.
A handler may answer or refuse with a status; UNKNOWN (an unhandled
exception), INTERNAL or a deadline is a crash (an undecodable request is
INVALID_ARGUMENT). ``--hypothesis-show-statistics`` shows the outcomes per
method. Afterwards the controller must still answer, its log must hold no
traceback, and its memory must not have grown by more than 200 MiB.
``WaitJob`` is left out: it legitimately blocks for its timeout. Submitted
jobs are allocations (``batch`` false), so no random script runs as root
with random paths. Examples
per test: ``MINISLURM_FUZZ_EXAMPLES`` (default 300).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from conftest import TestCluster
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from minislurm import limits
from minislurm.conffile import read_controller_address
from minislurm.security import auth
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import Channel, RpcError
from minislurm.wire.rpc import minislurm_pb2 as pb

pytestmark = pytest.mark.timeout(600)

SERVICE = pb.DESCRIPTOR.services_by_name["SlurmController"]
METHODS = [m for m in SERVICE.methods if m.name != "WaitJob"]
REFUSALS = {
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "PERMISSION_DENIED",
    "FAILED_PRECONDITION",
    "RESOURCE_EXHAUSTED",
    "OUT_OF_RANGE",
    "ALREADY_EXISTS",
    "UNIMPLEMENTED",  # a method added to the contract before its handler
}
FUZZ = settings(
    max_examples=int(os.environ.get("MINISLURM_FUZZ_EXAMPLES", "300")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ODD_TEXT = st.one_of(
    st.text(max_size=24),
    st.sampled_from(
        ["n1", "n[1-99999999]", "ALL", "DRAIN", "DOWN", "RESUME", "root", "-1", "%x", "\x00"]
    ),
)
_RANGES = {
    "TYPE_INT32": (-(2**31), 2**31 - 1),
    "TYPE_SINT32": (-(2**31), 2**31 - 1),
    "TYPE_SFIXED32": (-(2**31), 2**31 - 1),
    "TYPE_UINT32": (0, 2**32 - 1),
    "TYPE_FIXED32": (0, 2**32 - 1),
    "TYPE_INT64": (-(2**63), 2**63 - 1),
    "TYPE_SINT64": (-(2**63), 2**63 - 1),
    "TYPE_SFIXED64": (-(2**63), 2**63 - 1),
    "TYPE_UINT64": (0, 2**64 - 1),
    "TYPE_FIXED64": (0, 2**64 - 1),
}
_TYPE_NAMES = {
    getattr(pb.JobSpec.DESCRIPTOR.fields[0], n): n
    for n in dir(pb.JobSpec.DESCRIPTOR.fields[0])
    if n.startswith("TYPE_")
}


def _scalar(field: Any) -> st.SearchStrategy[Any]:
    kind = _TYPE_NAMES[field.type]
    if kind in _RANGES:
        lo, hi = _RANGES[kind]
        return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 1]))
    if kind == "TYPE_BOOL":
        return st.booleans()
    if kind in ("TYPE_DOUBLE", "TYPE_FLOAT"):
        return st.floats(width=32 if kind == "TYPE_FLOAT" else 64)
    if kind == "TYPE_STRING":
        return ODD_TEXT
    if kind == "TYPE_BYTES":
        return st.one_of(st.binary(max_size=64), st.just(b"#!/bin/sh\ntrue\n"))
    if kind == "TYPE_ENUM":
        return st.sampled_from([v.number for v in field.enum_type.values])
    raise AssertionError(kind)


def messages(descriptor: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Random messages of a type: each field absent or a random value."""
    cls = pb.__dict__.get(descriptor.name) or _message_class(descriptor)
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
            optional[field.name] = st.dictionaries(_scalar(key), _value(value, depth), max_size=4)
        elif field.is_repeated:
            optional[field.name] = st.lists(_value(field, depth), max_size=4)
        else:
            optional[field.name] = _value(field, depth)
    return st.fixed_dictionaries({}, optional=optional).map(lambda kw: cls(**kw))


def _value(field: Any, depth: int) -> st.SearchStrategy[Any]:
    if field.message_type is None:
        return _scalar(field)
    if depth >= 3:
        return st.builds(lambda: _message_class(field.message_type)())
    return messages(field.message_type, depth + 1)


def _message_class(descriptor: Any) -> Any:
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(descriptor)


def near_valid_specs() -> st.SearchStrategy[Any]:
    """A valid allocation request with one or two fields set at random (deeper coverage)."""
    fields = list(pb.JobSpec.DESCRIPTOR.fields)

    def spec(changes: list[tuple[Any, Any]]) -> Any:
        message = pb.JobSpec(
            name="f",
            script=b"#!/bin/sh\n",
            work_dir="/tmp",
            ntasks=1,
            user="nobody",
            uid=65534,
            gid=65534,
        )
        message.environment["PATH"] = "/bin"
        for field, value in changes:
            message.ClearField(field.name)
            message.MergeFrom(pb.JobSpec(**{field.name: value}))
        return message

    change = st.sampled_from(fields).flatmap(
        lambda f: st.tuples(
            st.just(f), messages(pb.JobSpec.DESCRIPTOR).map(lambda m, f=f: getattr(m, f.name))
        )
    )
    return st.lists(change, min_size=1, max_size=2).map(spec)


class Target:
    """The controller under fuzzing: its socket, a root signer and its pid."""

    def __init__(self, cluster: TestCluster) -> None:
        host, port = read_controller_address(cluster.local.conf_path)
        self.channel = Channel(host, port, timeout=20)
        self.sign = auth.signer_for(cluster.local.conf_path)
        self.pid = cluster.local.pid("slurmctld")
        self.log = cluster.home / "log" / "slurmctld.log"

    def call(self, method: str, payload: bytes) -> str:
        """The status name of one call ("OK" when it answered), after which
        the controller must still report its jobs and nodes."""
        code = self._call(method, payload)
        for read in (b"", pb.GetJobsRequest(all_states=True).SerializeToString()):
            after = self._call("GetNodes" if not read else "GetJobs", read)
            assert after == "OK", f"{method} {payload!r} broke the controller's reads: {after}"
        return code

    def _call(self, method: str, payload: bytes) -> str:
        path = f"/{SERVICE.full_name}/{method}"
        try:
            self.channel.unary(path, payload, [(auth.HEADER, self.sign(path))])
        except RpcError as err:
            assert err.code in REFUSALS, (method, err.code, err.details)
            return err.code
        return "OK"

    def rss_kib(self) -> int:
        with open(f"/proc/{self.pid}/status", encoding="ascii") as status:
            line = next(x for x in status if x.startswith("VmRSS:"))
        return int(line.split()[1])


@pytest.fixture(scope="module")
def target(cluster: TestCluster) -> Any:
    target = Target(cluster)
    before = target.rss_kib()
    yield target
    assert target.call("Ping", b"") == "OK"
    log = target.log.read_text(errors="replace")
    assert "Traceback" not in log, log[log.index("Traceback") - 300 :][:3000]
    grown = target.rss_kib() - before
    assert grown < 200 * 1024, f"slurmctld grew by {grown} KiB"
    target.channel.close()


@pytest.mark.parametrize(
    "change",
    [
        {"name": "x" * (limits.MAX_STRING + 1)},
        {"environment": {"HUGE": "x" * (limits.MAX_STRING + 1)}},
        {"argv": ["a"] * (limits.MAX_ITEMS + 1)},
        {"environment": {f"V{i}": "" for i in range(limits.MAX_ITEMS + 1)}},
        {"work_dir": "/" + "d/" * limits.MAX_STRING},
        {"script": b"#!/bin/sh\n" + b"#" * (4 * 1024 * 1024)},  # Slurm's max_script_size
    ],
    ids=["name", "env value", "argv count", "env count", "path", "script"],
)
def test_oversized_requests_are_refused_and_change_nothing(
    cluster: TestCluster, change: dict[str, Any]
) -> None:
    host, port = read_controller_address(cluster.local.conf_path)
    spec = {"name": "big", "script": b"#!/bin/sh\n", "batch": True, "hold": True, **change}
    with ControllerClient(host, port, 30, signer=auth.signer_for(cluster.local.conf_path)) as ctl:
        before = len(ctl.call("GetJobs", all_states=True).jobs)
        with pytest.raises(RpcError) as err:
            ctl.call("SubmitJob", spec={"work_dir": str(cluster.workdir), **spec})
        assert err.value.code == "INVALID_ARGUMENT"
        assert err.value.details.startswith(("Argument too long: spec.", "Batch job script"))
        assert len(ctl.call("GetJobs", all_states=True).jobs) == before


@FUZZ
@given(data=st.data())
def test_random_requests_are_answered_or_refused(target: Target, data: st.DataObject) -> None:
    method = data.draw(st.sampled_from(METHODS), label="method")
    request = data.draw(messages(method.input_type), label="request")
    if method.name == "SubmitJob" and data.draw(st.booleans(), label="near-valid"):
        request = pb.SubmitJobRequest(spec=data.draw(near_valid_specs(), label="spec"))
    if method.name == "SubmitJob":
        request.spec.batch = False  # allocations only: no random script runs as a random uid
    event(f"{method.name}: {target.call(method.name, request.SerializeToString())}")


@FUZZ
@given(method=st.sampled_from(METHODS), payload=st.binary(max_size=200))
def test_random_bytes_are_answered_or_refused(target: Target, method: Any, payload: bytes) -> None:
    event(f"{method.name}: {target.call(method.name, payload)}")
