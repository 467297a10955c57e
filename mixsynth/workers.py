"""Worker processes that end with the run that started them.

Chains and BART fits run in spawned processes, which outlive a parent killed by a signal
(known-traps.md: both chain workers of a 48,842-row fit kept computing with parent 1).
Two guards close that:

* ``process_pool`` is a ProcessPoolExecutor whose workers are terminated, not waited for,
  when the block is left by an exception: a Ctrl-C, a ``Stopped`` from ``stop_on_signals``,
  Dagster's interruption of a terminated run, or any error;
* every worker watches its parent and exits within ``WATCH_SECONDS`` once the parent is gone
  (a SIGKILL, which no handler sees).

``map_in_processes`` runs independent jobs (the copula's chains, the BART fits) that way.

``stop_on_signals`` turns SIGTERM (a scheduler's stop, a container's, a timeout) into the
exception ``Stopped`` in the main thread, so the blocks above unwind as for Ctrl-C.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing import get_context

WATCH_SECONDS = 0.5   # how often a worker checks that its parent is still there
TERMINATE_SECONDS = 3.0  # a stopped pool's workers get this long to end on SIGTERM before SIGKILL


def cores() -> int:
    """The CPUs this process may run on: its affinity mask (a container's or taskset's
    limit), not every CPU of the host."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # macOS, Windows
        return os.cpu_count() or 1


class Stopped(BaseException):
    """The run was asked to stop (SIGTERM); a BaseException, like KeyboardInterrupt, so no
    ``except Exception`` swallows it on its way out."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def stop_on_signals():
    """While inside, SIGTERM raises ``Stopped`` in the main thread and SIGINT raises
    KeyboardInterrupt, even where the process was started with SIGINT ignored (a shell's
    background job, ``nohup``: Python then installs no handler, and a ``kill -INT`` did
    nothing); the previous handlers are restored on the way out."""
    def stop(signum, frame):
        raise Stopped(signum)
    previous = signal.signal(signal.SIGTERM, stop)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


@contextmanager
def process_pool(workers: int, initializer=None, initargs=()):
    """A spawn-context ProcessPoolExecutor of ``workers`` processes, each watching its parent;
    leaving the block by an exception terminates every worker at once (nothing keeps
    computing) before the exception goes on."""
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_start_worker,
                               initargs=(os.getpid(), initializer, initargs))
    try:
        yield pool
    except BaseException:
        _terminate(pool)
        raise
    pool.shutdown(wait=True)


def map_in_processes(fn, jobs: list[tuple], workers: int, initializer=None, initargs=(), on_wait=None) -> list:
    """``[fn(*job) for job in jobs]`` computed in ``workers`` processes (``process_pool``);
    ``on_wait()`` is called about every half second while they run."""
    with process_pool(workers, initializer, initargs) as pool:
        futures = [pool.submit(fn, *job) for job in jobs]
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.5)
            if on_wait is not None:
                on_wait()
        return [f.result() for f in futures]


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's processes and reap them; queued work is dropped. A worker still alive
    TERMINATE_SECONDS after the SIGTERM (all of them together, not each) gets SIGKILL."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + TERMINATE_SECONDS
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(timeout=1)
    pool.shutdown(wait=False, cancel_futures=True)


def _start_worker(parent: int, initializer, initargs) -> None:
    """In each worker: ignore Ctrl-C (the parent decides and terminates), start the watch on
    the parent, then the pool's own initializer."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


def _watch_parent(parent: int) -> None:
    """Exit this worker once its parent process is gone (it is then re-parented)."""
    stop = threading.Event()
    while not stop.wait(WATCH_SECONDS):
        if os.getppid() != parent:
            os._exit(1)
