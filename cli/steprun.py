"""Running one job step from srun: launch on every node, relay I/O, forward signals.

One thread polls every node agent's connection, srun's stdin and a
self-pipe woken by signals. Task output is written line by line per task
as it arrives (raw with ``-u``; with ``N: `` labels under ``-l``); srun's
stdin goes to task 0 (or every task). As Slurm 22.05's srun, Ctrl-C reports
the tasks' states (cli/stepstatus.py) and a second one within a second
aborts the step: SIGINT, then SIGKILL, and no more words about the tasks.
SIGTERM, SIGHUP and SIGQUIT abort it too (the tasks' ends are still told);
SIGCONT is only said. When a node says the step is being killed (scancel,
the job's end), srun says how long it waits; a task killed otherwise gets
"Force Terminated" at the end, as Slurm's srun says it.
The exit status is the highest task exit code, or 128 + the signal that
killed a task. When a node's slurmd goes away mid-step (the step runs on
under its stepd), srun attaches to the step again once the restarted slurmd
answers, for up to REATTACH_SECONDS, and gets what the tasks did meanwhile.

With ``--pty`` task 0 runs on a terminal of its own on its node: srun's
terminal is raw for the step's life (cli/terminal.py), so keystrokes (Ctrl-C
included) go to that terminal as bytes, its output comes back raw, and each
SIGWINCH sends srun's new window size there. srun's stdin reaching its end
sends nothing (a terminal has no end of file; Slurm's srun sends none).

Imports cli.common (for the TLS context), cli.terminal, minislurm.wire.agentclient
and the standard library.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # ``signal`` imports enum (~9 ms)
import os
import select
import sys
import time

from cli import common, stepstatus, terminal
from minislurm.errors import PrologFailed
from minislurm.wire.agentclient import AgentClient
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from minislurm.wire.agentclient import MessageStream
    from minislurm.wire.protowire import Message

STDOUT, STDERR, EXITED, ABORTED = 1, 2, 3, 5  # TaskEvent kinds srun acts on
OOM_SIGNAL = 125  # minislurm.states.OOM_SIGNAL: a task of a step the OOM killer hit (exit 1)
SIGNAL_WORDS = {
    1: "Hangup",
    2: "Interrupt",
    3: "Quit",
    4: "Illegal instruction",
    6: "Aborted",
    7: "Bus error",
    8: "Floating point exception",
    9: "Killed",
    11: "Segmentation fault",
    13: "Broken pipe",
    14: "Alarm clock",
    15: "Terminated",
    OOM_SIGNAL: "Out Of Memory",
}
ABORT_WINDOW = 1.0  # a second Ctrl-C within this many seconds kills the step
READ_CHUNK = 65536
REATTACH_SECONDS = 60.0  # how long srun tries to find its step again on a node it lost
REATTACH_RETRY = 0.5  # seconds between tries


class NodeLink:
    """srun's connection to one node of the step.

    ``lost`` is when the connection to the node's slurmd was lost (0 while
    connected): srun then tries to attach to the step again, which ran on.
    """

    __slots__ = ("address", "agent", "done", "lost", "name", "retry_at", "stream", "task_ids")

    def __init__(
        self, name: str, address: tuple[str, int], agent: AgentClient, task_ids: list[int]
    ) -> None:
        self.name = name
        self.address = address
        self.agent = agent
        self.task_ids = task_ids
        self.stream: MessageStream | None = None
        self.done = False
        self.lost = 0.0
        self.retry_at = 0.0


class StepRun:
    """The state of a running step as srun sees it."""

    def __init__(
        self,
        prog: str,
        reply: Message,
        request: dict[str, object],
        opts: dict[str, object],
        locate: Callable[[], dict[str, tuple[str, int]] | None] | None = None,
    ):
        self.prog = prog
        self.step = reply.step
        self.job_id = int(reply.step.job_id)
        self.step_id = int(reply.step.step_id)
        self.step_name = f"StepId={self.job_id}.{self.step_id}"  # as srun's messages name it
        self.request = request
        self.label = bool(opts.get("label"))
        self.unbuffered = bool(opts.get("unbuffered"))
        self.kill_on_bad_exit = bool(opts.get("kill_on_bad_exit"))
        self.stdin_to: str = str(opts.get("stdin_to", "task0"))
        self.raw = terminal.RawMode(0) if opts.get("pty") else None
        tls = common.tls_context()
        self.links = [
            NodeLink(
                n.node,
                (n.addr, n.port),
                AgentClient(n.addr, n.port, 30.0, tls=tls),
                list(n.task_ids),
            )
            for n in reply.step.nodes
        ]
        self.locate = locate  # where the nodes' agents listen now (one may have restarted)
        self.exits: dict[int, tuple[int, int]] = {}
        self.partial: dict[tuple[int, int], bytes] = {}
        self.last_interrupt = -ABORT_WINDOW
        self.killed = False
        self.aborted: frozenset[int] | None = None  # tasks ended before a second Ctrl-C
        self.never_ran: set[int] = set()
        self.quit_on_interrupt = bool(opts.get("quit_on_interrupt"))
        self.wait_after_first = opts.get("wait")  # --wait=N: seconds after the first task ends
        self.first_exit = 0.0
        self.said: set[int] = set()  # tasks whose end srun reported
        self.abort_said = False  # "Job step aborted: Waiting up to N seconds ..." (once)
        self.abort_sent = False  # srun's own SIGKILL to the step (once)

    # ---------------------------------------------------------------- launch

    def launch(self) -> None:
        """Start the tasks on every node (the calls return at once).

        The request, the whole step's layout included, is encoded once; each
        node's call adds its name.
        """
        if self.raw is not None:
            self.raw.enter()
        if not self.links:
            return
        request = self.links[0].agent.encode("LaunchTasks", self.request)
        for link in self.links:
            try:
                link.stream = link.agent.stream("LaunchTasks", request, node=link.name)
            except RpcError as err:
                self._node_failed(link, err)

    def _node_failed(self, link: NodeLink, err: RpcError) -> None:
        if err.details == PrologFailed.MESSAGE:  # as Slurm's srun says it
            where = f"{self.step_name} failed on node {link.name}"
            _error(self.prog, f"Task launch for {where}: {err.details}")
            self._give_up(link, f"Application launch failed: {err.details}")
            return
        self._give_up(link, f"{link.name}: {err.details or err.code}")

    def _give_up(self, link: NodeLink, message: str) -> None:
        """Be done with a node whose tasks srun can no longer follow: they count as exit 1."""
        _error(self.prog, message)
        link.done = True
        for task in link.task_ids:
            self.exits.setdefault(task, (1, 0))

    # ---------------------------------------------------------------- the loop

    def wait(self, wake: int) -> int:
        """Relay output and input until every node is done.

        Args:
            wake: the read end of the signal self-pipe.

        Returns:
            srun's exit status.
        """
        poller = select.poll()
        by_fd: dict[int, NodeLink] = {}
        for link in self.links:
            if not link.done:
                fd = link.agent.fileno()
                by_fd[fd] = link
                poller.register(fd, select.POLLIN)
        poller.register(wake, select.POLLIN)
        stdin = self._stdin_fd()
        if stdin is not None:
            poller.register(stdin, select.POLLIN)
        while any(not link.done for link in self.links):
            for link in self._reattach():
                fd = link.agent.fileno()
                by_fd[fd] = link
                poller.register(fd, select.POLLIN)
            # A stream may hold data already taken off its socket: poll() would not see it.
            events = [(fd, select.POLLIN) for fd, link in by_fd.items() if link.agent.pending()]
            if not events:
                lost = any(link.lost and not link.done for link in self.links)
                events = poller.poll(self._poll_ms(REATTACH_RETRY * 1000 if lost else 1000))
                self._check_wait()
            for fd, _ in events:
                if fd == wake:
                    self._on_signals(wake)
                elif fd == stdin:
                    if not self._forward_stdin(stdin):
                        poller.unregister(stdin)
                        stdin = None
                elif fd in by_fd:
                    link = by_fd[fd]
                    self._drain(link)
                    if link.done or link.stream is None:
                        del by_fd[fd]
                        poller.unregister(fd)
        self._flush_partials()
        if self.raw is not None:
            self.raw.restore()  # before srun's own last words
        return self._report()

    def _drain(self, link: NodeLink) -> None:
        assert link.stream is not None
        try:
            events = link.stream.read(block=False)
        except RpcError as err:
            if err.code != "UNAVAILABLE":
                self._node_failed(link, err)
                return
            link.stream = None  # slurmd went away: the step runs on; find it again
            link.lost = link.lost or time.monotonic()
            link.retry_at = time.monotonic() + REATTACH_RETRY
            return
        if events:
            link.lost = 0.0
        together: list[int] = []  # tasks whose ends came one after another, same status
        for event in events:
            if int(event.kind) == EXITED:
                task = self._on_exit(link, event)
                if together and self.exits[together[-1]] != self.exits[task]:
                    self._ended(link, together)
                    together = []
                together.append(task)
                continue
            if together:
                self._ended(link, together)
                together = []
            self._on_event(link, event)
        if together:
            self._ended(link, together)
        # Every task of the node has exited: srun is done with it (as Slurm's
        # srun, it does not wait for the node's clean-up).
        if link.stream.done or all(task in self.exits for task in link.task_ids):
            link.done = True

    def _reattach(self) -> list[NodeLink]:
        """Attach again to the step on the nodes whose slurmd was lost, when time is.

        Returns:
            The links attached again now (their connections are new).
        """
        now = time.monotonic()
        attached = []
        for link in self.links:
            if link.done or link.stream is not None or now < link.retry_at:
                continue
            if now - link.lost > REATTACH_SECONDS:
                reason = f"lost its slurmd for {REATTACH_SECONDS:.0f} seconds"
                self._node_failed(link, RpcError("UNAVAILABLE", reason))
                continue
            if not self._relocate(link):  # the controller ended the job: the node failed
                self._give_up(link, f"Node failure on {link.name}")
                continue
            try:
                link.stream = link.agent.stream(
                    "AttachStep",
                    node=link.name,
                    credential=self.request["credential"],
                    job_id=self.job_id,
                    step_id=self.step_id,
                )
            except RpcError:
                link.retry_at = now + REATTACH_RETRY
                continue
            attached.append(link)
        return attached

    def _relocate(self, link: NodeLink) -> bool:
        """Follow a node's slurmd to the address it registered after its restart.

        Returns:
            False when the controller cancelled the step meanwhile (its job
            ended, as when the node was declared DOWN): nothing is left to find.
        """
        if self.locate is None:
            return True
        try:
            addresses = self.locate()
        except RpcError:
            return True  # the controller may be restarting too: try the old address
        if addresses is None:
            return False
        address = addresses.get(link.name)
        if address is not None and address != link.address:
            link.agent.close()
            link.address = address
            link.agent = AgentClient(*address, 30.0, tls=common.tls_context())
        return True

    def _on_event(self, link: NodeLink, event: Message) -> None:
        kind = int(event.kind)
        if kind in (STDOUT, STDERR):
            self._write(kind, int(event.task_id), bytes(event.data))
        elif kind == ABORTED:  # scancel, or the job's end: the node is killing the step
            self._say_aborted()

    def _on_exit(self, link: NodeLink, event: Message) -> int:
        """Take a task's end (its output first); return the task."""
        task = int(event.task_id)
        self._flush_task(task)
        if event.error:
            _error(self.prog, f"{link.name}: task {task}: {event.error}")
            self.never_ran.add(task)
        self.exits[task] = (int(event.exit_code), int(event.signal))
        self.first_exit = self.first_exit or time.monotonic()
        return task

    def _ended(self, link: NodeLink, tasks: list[int]) -> None:
        """Tasks of a node that ended together, with one status: say it, act on it."""
        if self.raw is None:  # a terminal in raw mode hears it at the end
            self._say_exits(link, tasks)  # as it happens, as Slurm's srun says it
        code, sig = self.exits[tasks[0]]
        if (code or sig) and self.kill_on_bad_exit and not self.killed:
            # As Slurm's SIG_TERM_KILL: SIGTERM first, SIGKILL after KillWait.
            _say(self.prog, f"launch/slurm: _step_signal: Terminating {self.step_name}")
            self.signal_all(0, terminate=True)
            self.killed = True

    def _say_aborted(self) -> None:
        """That the step is being killed and how long srun waits for it, as Slurm's srun: once.

        Once said, the tasks' ends are no longer a surprise: no "Force Terminated".
        """
        everyone = [task for link in self.links for task in link.task_ids]
        if self.abort_said or all(task in self.exits for task in everyone):
            return
        self.abort_said = True
        wait = common.client_config().kill_wait + 2  # as Slurm's srun counts it
        _say(self.prog, f"Job step aborted: Waiting up to {wait} seconds for job step to finish.")

    def _abort(self) -> None:
        """End the step at once (SIGKILL, once), as Slurm's srun aborts it."""
        if not self.abort_sent:
            self.signal_all(signal.SIGKILL)
            self.killed = self.abort_sent = True
        self._say_aborted()

    def _say_exits(self, link: NodeLink, tasks: list[int]) -> None:
        """``srun: error: n1: task 3: Exited with exit code 2`` (or the signal), once per task.

        Tasks next to each other in ``tasks`` with one status share a line,
        ``tasks 0-1: Killed``, as Slurm's srun says the tasks of one exit
        message of a node (those its stepd reaped together).
        """
        # The end of a task killed by an abort is not reported.
        aborted = self.aborted
        told = [t for t in tasks if t not in self.said and (aborted is None or t in aborted)]
        self.said.update(told)
        groups: list[tuple[tuple[int, int], list[int]]] = []
        for task in told:
            status = self.exits.get(task, (0, 0))
            if groups and groups[-1][0] == status:
                groups[-1][1].append(task)
            else:
                groups.append((status, [task]))
        for (code, sig), ids in groups:
            if len(ids) == 1:
                who = f"{link.name}: task {ids[0]}"
            else:
                who = f"{link.name}: tasks {stepstatus.task_ranges(sorted(ids))}"
            if sig:
                _error(self.prog, f"{who}: {SIGNAL_WORDS.get(sig, f'Signal {sig}')}")
            elif code:
                _error(self.prog, f"{who}: Exited with exit code {code}")

    # ---------------------------------------------------------------- --wait

    def _poll_ms(self, longest: float) -> float:
        """How long a poll may block: no later than when --wait ends the step."""
        if self.wait_after_first is None or not self.first_exit or self.killed:
            return longest
        left = self.first_exit + int(str(self.wait_after_first)) - time.monotonic()
        return max(0.0, min(longest, left * 1000))

    def _check_wait(self) -> None:
        """``--wait=N``: N seconds after the first task ended, kill the others, as Slurm's srun."""
        wait = self.wait_after_first
        if wait is None or not int(str(wait)) or not self.first_exit or self.killed:
            return
        if time.monotonic() < self.first_exit + int(str(wait)):
            return
        everyone = [task for link in self.links for task in link.task_ids]
        if all(task in self.exits for task in everyone):
            return
        step = f"{self.job_id}.{self.step_id}"
        _say(self.prog, f"First task exited {wait}s ago")
        for line in stepstatus.status_lines(step, everyone, self.exits, self.never_ran):
            _say(self.prog, line)
        _say(self.prog, f"launch/slurm: _step_signal: Terminating StepId={step}")
        self._abort()

    # ---------------------------------------------------------------- output

    def _write(self, kind: int, task: int, data: bytes) -> None:
        """Write a task's output: whole lines per task (unless -u), labelled with -l."""
        out = sys.stdout.buffer if kind == STDOUT else sys.stderr.buffer
        if self.unbuffered and not self.label:
            out.write(data)
            out.flush()
            return
        buffered = self.partial.pop((kind, task), b"") + data
        *lines, rest = buffered.split(b"\n")
        prefix = f"{task}: ".encode() if self.label else b""
        for line in lines:
            out.write(prefix + line + b"\n")
        if rest:
            self.partial[(kind, task)] = rest
        out.flush()

    def _flush_task(self, task: int) -> None:
        for kind in (STDOUT, STDERR):
            rest = self.partial.pop((kind, task), b"")
            if rest:  # an unfinished last line: labelled ones get their newline
                out = sys.stdout.buffer if kind == STDOUT else sys.stderr.buffer
                prefix = f"{task}: ".encode() if self.label else b""
                out.write(prefix + rest + (b"\n" if self.label else b""))
                out.flush()

    def _flush_partials(self) -> None:
        for task in {task for _, task in self.partial}:
            self._flush_task(task)

    # ---------------------------------------------------------------- input

    def _stdin_fd(self) -> int | None:
        if self.stdin_to == "none":
            return None
        try:
            fd = sys.stdin.fileno()
            os.fstat(fd)
        except (OSError, ValueError):
            return None
        return fd

    def _forward_stdin(self, fd: int) -> bool:
        data = os.read(fd, READ_CHUNK)
        if data or self.raw is None:  # a terminal gets no end of file
            self._task_input(data=data, eof=not data)
        return bool(data)

    def _task_input(self, **fields: object) -> None:
        """TaskInput to the tasks reading srun's stdin (task 0's node, or every node)."""
        targets = self.links if self.stdin_to == "all" else [self._link_of(0)]
        for link in targets:
            if link is None or link.done:
                continue
            try:
                link.agent.call(
                    "TaskInput",
                    node=link.name,
                    job_id=self.job_id,
                    step_id=self.step_id,
                    task_id=0,
                    credential=self.request["credential"],
                    **fields,
                )
            except RpcError as err:
                _error(self.prog, f"{link.name}: cannot forward stdin: {err.details or err.code}")

    def _resize(self) -> None:
        """Send srun's terminal's new size to task 0's terminal (SIGWINCH under --pty)."""
        try:
            rows, cols = terminal.window_size(sys.stdout.fileno())
        except (OSError, ValueError):
            return
        self._task_input(window={"rows": rows, "cols": cols})

    def _link_of(self, task: int) -> NodeLink | None:
        return next((link for link in self.links if task in link.task_ids), None)

    # ---------------------------------------------------------------- signals

    def signal_all(self, signum: int, terminate: bool = False) -> None:
        """Send a signal to every task of the step.

        Args:
            signum: the signal.
            terminate: instead, kill the step as Slurm's SIG_TERM_KILL does: its
                CANCELLED line, SIGCONT and SIGTERM, SIGKILL after KillWait.
        """
        for link in self.links:
            if link.done:
                continue
            try:
                link.agent.call(
                    "SignalTasks",
                    node=link.name,
                    job_id=self.job_id,
                    step_id=self.step_id,
                    signal=signum,
                    credential=self.request["credential"],
                    terminate=terminate,
                )
            except RpcError:
                pass

    def _on_signals(self, wake: int) -> None:
        for signum in os.read(wake, 64):
            if signum == signal.SIGINT:
                self._on_interrupt()
            elif signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
                if signum == signal.SIGQUIT:
                    _say(self.prog, "Quit")
                _say(self.prog, "forcing job termination")  # the tasks' ends are still told
                self._abort()
            elif signum == signal.SIGWINCH:
                self._resize()
            elif signum == signal.SIGCONT:  # said, not forwarded, as by Slurm's srun
                _say(self.prog, "got SIGCONT")
                if self.raw is not None:
                    self.raw.enter()  # srun was stopped: its shell may have reset the terminal
            else:
                self.signal_all(signum)

    def _on_interrupt(self) -> None:
        """Ctrl-C: the tasks' states; a second one within ABORT_WINDOW aborts the step."""
        now = time.monotonic()
        step = f"{self.job_id}.{self.step_id}"
        if self.quit_on_interrupt or now - self.last_interrupt < ABORT_WINDOW:
            _say(self.prog, f"sending Ctrl-C to StepId={step}")
            self.signal_all(signal.SIGINT)
            if self.aborted is None:
                _say(self.prog, "forcing job termination")
                self.aborted = frozenset(self.exits)
                self._abort()
        elif self.aborted is None:
            _say(self.prog, "interrupt (one more within 1 sec to abort)")
            tasks = [task for link in self.links for task in link.task_ids]
            for line in stepstatus.status_lines(step, tasks, self.exits, self.never_ran):
                _say(self.prog, line)
        self.last_interrupt = now

    # ---------------------------------------------------------------- result

    def _report(self) -> int:
        status = 0
        for link in self.links:
            self._say_exits(link, list(link.task_ids))  # a node srun lost, a raw terminal's
            for task in link.task_ids:
                code, sig = self.exits.get(task, (0, 0))
                status = max(status, 1 if sig == OOM_SIGNAL else 128 + sig if sig else code)
        killed = any(sig in (signal.SIGKILL, signal.SIGTERM) for _, sig in self.exits.values())
        if killed and not self.abort_said:  # killed by someone srun was not told of
            _say(self.prog, f"Force Terminated {self.step_name}")
        return status

    def close(self) -> None:
        """Close the connections; give srun's terminal its settings back."""
        if self.raw is not None:
            self.raw.restore()
        for link in self.links:
            link.agent.close()


FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGCONT,
)


def install_signal_pipe(pty: bool = False) -> int:
    """Route the signals srun forwards to a self-pipe that the poll loop watches.

    Args:
        pty: also SIGWINCH, whose new size srun sends to the task's terminal.

    Returns:
        The pipe's read end.
    """
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end)
    for signum in (*FORWARDED, signal.SIGWINCH) if pty else FORWARDED:
        signal.signal(signum, lambda *_: None)
    return read_end


def _say(prog: str, text: str) -> None:
    sys.stderr.write(f"{prog}: {text}\n")
    sys.stderr.flush()


def _error(prog: str, text: str) -> None:
    _say(prog, f"error: {text}")
