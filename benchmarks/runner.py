"""What every benchmark script shares: its command-line options, timing a case (in this
process, or as a subprocess) with the peak memory of the process tree and the load other
processes put on the machine meanwhile, the machine's description, and writing
``results/NAME.json`` with its Markdown page ``results/NAME.md``.

The scripts are run as ``python benchmarks/NAME.py`` and import this module as ``runner``
(their folder is on ``sys.path``); no benchmark imports another.
"""
import argparse
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
MIXSYNTH = Path(sys.executable).with_name("mixsynth")   # the command line of this interpreter's environment
RUN_PEER = HERE / "peers" / "run_peer.py"               # runs one peer synthesizer inside its environment


def peer_python(env: str = ".venv-peers") -> Path:
    """The interpreter of a peer environment at the repository's root."""
    return REPO / env / "bin" / "python"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- the process tree, its memory and the machine's other load -----------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds used so far) for every process, from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name may hold spaces; the fields after its closing parenthesis are fixed
        f = stat[stat.rfind(")") + 2:].split()
        table[int(entry)] = (int(f[1]), (int(f[11]) + int(f[12])) / CLK_TCK)
    return table


def _descendants(root: int, table: dict) -> set[int]:
    tree, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, (pp, _) in table.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier.extend(kids)
    return tree


def tree_rss_kib(root: int) -> int:
    """Summed resident memory (VmRSS, KiB) of ``root`` and its live descendants."""
    total = 0
    for pid in _descendants(root, _proc_table()):
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def cpu_snapshot() -> dict:
    """Wall clock, CPU seconds the whole machine was busy, and CPU seconds this benchmark
    (this process, its waited-for children and its live descendants) used so far."""
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    busy = (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / CLK_TCK
    t = os.times()
    me = os.getpid()
    table = _proc_table()
    live = sum(table[p][1] for p in _descendants(me, table) if p != me)
    return {"wall": time.monotonic(), "busy": busy,
            "ours": t.user + t.system + t.children_user + t.children_system + live}


def other_load(a: dict, b: dict) -> dict:
    """Cores used by other processes on the machine between snapshots a and b (a process of
    ours that ended between them without being waited for counts as other: an upper bound)."""
    wall = b["wall"] - a["wall"]
    ours = b["ours"] - a["ours"]
    others = max(0.0, (b["busy"] - a["busy"]) - ours)
    return {"seconds": wall, "our_cores": ours / wall if wall else 0.0,
            "other_cores": others / wall if wall else 0.0}


def wait_until_quiet(max_wait: float, threshold: float = 0.25, window: float = 5.0) -> dict:
    """Wait (up to ``max_wait`` s) until other processes use under ``threshold`` cores over
    ``window`` seconds; returns how long it waited and the last load seen."""
    t0 = time.monotonic()
    while True:
        a = cpu_snapshot()
        time.sleep(window)
        load = other_load(a, cpu_snapshot())["other_cores"]
        waited = time.monotonic() - t0
        if load < threshold or waited >= max_wait:
            if waited > window + 1:
                log(f"   waited {waited:.0f} s for other work on the machine (now {load:.2f} cores)")
            return {"waited_seconds": waited, "other_cores_at_start": load}


class TreeMemory:
    """Samples the summed RSS of this process and its descendants in a background thread."""

    def __init__(self, interval: float = 0.25):
        self.interval, self.peak_kib, self.samples = interval, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = os.getpid()
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, tree_rss_kib(me))
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class Measure:
    """Times the block it wraps, in this process: ``seconds`` of wall time, the cores this
    process tree (``our_cores``) and the rest of the machine (``other_cores``) kept busy
    meanwhile, and with ``memory=True`` the tree's sampled peak memory (``memory``, a
    TreeMemory)."""

    def __init__(self, memory: bool = False):
        self.memory = TreeMemory() if memory else None

    def __enter__(self):
        self._snap = cpu_snapshot()
        if self.memory:
            self.memory.__enter__()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t0
        if self.memory:
            self.memory.__exit__(*exc)
        load = other_load(self._snap, cpu_snapshot())
        self.other_cores, self.our_cores = load["other_cores"], load["our_cores"]


def run_measured(cmd: list[str], log_path: Path) -> dict:
    """Run ``cmd`` as a subprocess (output to ``log_path``): its wall seconds, the peak over
    samples every 0.25 s of the summed resident memory of its process tree (``peak_mib``: a
    fit's chains are child processes) and the other load meanwhile."""
    snap = cpu_snapshot()
    t0 = time.perf_counter()
    with open(log_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=err, stderr=subprocess.STDOUT, cwd=REPO)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss_kib(proc.pid))
            time.sleep(0.25)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"{cmd[0]} ... failed ({proc.returncode}); see {log_path}")
    return {"wall_seconds": wall, "peak_mib": peak / 1024,
            "other_cores": other_load(snap, cpu_snapshot())["other_cores"]}


def timed_run(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``cmd`` to its end with its output captured: (wall seconds, the finished process)."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t0, done


def timed_synthesize(real, *flags: str, max_wait: float = 120.0) -> dict:
    """``mixsynth synthesize`` with defaults (and ``flags``) on the frame ``real`` as a whole
    command, once the machine is quiet (waiting up to ``max_wait`` s): {wall_seconds, stdout,
    synthetic (the frame written), other_cores_at_start}."""
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "real.csv"
        real.to_csv(path, index=False)
        quiet = wait_until_quiet(max_wait)
        wall, done = timed_run([str(MIXSYNTH), "synthesize", str(path), "--out", str(Path(tmp) / "syn.csv"),
                                "--no-progress", *flags])
        done.check_returncode()
        synthetic = pd.read_csv(Path(tmp) / "syn.csv")
    return {"wall_seconds": wall, "stdout": done.stdout, "synthetic": synthetic,
            "other_cores_at_start": quiet["other_cores_at_start"]}


def rusage_kib() -> dict:
    """Peak RSS (KiB on Linux) of this process and of its largest waited-for descendant."""
    return {"self_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "children_maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}


# -- the machine ---------------------------------------------------------------------------

def git(*args: str) -> str | None:
    """A git command's output in the repository (None if git is not there)."""
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def machine(*packages: str) -> dict:
    """Date, CPUs, platform, the versions of the product's stack (and of ``packages``), the git
    commit and the uncommitted changes in ``mixsynth/``: written beside every figure."""
    import numba
    cpu = None
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((l.split(":", 1)[1].strip() for l in fh if l.startswith("model name")), None)
    except OSError:
        pass
    dirty = git("status", "--porcelain", "--", "mixsynth")
    names = ("mixsynth", "numpy", "numba", "scipy", "pandas", "arviz", *packages)
    return {
        "date": now(),
        "cpu_count": os.cpu_count(), "cpu_model": cpu,
        "numba_threads": numba.get_num_threads(),
        "platform": platform.platform(), "python": platform.python_version(),
        "versions": {p: version(p) for p in names},
        "git_commit": git("rev-parse", "HEAD"),
        "git_uncommitted_in_mixsynth": dirty.splitlines() if dirty else [],
    }


def now() -> str:
    """The UTC time, as the results files write it."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


# -- command line --------------------------------------------------------------------------

def parse_arguments(argv, description: str, name: str, pieces: list[str] | None = None,
                    quick_help: str | None = None, waits: bool = True, options=None):
    """The options the benchmark scripts share; returns (args, output path without extension,
    pieces to run, seconds to wait for a quiet machine before each piece).

    ``--out`` always; ``--quick`` with ``quick_help`` (what the smoke run shortens; its
    results go to NAME-quick.*); ``--only`` with ``pieces``; ``--wait-quiet`` when the
    script ``waits``; ``options(parser)`` adds the script's own."""
    ap = argparse.ArgumentParser(description=description)
    if quick_help:
        ap.add_argument("--quick", action="store_true", help=f"{quick_help} (a smoke run; results/{name}-quick.*)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output path without extension (default benchmarks/results/{name}"
                         + (f" or {name}-quick)" if quick_help else ")"))
    if waits:
        ap.add_argument("--wait-quiet", type=float, default=None, metavar="SECONDS",
                        help="before each piece wait up to SECONDS for other processes to use under "
                             "0.25 cores (default 120" + (", 0 with --quick)" if quick_help else ")"))
    if pieces:
        ap.add_argument("--only", nargs="+", choices=pieces, default=None,
                        help="run only these pieces, keeping the others from the existing results")
    if options:
        options(ap)
    args = ap.parse_args(argv)
    quick = getattr(args, "quick", False)
    out = args.out or RESULTS / (f"{name}-quick" if quick else name)
    out.parent.mkdir(parents=True, exist_ok=True)
    wait = getattr(args, "wait_quiet", None)
    max_wait = wait if wait is not None else (0.0 if quick else 120.0)
    return args, out, getattr(args, "only", None) or list(pieces or []), max_wait


# -- results -------------------------------------------------------------------------------

def keep_earlier(res: dict, out: Path, keys, config: dict | None = None) -> None:
    """For ``--only``: copy into ``res`` the pieces ``keys`` (and when each ran) from the
    results already at OUT.json, if any. With ``config``, those results must have been
    made with the same settings (else a SystemExit naming ``--out``)."""
    path = out.with_suffix(".json")
    if not path.exists():
        return
    old = json.loads(path.read_text())
    if config is not None and old.get("config") != json.loads(json.dumps(config)):
        raise SystemExit(f"{path} was written with other settings; use --out for a separate file")
    res["runs"] = old.get("runs", {})
    res.update({k: old[k] for k in keys if k in old})


def run_piece(res: dict, key: str, fn, max_wait: float) -> None:
    """Run one benchmark piece ``fn() -> dict`` after waiting up to ``max_wait`` seconds for a
    quiet machine; keep its result (with the wait) as ``res[key]`` and when, at which commit
    and in how many seconds it ran as ``res["runs"][key]``."""
    wait = wait_until_quiet(max_wait) if max_wait > 0 else None
    t0 = time.perf_counter()
    res[key] = fn()
    res[key]["wait"] = wait
    res["runs"][key] = {"date": now(), "git_commit": res["machine"]["git_commit"],
                        "seconds": time.perf_counter() - t0}


def save_results(res: dict, out: Path, markdown, indent: int = 2) -> None:
    """Write ``res`` (with the process's resource use so far) to OUT.json and ``markdown(res)``
    to OUT.md; called after every piece, so an interrupted run keeps what it finished."""
    res["rusage_end"] = rusage_kib()
    out.with_suffix(".json").write_text(json.dumps(res, indent=indent, default=float) + "\n")
    out.with_suffix(".md").write_text(markdown(res))


def runs_footer(res: dict) -> list[str]:
    """Markdown lines naming when, at which commit and how long each piece ran."""
    runs = res.get("runs", {})
    if not runs:
        return []
    return ["Pieces run (UTC, commit, wall seconds incl. waiting for a quiet machine): " + "; ".join(
        f"{k} {v['date']} @ {(v.get('git_commit') or '?')[:7]}"
        + (f", {v['seconds']:.0f} s" if "seconds" in v else "") for k, v in runs.items()) + ".", ""]


def number(x, nd: int = 2) -> str:
    """A figure for a results page: ``nd`` decimals with thousands separators, "n/a" for None."""
    return "n/a" if x is None else f"{x:,.{nd}f}"


def load_cell(x) -> str:
    """The cores other processes used during a measurement (the machine is shared), for a
    table's "other load" column."""
    v = x.get("other_cores") if x else None
    return "n/a" if v is None else f"{v:.2f}"
