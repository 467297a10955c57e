"""Sampler progress: a one-line bar on a terminal, plain lines every few seconds elsewhere
(a log file, a pipe, a scheduler's capture), so a long run always shows life."""
import sys
import time


class SweepProgress:
    """Call with the sweeps done per chain; shows the sweeps, sweeps/s and the time left.

    ``total`` is sweeps per chain, or the run lengths a chain may stop after (shortest
    first): each chain is then shown against the next one it has not passed, and the line
    says so. ``enabled``: None (default) draws the bar on a terminal
    and writes a plain line every ``plain_every`` seconds (and at the end) otherwise; True
    forces the bar, False silences it. ``announce(model)`` is called once before sampling
    starts (``CopulaSynthesizer.fit`` calls ``before_sampling``), e.g. to print a cost estimate.
    """

    def __init__(self, total, chains: int, stream=None, enabled: bool | None = None,
                 every: float = 0.25, plain_every: float = 5.0, announce=None):
        self.rounds = sorted(total) if hasattr(total, "__iter__") else [total]
        self.total, self.chains = self.rounds[-1], chains
        self.done = [0] * chains
        self.stream = stream or sys.stderr
        tty = self.stream.isatty()
        self.enabled = enabled is not False
        self.plain = enabled is None and not tty
        self.every = plain_every if self.plain else every
        self.announce = announce
        self.start = time.monotonic()
        self.last = self.start if self.plain else 0.0
        self.finished = False

    def before_sampling(self, model) -> None:
        """Called by the fit once the layout is known and before the chains start."""
        if self.announce is not None:
            self.announce(model)
        self.start = time.monotonic()
        self.last = self.start if self.plain else 0.0

    def __call__(self, done: list[int]) -> None:
        now = time.monotonic()
        self.done = list(done)
        finished = sum(done) >= self.total * self.chains
        if not self.enabled or self.finished or (now - self.last < self.every and not finished):
            return
        self.finished = finished
        self._write(now)

    def _write(self, now: float) -> None:
        self.last, swept = now, sum(self.done)
        if self.plain:
            self.stream.write(self.text(swept, now - self.start) + "\n")
        else:
            self.stream.write("\r" + self.line(swept, now - self.start))
        self.stream.flush()

    def _goal(self) -> int:
        """Sweeps over all chains at the next run length each chain may stop after."""
        return sum(next((r for r in self.rounds if r >= d), self.total) for d in self.done)

    def _rate_left(self, swept: int, elapsed: float) -> tuple[int, float, float]:
        goal = self._goal()
        rate = swept / elapsed if elapsed > 0 else 0.0
        left = (goal - swept) / rate if rate > 0 else float("nan")
        return goal, rate, left

    def line(self, swept: int, elapsed: float) -> str:
        """The bar for ``swept`` sweeps over all chains after ``elapsed`` seconds."""
        goal, rate, left = self._rate_left(swept, elapsed)
        share = swept / goal if goal else 1.0
        bar = "#" * int(30 * share) + "-" * (30 - int(30 * share))
        eta = f"{int(left // 60)}m{int(left % 60):02d}s left" if left == left else ""
        return f"sampling [{bar}] {swept:,}/{goal:,} sweeps{self._more(goal)}  {rate:,.1f} sweeps/s  {eta}   "

    def text(self, swept: int, elapsed: float) -> str:
        """One plain log line: sweeps done, share, rate, elapsed and time left."""
        goal, rate, left = self._rate_left(swept, elapsed)
        share = 100.0 * swept / goal if goal else 100.0
        eta = f", about {int(left // 60)}m{int(left % 60):02d}s left" if left == left and swept < goal else ""
        return (f"sampling: {swept:,}/{goal:,} sweeps{self._more(goal)} ({share:.0f}%), {rate:,.1f} sweeps/s, "
                f"{elapsed:.0f} s elapsed{eta}")

    def _more(self, goal: int) -> str:
        """What follows a goal short of the longest run: more sweeps unless the chains have mixed."""
        return "" if goal >= self.total * self.chains else f" (up to {self.total * self.chains:,} unless mixed)"

    def close(self) -> None:
        """Write the final state (if the last call was not shown) and end the bar's line."""
        if self.enabled and not self.finished and sum(self.done):
            self._write(time.monotonic())
        self.finished = True
        if self.enabled and not self.plain:
            self.stream.write("\n")
            self.stream.flush()
