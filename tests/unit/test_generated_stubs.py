"""The committed files in minislurm/wire/rpc/ are exactly what scripts/gen_proto.py makes."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
RPC_DIR = ROOT / "minislurm" / "wire" / "rpc"
HOW_TO_FIX = "run `make proto` (scripts/gen_proto.py) and commit minislurm/wire/rpc/"


def load_gen_proto() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def committed_files() -> set[str]:
    """Everything in minislurm/wire/rpc/ except the package marker and caches."""
    return {p.name for p in RPC_DIR.iterdir() if p.is_file() and p.name != "__init__.py"}


def test_generated_files_match_the_committed_ones(tmp_path: Path) -> None:
    written = load_gen_proto().generate(tmp_path)
    generated = {p.name for p in written}
    assert {p.name for p in tmp_path.iterdir()} == generated
    missing = generated - committed_files()
    extra = committed_files() - generated
    assert not missing, f"generated files not committed: {sorted(missing)}; {HOW_TO_FIX}"
    assert not extra, (
        f"stale files in minislurm/wire/rpc/ no longer generated: {sorted(extra)}; "
        f"delete them and {HOW_TO_FIX}"
    )
    stale = [
        name
        for name in sorted(generated)
        if (tmp_path / name).read_bytes() != (RPC_DIR / name).read_bytes()
    ]
    assert not stale, (
        f"minislurm/wire/rpc/ is out of date with proto/ ({', '.join(stale)}): {HOW_TO_FIX}"
    )


def test_generation_writes_the_wire_schema_for_protowire(tmp_path: Path) -> None:
    names = {p.name for p in load_gen_proto().generate(tmp_path)}
    assert {
        "minislurm_pb2.py",
        "minislurm_pb2.pyi",
        "minislurm_pb2_grpc.py",
        "minislurm_schema.py",
    } <= names


def test_generated_schema_module_imports_nothing() -> None:
    tree = ast.parse((RPC_DIR / "minislurm_schema.py").read_text())
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not imports
