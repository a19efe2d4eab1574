"""A real Redis Cluster on loopback for the Python tests: 3 masters + 3 replicas, one
redis-server process per node in a directory of its own (as tests/cluster_harness.rs does
for the Rust tests). `RedisCluster.start(root)` returns once every node reports
cluster_state:ok and sees the 6 nodes; `stop()` kills every node and waits for it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable

NODES = 6
ALL_SLOTS = 16384
POLL = 0.1
# How long a node may take to answer PING, and the cluster to form, before giving up.
NODE_START, FORM = 10.0, 30.0
PORT_TRIES = 20
MISSING = ("redis-server or redis-cli not found: install Debian's redis-server to run the "
           "Redis Cluster tests (CI does)")


def available() -> bool:
    return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


def in_ci() -> bool:
    return os.environ.get("CI", "") not in ("", "0", "false")


def free_port() -> int:
    """A loopback port free now, as is its cluster bus port (port + 10000)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if 1024 < port <= 65535 - 10000 and port != 6379:
            with socket.socket() as bus:
                try:
                    bus.bind(("127.0.0.1", port + 10000))
                    return port
                except OSError:
                    continue


def cli(port: int, *args: str) -> str:
    """`redis-cli -p PORT ARGS...`: its stdout, stripped ("" if it fails)."""
    proc = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    return proc.stdout.strip()


def _config(port: int, d: Path) -> str:
    return "\n".join([
        f"port {port}", "bind 127.0.0.1", "cluster-enabled yes", "cluster-config-file nodes.conf",
        "cluster-node-timeout 2000", "appendonly yes", "appendfsync everysec",
        "repl-diskless-sync-delay 0", 'save ""', "daemonize no", "protected-mode no",
        f'dir "{d}"', f'logfile "{d}/log"',
    ]) + "\n"


class RedisCluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.nodes: list = []  # (port, Popen)

    @classmethod
    def start(cls, root: Path) -> "RedisCluster":
        cluster = cls(root)
        try:
            while len(cluster.nodes) < NODES:
                cluster._spawn_node()
            addrs = [f"127.0.0.1:{port}" for port, _ in cluster.nodes]
            proc = subprocess.run(["redis-cli", "--cluster", "create", *addrs, "--cluster-replicas", "1",
                                   "--cluster-yes"], capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=120)
            if proc.returncode != 0:
                cluster._fail(f"redis-cli --cluster create: {proc.stdout}{proc.stderr}")
            cluster._wait("the cluster to form", FORM, cluster._formed)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def url(self, name: str) -> str:
        """redis://127.0.0.1:P1,...,127.0.0.1:P6/NAME"""
        return "redis://" + ",".join(f"127.0.0.1:{p}" for p, _ in self.nodes) + f"/{name}"

    def stop(self) -> None:
        for _, proc in self.nodes:
            proc.kill()
            proc.wait()

    def _spawn_node(self) -> None:
        for _ in range(PORT_TRIES):
            port = free_port()
            d = self.root / str(port)
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            (d / "redis.conf").write_text(_config(port, d))
            with open(d / "stdout", "wb") as out:
                proc = subprocess.Popen(["redis-server", str(d / "redis.conf")], cwd=d,
                                        stdin=subprocess.DEVNULL, stdout=out, stderr=out)
            if self._up(port, proc):
                self.nodes.append((port, proc))
                return
            proc.kill()
            proc.wait()
        self._fail(f"a redis-server to start ({PORT_TRIES} ports tried)")

    @staticmethod
    def _up(port: int, proc: subprocess.Popen) -> bool:
        """Whether this process (not another on the same port) answers PING."""
        deadline = time.monotonic() + NODE_START
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            if cli(port, "ping") == "PONG":
                return f"process_id:{proc.pid}" in cli(port, "info", "server").split()
            time.sleep(POLL)
        return False

    def _formed(self) -> bool:
        """Every node is ok, synced, and sees 6 healthy nodes: 3 replicas, all slots served."""
        for port, _ in self.nodes:
            if "cluster_state:ok" not in cli(port, "cluster", "info").split():
                return False
            if "master_link_status:down" in cli(port, "info", "replication"):
                return False
            view = [line.split() for line in cli(port, "cluster", "nodes").splitlines()]
            flags = [f[2] for f in view if len(f) > 2]
            unhealthy = any(bad in f for f in flags for bad in ("fail", "handshake", "noaddr"))
            replicas = sum("slave" in f for f in flags)
            slots = sum(_slots(s) for f in view if "master" in f[2] for s in f[8:])
            if len(view) != NODES or unhealthy or replicas != NODES // 2 or slots != ALL_SLOTS:
                return False
        return True

    def _wait(self, what: str, seconds: float, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            if time.monotonic() > deadline:
                self._fail(f"{what} (waited {seconds} s)")
            time.sleep(POLL)

    def _fail(self, what: str) -> None:
        tails = []
        for port, _ in self.nodes:
            log = self.root / str(port) / "log"
            lines = log.read_text(errors="replace").splitlines()[-20:] if log.exists() else []
            tails.append(f"--- node {port} ---\n" + "\n".join(lines))
        raise RuntimeError(f"Redis Cluster harness: gave up waiting for {what}\n" + "\n".join(tails))


def _slots(field: str) -> int:
    """Slots in one slot field of `cluster nodes`: "5461", "0-5460" or a migration marker."""
    if field.startswith("["):
        return 0
    a, _, b = field.partition("-")
    if not b:
        return 1 if a.isdigit() else 0
    return int(b) - int(a) + 1 if a.isdigit() and b.isdigit() else 0
