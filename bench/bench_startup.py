"""Start-up of the commands on each Python found (3.11, 3.12, 3.13).

Run by hand (``make bench``, or ``python bench/bench_startup.py``); prints, for each
interpreter, the median (and minimum) of ``--runs`` fresh processes beside
the targets, and whether the start-up took the fast path:

1. ``import cli.sbatch``, timed inside the interpreter;
2. ``sbatch --version`` and ``squeue --version`` end to end (process start to
   exit), run as the installed console scripts run them, beside the bare
   interpreter's start (``python -c pass``) and real Slurm's commands when
   they are on PATH;
3. the fast path: where the commands' SHA-256 comes from (CPython's own
   ``_sha256``/``_sha2``, not OpenSSL's through ``hashlib``) and whether any
   slow module (``hashlib``, ``socket``, ``ssl``) was loaded.

The interpreters are this one and pyenv's newest 3.11, 3.12 and 3.13 (or
those given with ``--python``). Each runs in a venv made for the run, without
pip, with the checkout on its path: the same view of the code as an install
gives, and none of the ``.pth`` files an interpreter's own site-packages may
hold, which would load modules before the command starts. Bytecode is
compiled first, as ``make venv`` does.

Imports only the standard library (the commands run in the child processes).
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ("3.11", "3.12", "3.13")
TARGET_MS = {"import": 20.0, "version": 40.0}
# What pip writes as a console script (pyproject.toml's [project.scripts]).
SCRIPT = """#!{python}
import sys
from cli.{command} import main
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit(main())
"""
IMPORT_TIMER = (
    "import time; t = time.perf_counter(); import cli.sbatch; print(time.perf_counter() - t)"
)
FAST_PATH = (
    "import sys, cli.sbatch; from minislurm.security import cred; "
    "print(cred.sha256.__module__, *sorted({'hashlib', 'socket', 'ssl'} & set(sys.modules)))"
)


def release(version: str) -> list[int]:
    """``"3.12.10"`` as ``[3, 12, 10]``, to sort releases in order."""
    return [int(part) for part in version.split(".") if part.isdigit()]


def find_interpreters(given: list[str]) -> list[str]:
    """This Python and pyenv's newest of each supported version, or those given."""
    if given:
        return given
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = {f"{sys.version_info.major}.{sys.version_info.minor}": sys.executable}
    for version in VERSIONS:
        paths = glob.glob(f"{root}/versions/{version}.*/bin/python{version}")
        if paths and version not in found:
            found[version] = max(paths, key=lambda path: release(Path(path).parts[-3]))
    return [found[version] for version in sorted(found, key=release)]


def make_venv(python: str, home: Path) -> Path:
    """A venv of ``python`` without pip, seeing the checkout; returns its bin/."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(home)], check=True)
    bin_dir = home / "bin"
    purelib = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "minislurm-checkout.pth").write_text(f"{ROOT}\n")
    for command in ("sbatch", "squeue"):
        script = bin_dir / command
        script.write_text(SCRIPT.format(python=bin_dir / "python", command=command))
        script.chmod(0o755)
    subprocess.run(
        [str(bin_dir / "python"), "-m", "compileall", "-q", "minislurm", "cli"],
        cwd=ROOT,
        check=True,
    )
    return bin_dir


def wall_ms(argv: list[str], env: dict[str, str], runs: int) -> list[float]:
    """Wall-clock milliseconds of each run of ``argv``, after one to warm the caches."""
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return times


def import_ms(python: str, env: dict[str, str], runs: int) -> list[float]:
    """Milliseconds of ``import cli.sbatch`` in each of ``runs`` fresh interpreters."""
    argv = [python, "-c", IMPORT_TIMER]
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return [
        float(subprocess.run(argv, env=env, check=True, capture_output=True).stdout) * 1000
        for _ in range(runs)
    ]


def fast_path(python: str, env: dict[str, str]) -> str:
    """Where SHA-256 comes from and which slow modules ``import cli.sbatch`` loaded."""
    out = subprocess.run([python, "-c", FAST_PATH], env=env, check=True, capture_output=True)
    source, *slow = out.stdout.decode().split()
    if slow or source not in ("_sha256", "_sha2"):
        return f"SLOW: sha256 from {source}, loaded {', '.join(slow) or 'no slow module'}"
    return f"fast: sha256 from {source}, no hashlib, socket or ssl"


def real_slurm(command: str) -> str | None:
    """Real Slurm's ``command`` on PATH (a compiled program, not one of ours)."""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(directory, command)
        try:
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return path
        except OSError:
            continue
    return None


def report(name: str, times: list[float], key: str | None = None) -> None:
    """One line: median and minimum, beside the target when there is one."""
    median = statistics.median(times)
    line = f"  {name:<34} median {median:7.1f} ms (min {min(times):6.1f})"
    if key is not None:
        target = TARGET_MS[key]
        line += f"  target {target:g} ({'met' if median <= target else 'MISSED'})"
    print(line)


def bench(python: str, runs: int, work: Path) -> str:
    """Every measurement on one interpreter; returns its version."""
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version.split()[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    bin_dir = make_venv(python, work / f"venv-{version}")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up as users get it: bytecode cached
    venv_python = str(bin_dir / "python")
    print(f"Python {version} ({python})")
    print(f"  {'start-up path':<34} {fast_path(venv_python, env)}")
    report("import cli.sbatch", import_ms(venv_python, env, runs), "import")
    report("python -c pass", wall_ms([venv_python, "-c", "pass"], env, runs))
    for command in ("sbatch", "squeue"):
        times = wall_ms([str(bin_dir / command), "--version"], env, runs)
        report(f"{command} --version", times, "version")
    return version


def main() -> int:
    """Measure the commands' start-up on each interpreter found."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30, help="processes per measurement")
    parser.add_argument("--python", action="append", default=[], help="an interpreter (repeatable)")
    args = parser.parse_args()
    measured = set()
    with tempfile.TemporaryDirectory(prefix="minislurm-bench-startup-") as home:
        for python in find_interpreters(args.python):
            measured.add(bench(python, args.runs, Path(home)).rpartition(".")[0])
    real = {command: real_slurm(command) for command in ("sbatch", "squeue")}
    if any(real.values()):
        print("Real Slurm (on PATH)")
    for command, path in real.items():
        if path is not None:
            report(f"{command} --version", wall_ms([path, "--version"], {}, args.runs))
    missing = [v for v in VERSIONS if v not in measured]
    if missing and not args.python:
        print(f"NOT MEASURED, no interpreter found: Python {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
