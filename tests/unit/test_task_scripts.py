"""TaskProlog output as Slurm's slurmstepd reads it; TaskProlog and TaskEpilog runs."""

from __future__ import annotations

from pathlib import Path

from nodeagent.stepd.taskscripts import apply_output, task_epilog, task_prolog


def test_export_unset_and_print_lines_change_the_task_and_others_are_ignored() -> None:
    env, printed = apply_output(
        {"HOME": "/h", "KEEP": "1"},
        "export FOO=bar=baz\nunset HOME\nprint hello world\nprint\ngarbage\nexport =x\n",
    )
    assert env == {"KEEP": "1", "FOO": "bar=baz"}
    assert printed == b"hello world\n\n"


def program(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_task_prolog_sees_the_task_and_its_failure_keeps_the_task_from_starting(
    tmp_path: Path,
) -> None:
    good = program(
        tmp_path / "good", 'echo "export SEEN=$RANK.$SLURM_SCRIPT_CONTEXT"\necho x >&2\n'
    )
    result = task_prolog(good, {"RANK": "3", "PATH": "/bin:/usr/bin"}, str(tmp_path))
    assert result.env["SEEN"] == "3.prolog_task" and result.error == ""
    bad = program(tmp_path / "bad", "echo 'export SEEN=1'\nexit 2\n")
    failed = task_prolog(bad, {"PATH": "/bin"}, str(tmp_path))
    assert failed.error == "TaskProlog failed status=2"
    assert "SEEN" not in failed.env
    assert task_prolog(str(tmp_path / "none"), {}, "/").error


def test_a_task_epilog_runs_with_the_tasks_environment(tmp_path: Path) -> None:
    out = tmp_path / "out"
    epilog = program(tmp_path / "epilog", f'echo "$RANK $SLURM_SCRIPT_CONTEXT" > {out}\nexit 1\n')
    task_epilog(epilog, {"RANK": "5", "PATH": "/bin:/usr/bin"}, "/nonexistent")
    assert out.read_text() == "5 epilog_task\n"
