"""Real servers for the deployment tests, on loopback, each in its own temporary folder.

Nothing is installed here: PostgreSQL comes from Debian's ``postgresql`` package
(``/usr/lib/postgresql/<version>/bin``) and redis from ``redis-server``; ``.ci/run`` installs
both. Every process started here is stopped by its process id (or ``pg_ctl stop``, which
signals the postmaster recorded in its data folder).
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PG_USER = "dagster"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(process: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 20) -> None:
    """End the process group a ``start_new_session=True`` process leads: ``sig``, then SIGKILL,
    to the leader and to every process left in its group (a code server the daemon started
    outlives a daemon that has already exited)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout)
        except ProcessLookupError:
            process.wait(timeout=timeout)
    end = time.monotonic() + timeout
    while group_alive(process.pid) and time.monotonic() < end:
        time.sleep(0.2)
    if group_alive(process.pid):
        os.killpg(process.pid, signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    """Whether any process is left in process group ``pgid``."""
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def postgres_bin() -> Path:
    """The newest Debian PostgreSQL binaries folder holding ``initdb`` and ``pg_ctl``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if not found:
        raise RuntimeError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); "
                           "run `apt-get install -y postgresql` (.ci/run does)")
    return Path(found[-1]).parent


@dataclass
class PostgresServer:
    """A throwaway PostgreSQL server: own data folder, own port, trust auth on loopback."""

    folder: Path
    port: int
    bin: Path
    as_postgres: list[str]

    @classmethod
    def start(cls) -> "PostgresServer":
        binaries = postgres_bin()
        folder = Path(tempfile.mkdtemp(prefix="mixsynth-pg-"))
        # PostgreSQL refuses to run as root: as root, run it as Debian's `postgres` user
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if as_postgres:
            shutil.chown(folder, "postgres", "postgres")
        data = folder / "data"
        server = cls(folder, free_port(), binaries, as_postgres)
        server._run("initdb", "-D", str(data), "-A", "trust", "-U", PG_USER, "-E", "UTF8", "--no-sync")
        options = (f"-p {server.port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        try:
            server._run("pg_ctl", "-D", str(data), "-o", options, "-l", str(folder / "server.log"),
                        "-w", "-t", "60", "start")
        except BaseException:
            server.stop()
            raise
        return server

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([*self.as_postgres, str(self.bin / tool), *args], capture_output=True,
                              text=True, timeout=120, cwd=self.folder)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()[-800:]}")

    def connect(self, db: str = "postgres"):
        import psycopg
        return psycopg.connect(host="127.0.0.1", port=self.port, user=PG_USER, dbname=db, autocommit=True)

    def create_database(self, name: str) -> str:
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def env(self, db: str) -> dict[str, str]:
        """The ``DAGSTER_POSTGRES_*`` variables ``docker/dagster.yaml`` reads, for database ``db``."""
        return {"DAGSTER_POSTGRES_HOST": "127.0.0.1", "DAGSTER_POSTGRES_PORT": str(self.port),
                "DAGSTER_POSTGRES_USER": PG_USER, "DAGSTER_POSTGRES_PASSWORD": "unused-trust-auth",
                "DAGSTER_POSTGRES_DB": db}

    def stop(self) -> None:
        data = self.folder / "data"
        try:
            if (data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class RedisServer:
    """A redis-server on loopback without persistence: a celery broker in one process."""

    process: subprocess.Popen
    port: int
    folder: Path

    @classmethod
    def start(cls) -> "RedisServer":
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            raise RuntimeError("redis-server is not installed; run `apt-get install -y redis-server` "
                               "(.ci/run does)")
        folder = Path(tempfile.mkdtemp(prefix="mixsynth-redis-"))
        port = free_port()
        process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                    "--appendonly", "no", "--daemonize", "no", "--dir", str(folder)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        server = cls(process, port, folder)
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return server
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError("redis-server did not answer on loopback")
            time.sleep(0.1)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def stop(self) -> None:
        try:
            stop_group(self.process)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
