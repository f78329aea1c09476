"""Processes that are no children of this one, and how a process ended, for the private ``redis-server`` of
``arena.store.redis_server``: ``TakenOver`` watches and signals a process taken over from another (an ``arena serve``
killed with SIGKILL leaves its redis-server running; the next one manages it), ``exit_text`` says how a child
ended. Linux first (pidfds), any POSIX system by polling the pid."""

from __future__ import annotations

import os
import select
import signal
import time
from pathlib import Path


def exit_text(returncode: int | None) -> str:
    """How a process ended, from its ``Popen.returncode``: "killed by SIGKILL", "exit code 1"."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def pid_runs(pid: int, started_by: float | None = None) -> bool:
    """Whether process ``pid`` exists and is no zombie (signal 0, then its state in /proc when there is one); with
    ``started_by`` (seconds since the epoch), also whether it started by then: a process that started later only
    reuses the number of the one meant (where /proc says when it started; elsewhere it counts as that one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return True
    if fields[0] == "Z":
        return False
    if started_by is None:
        return True
    try:  # field 22 of stat (index 19 after the name): clock ticks after boot; btime in /proc/stat: boot, epoch s
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        started = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, IndexError, ValueError):
        return True
    return started <= started_by + 1.0  # btime is whole seconds


def folder_server(pid_file: Path, data_dir: Path) -> int | None:
    """The redis-server of ``data_dir``, running whether or not it answers: the process ``pid_file`` (its
    ``redis.pid``) records, while it runs, started no later than the file was written, is a redis-server and works in
    ``data_dir`` (redis-server changes into its data folder); else, the file gone, any redis-server of this user
    working there (/proc). Without /proc, the recorded process while it runs. None when there is none."""
    try:
        pid = int(pid_file.read_text().strip())
        written: float | None = pid_file.stat().st_mtime
    except (OSError, ValueError):
        pid, written = 0, None
    if not Path("/proc/self").exists():  # no /proc here: the recorded process is trusted
        return pid if pid > 0 and pid != os.getpid() and pid_runs(pid, started_by=written) else None
    if pid > 0 and pid_runs(pid, started_by=written) and _redis_in(pid, data_dir):
        return pid
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != pid and _redis_in(int(entry.name), data_dir):
            return int(entry.name)
    return None


def _redis_in(pid: int, data_dir: Path) -> bool:
    """Whether process ``pid`` is a redis-server (its command name) working in ``data_dir`` (read from /proc; a
    process of another user, whose folder cannot be read, is not)."""
    try:
        if "redis" not in Path(f"/proc/{pid}/comm").read_text():
            return False
        return Path(os.readlink(f"/proc/{pid}/cwd")) == Path(data_dir).resolve()
    except OSError:
        return False


class TakenOver:
    """The process of a private redis-server taken over (``PrivateRedis.adopt``). It is no child of this process: it
    cannot be waited on, and how it ends is unknown. Its end is seen through a pidfd (Linux: readable once the
    process has exited, a zombie included, and never fooled by a reused pid), else through ``_pid_runs``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fd: int | None = None
        try:
            self._fd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # not Linux, an old kernel, or already gone
            pass

    def alive(self, timeout: float = 0.0) -> bool:
        """Whether the process still runs, after waiting up to ``timeout`` seconds for it to end."""
        if self._fd is not None:
            poller = select.poll()  # not select.select: a busy serve has descriptors beyond FD_SETSIZE
            poller.register(self._fd, select.POLLIN)
            return not poller.poll(timeout * 1000)
        deadline = time.monotonic() + timeout
        while pid_runs(self.pid):
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.05)
        return False

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the process (nothing when it is gone)."""
        try:
            if self._fd is not None:
                signal.pidfd_send_signal(self._fd, sig)
            elif pid_runs(self.pid):
                os.kill(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
