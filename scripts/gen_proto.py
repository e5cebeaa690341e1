"""Regenerate the gRPC/protobuf stubs and the wire schema in minislurm/wire/rpc/ from proto/.

The one way stubs are made (``make proto``); tests/unit/test_generated_stubs.py
runs it into a temporary directory and fails when the committed files differ.

Besides protoc's ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py`` it writes
``minislurm_schema.py``: every message, enum and service as a plain Python
literal, built from the descriptors protoc produced, for minislurm.wire.protowire
(the commands' codec, which must not import the protobuf runtime).

Usage: python scripts/gen_proto.py [OUTPUT_DIR]   (default: minislurm/wire/rpc)
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTO_PACKAGE = "minislurm/v1"
TARGET_PACKAGE = "minislurm.wire.rpc"
SCHEMA_MODULE = "minislurm_schema.py"

# FieldDescriptorProto.Type -> the schema's type word (10, groups, is not proto3).
TYPE_NAMES = {
    1: "double",
    2: "float",
    3: "int64",
    4: "uint64",
    5: "int32",
    6: "fixed64",
    7: "fixed32",
    8: "bool",
    9: "string",
    11: "message",
    12: "bytes",
    13: "uint32",
    14: "enum",
    15: "sfixed32",
    16: "sfixed64",
    17: "sint32",
    18: "sint64",
}
NOT_PACKABLE = frozenset({"string", "bytes", "message"})
LABEL_REPEATED = 3

Field = tuple[int, str, str, str, bool, str, str]
Schema = tuple[
    dict[str, tuple[Field, ...]],
    dict[str, tuple[tuple[str, int], ...]],
    dict[str, dict[str, tuple[str, str, bool, bool]]],
]


def generate(out_dir: Path) -> list[Path]:
    """Run protoc on every .proto file and place the stubs and schema in ``out_dir``.

    Args:
        out_dir: directory that receives ``*_pb2.py``, ``*_pb2.pyi``,
            ``*_pb2_grpc.py`` and ``minislurm_schema.py``.

    Returns:
        The paths written.

    Raises:
        RuntimeError: protoc failed.
        ValueError: the protos use something the wire schema cannot describe.
    """
    from grpc_tools import protoc  # dev dependency, imported only here

    protos = sorted((PROTO_ROOT / PROTO_PACKAGE).glob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        descriptor_set = Path(tmp) / "descriptors.binpb"
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            f"--descriptor_set_out={descriptor_set}",
            "--include_imports",
            *(str(p) for p in protos),
        ]
        if protoc.main(args) != 0:
            raise RuntimeError("protoc failed")
        written = []
        out_dir.mkdir(parents=True, exist_ok=True)
        for src in sorted((Path(tmp) / PROTO_PACKAGE).iterdir()):
            text = src.read_text().replace(
                "from minislurm.v1 import", f"from {TARGET_PACKAGE} import"
            )
            dst = out_dir / src.name
            dst.write_text(text)
            written.append(dst)
        schema = build_schema(load_descriptor_set(descriptor_set.read_bytes()))
        sources = [p.relative_to(ROOT).as_posix() for p in protos]
        dst = out_dir / SCHEMA_MODULE
        dst.write_text(render_schema(schema, sources))
        written.append(dst)
    return written


def load_descriptor_set(data: bytes) -> list[Any]:
    """Parse a serialized ``FileDescriptorSet`` (protoc ``--descriptor_set_out``).

    Args:
        data: the file's bytes.

    Returns:
        Its ``FileDescriptorProto`` messages, in protoc's order.
    """
    from google.protobuf import descriptor_pb2

    return list(descriptor_pb2.FileDescriptorSet.FromString(data).file)


def build_schema(files: Iterable[Any]) -> Schema:
    """Describe every message, enum and service of ``files`` for minislurm.wire.protowire.

    Args:
        files: ``FileDescriptorProto`` messages (proto3 only).

    Returns:
        ``(messages, enums, services)`` in the format documented in the
        generated module; map entry messages are folded into their map fields.

    Raises:
        ValueError: a file is not proto3, or uses groups or real oneofs.
    """
    descriptors: dict[str, Any] = {}
    enums: dict[str, tuple[tuple[str, int], ...]] = {}
    services: dict[str, dict[str, tuple[str, str, bool, bool]]] = {}
    for f in files:
        if f.syntax != "proto3":
            raise ValueError(f"{f.name}: only proto3 files are supported, not {f.syntax!r}")
        _collect(f.package, f.message_type, f.enum_type, descriptors, enums)
        for svc in f.service:
            services[_join(f.package, svc.name)] = {
                m.name: (
                    m.input_type.lstrip("."),
                    m.output_type.lstrip("."),
                    m.client_streaming,
                    m.server_streaming,
                )
                for m in svc.method
            }
    messages = {
        name: _fields(name, desc, descriptors)
        for name, desc in descriptors.items()
        if not desc.options.map_entry
    }
    return messages, enums, services


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _collect(
    prefix: str,
    messages: Iterable[Any],
    enum_types: Iterable[Any],
    descriptors: dict[str, Any],
    enums: dict[str, tuple[tuple[str, int], ...]],
) -> None:
    for e in enum_types:
        enums[_join(prefix, e.name)] = tuple((v.name, v.number) for v in e.value)
    for m in messages:
        full = _join(prefix, m.name)
        descriptors[full] = m
        _collect(full, m.nested_type, m.enum_type, descriptors, enums)


def _fields(name: str, desc: Any, descriptors: dict[str, Any]) -> tuple[Field, ...]:
    out = []
    for fd in sorted(desc.field, key=lambda fd: fd.number):
        where = f"{name}.{fd.name}"
        if fd.type not in TYPE_NAMES:
            raise ValueError(f"{where}: field type {fd.type} (group) is not supported")
        if fd.HasField("oneof_index") and not fd.proto3_optional:
            raise ValueError(f"{where}: oneof is not supported by minislurm.wire.protowire")
        type_word, type_name = TYPE_NAMES[fd.type], fd.type_name.lstrip(".")
        entry = descriptors.get(type_name)
        if fd.label == LABEL_REPEATED and entry is not None and entry.options.map_entry:
            key, value = sorted(entry.field, key=lambda f: f.number)
            out.append(
                (
                    fd.number,
                    fd.name,
                    TYPE_NAMES[value.type],
                    "map",
                    False,
                    value.type_name.lstrip("."),
                    TYPE_NAMES[key.type],
                )
            )
            continue
        if fd.label == LABEL_REPEATED:
            label = "repeated"
            explicit = fd.options.HasField("packed")
            packed = type_word not in NOT_PACKABLE and (fd.options.packed or not explicit)
        else:
            label, packed = ("optional" if fd.proto3_optional else ""), False
        out.append((fd.number, fd.name, type_word, label, packed, type_name, ""))
    return tuple(out)


_HEADER = '''"""Generated by scripts/gen_proto.py from {sources}: do not edit.

The wire schema minislurm.wire.protowire encodes and decodes by, so that the
commands need neither grpcio nor the protobuf runtime. Imports nothing.

MESSAGES: full name -> fields in number order, each
    (number, name, type, label, packed, type_name, map_key_type)
  type: a proto3 scalar type ("uint32", "string", ...), "message" or "enum";
      for a map field, the type of its values
  label: "" (implicit presence), "optional" (proto3 optional: explicit
      presence), "repeated" or "map"
  packed: a repeated numeric field encoded packed
  type_name: the full name of the message or enum type (of a map's values), else ""
  map_key_type: the type of a map field's keys, else ""
ENUMS: full name -> ((value name, number), ...) in declaration order
SERVICES: full name -> {{method: (input type, output type, client streaming,
    server streaming)}}
"""

# fmt: off
'''


def render_schema(schema: Schema, sources: Iterable[str]) -> str:
    """Write ``schema`` as the source of a Python module, one field per line.

    Args:
        schema: ``(messages, enums, services)`` from :func:`build_schema`.
        sources: the .proto paths named in the module docstring.

    Returns:
        The module's text (deterministic for a given schema).
    """
    messages, enums, services = schema
    lines = [_HEADER.format(sources=", ".join(sources))]
    lines.append('MESSAGES: "dict[str, tuple[tuple[int, str, str, str, bool, str, str], ...]]" = {')
    for name, fields in messages.items():
        lines.append(f"    {name!r}: (")
        lines.extend(f"        {field!r}," for field in fields)
        lines.append("    ),")
    lines.append("}\n")
    lines.append('ENUMS: "dict[str, tuple[tuple[str, int], ...]]" = {')
    for name, values in enums.items():
        lines.append(f"    {name!r}: {values!r},")
    lines.append("}\n")
    lines.append('SERVICES: "dict[str, dict[str, tuple[str, str, bool, bool]]]" = {')
    for name, methods in services.items():
        lines.append(f"    {name!r}: {{")
        lines.extend(f"        {m!r}: {sig!r}," for m, sig in methods.items())
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "minislurm" / "wire" / "rpc"
    for path in generate(out):
        print(f"wrote {path.relative_to(out.parent.parent) if out.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
