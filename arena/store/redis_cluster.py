"""A private, real Redis Cluster on loopback (3 masters by default), for tests and ``make chaos``: the same
``redis-server`` binary as ``PrivateRedis`` (``find_redis_server``), each node with ``cluster-enabled yes`` and
appendonly persistence in its own folder, the 16384 hash slots split evenly between the masters with
``CLUSTER ADDSLOTS`` and the nodes joined with ``CLUSTER MEET`` (no ``redis-cli`` needed).

Its URL uses the scheme ``redis+cluster://HOST:PORT`` (any node), the form ``ARENA_REDIS_URL`` takes for a cluster
(``arena.store.Store.from_url`` connects with redis-py's ``RedisCluster`` then).

Like ``PrivateRedis``, every node asks for the password of ``data_dir`` (``redis_password``: ``redis.password``,
mode 0600), given in each node's ``redis.conf`` (mode 0600: ``requirepass``, and ``masterauth`` for replicas),
never on a command line; the URL carries it (``redis+cluster://:PASSWORD@127.0.0.1:PORT``); the folders are 0700
and the nodes run with umask 077.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import redis

from arena.store.redis_files import CONF_FILE, RedisStartError, conf_value, private_dir, redis_password, write_conf
from arena.store.redis_server import CHILD_UMASK, LOG_FILE, find_redis_server

CLUSTER_SCHEME = "redis+cluster"
SLOTS = 16384
READY_TIMEOUT_S = 30.0


def _free_port() -> int:
    # A cluster node also listens on port + 10000 (the bus): pick ports whose bus port is free too.
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


class PrivateRedisCluster:
    """``masters`` redis-server processes forming one cluster under ``data_dir`` (one folder per node).

    ``start()`` returns the cluster URL (``redis+cluster://127.0.0.1:PORT``); ``stop()`` stops every node;
    ``restart_node(i)`` SIGKILLs node ``i`` and starts it again on the same port and folder (appendonly: nothing
    acknowledged is lost). Raises ``RedisStartError`` when a node does not start or the cluster does not become
    ready within ``READY_TIMEOUT_S``.
    """

    def __init__(self, data_dir: Path, masters: int = 3) -> None:
        self.data_dir = Path(data_dir)
        self.masters = masters
        self.ports: list[int] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        self.password = ""

    @property
    def url(self) -> str:
        return f"{CLUSTER_SCHEME}://:{self.password}@127.0.0.1:{self.ports[0]}"

    def _client(self, port: int, socket_timeout: float | None = None) -> redis.Redis:
        """A client of the node on ``port`` (with the password), answers decoded."""
        return redis.Redis(port=port, password=self.password, socket_timeout=socket_timeout, decode_responses=True)

    def _start_node(self, i: int) -> subprocess.Popen[bytes]:
        folder = private_dir(self.data_dir / f"node-{i}")
        port = self.ports[i]
        conf = folder / CONF_FILE
        write_conf(conf, [
            ("port", str(port)), ("bind", "127.0.0.1"), ("cluster-enabled", "yes"),
            ("cluster-config-file", "nodes.conf"), ("cluster-node-timeout", "2000"), ("appendonly", "yes"),
            ("dir", conf_value(str(folder.resolve()))), ("save", '""'), ("protected-mode", "no"),
            ("requirepass", conf_value(self.password)), ("masterauth", conf_value(self.password)),
        ])
        log = os.fdopen(os.open(folder / LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        process = subprocess.Popen([find_redis_server(), str(conf.resolve())], stdout=log, stderr=log,
                                   start_new_session=True, umask=CHILD_UMASK)
        log.close()  # the child keeps its own copy
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            try:
                with self._client(port, socket_timeout=1) as client:
                    client.ping()
                return process
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RedisStartError(
                        f"cluster node {i} on port {port} did not start; see {folder}/redis.log") from None
                time.sleep(0.05)

    def start(self) -> str:
        private_dir(self.data_dir)
        self.password = redis_password(self.data_dir)
        self.ports = [_free_port() for _ in range(self.masters)]
        self.processes = [self._start_node(i) for i in range(self.masters)]
        per = SLOTS // self.masters
        for i, port in enumerate(self.ports):
            first = i * per
            last = SLOTS - 1 if i == self.masters - 1 else first + per - 1
            with self._client(port) as client:  # ADDSLOTS, not ADDSLOTSRANGE: Redis 6.2 has only the former
                for chunk in range(first, last + 1, 2048):
                    client.execute_command("CLUSTER", "ADDSLOTS", *range(chunk, min(chunk + 2048, last + 1)))
        with self._client(self.ports[0]) as client:
            for port in self.ports[1:]:
                client.execute_command("CLUSTER", "MEET", "127.0.0.1", port)
        self._wait_ready()
        return self.url

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            states = []
            for port in self.ports:
                try:
                    with self._client(port, socket_timeout=1) as client:
                        info = client.execute_command("CLUSTER", "INFO")
                    text = info if isinstance(info, str) else str(info)
                    states.append("cluster_state:ok" in text and f"cluster_known_nodes:{self.masters}" in text)
                except redis.RedisError:
                    states.append(False)
            if all(states):
                return
            if time.monotonic() > deadline:
                raise RedisStartError(f"the cluster on ports {self.ports} did not become ready")
            time.sleep(0.1)

    def restart_node(self, i: int) -> None:
        """SIGKILL node ``i`` and start it again (same port, folder and cluster config); wait until the cluster
        is ready again."""
        process = self.processes[i]
        process.kill()
        process.wait(10)
        self.processes[i] = self._start_node(i)
        self._wait_ready()

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)

    def __enter__(self) -> PrivateRedisCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
