"""A one-line progress bar for the sampler, drawn only on a terminal."""
import sys
import time


class SweepProgress:
    """Call with the sweeps done per chain; shows the bar, sweeps/s and the time left.

    ``total`` is sweeps per chain. Silent unless ``stream`` is a terminal (or ``enabled``).
    """

    def __init__(self, total: int, chains: int, stream=None, enabled: bool | None = None,
                 every: float = 0.25):
        self.total, self.chains = total, chains
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.every = every
        self.start = time.monotonic()
        self.last = 0.0

    def __call__(self, done: list[int]) -> None:
        now = time.monotonic()
        finished = sum(done) >= self.total * self.chains
        if not self.enabled or (now - self.last < self.every and not finished):
            return
        self.last = now
        self.stream.write("\r" + self.line(sum(done), now - self.start))
        self.stream.flush()

    def line(self, swept: int, elapsed: float) -> str:
        """The bar for ``swept`` sweeps over all chains after ``elapsed`` seconds."""
        goal = self.total * self.chains
        share = swept / goal if goal else 1.0
        rate = swept / elapsed if elapsed > 0 else 0.0
        left = (goal - swept) / rate if rate > 0 else float("nan")
        bar = "#" * int(30 * share) + "-" * (30 - int(30 * share))
        eta = f"{int(left // 60)}m{int(left % 60):02d}s left" if left == left else ""
        return f"sampling [{bar}] {swept:,}/{goal:,} sweeps  {rate:,.1f} sweeps/s  {eta}   "

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
