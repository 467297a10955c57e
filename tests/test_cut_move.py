"""The cut move between two tie groups leaves the rank likelihood's distribution of the
latents exactly invariant (kernels/latent.py, ``move_cut``)."""
import numpy as np

from mixsynth.kernels.latent import move_cut
from mixsynth.kernels.truncnorm import seed_streams


def test_cut_move_keeps_the_exact_distribution_of_the_gap():
    """Two groups of 20 rows (a binary), z_i ~ N(0, 1): under the rank likelihood the latents
    are 40 sorted normal draws, so the gap between the groups has the spacing's distribution
    (mean about 1 / (40 phi(0)) = 0.063). Started from exact draws, five cut moves must leave
    its mean and the boundary's mean where they are; the free-cutpoint model the proposal
    comes from, without the gap's Metropolis-Hastings correction, doubles the mean gap."""
    rng = np.random.default_rng(3)
    n, reps = 40, 4000
    order = np.arange(n)
    mu, sd = np.zeros(n), np.ones(1)
    keep = np.empty(3 * n)
    state = seed_streams(np.random.SeedSequence(11), 1)
    exact, moved, changed = np.empty(reps), np.empty(reps), 0
    top = np.empty(reps)
    for r in range(reps):
        z = np.sort(rng.standard_normal(n))
        exact[r] = z[20] - z[19]
        start = z.copy()
        for _ in range(5):
            move_cut(z, mu, sd, 0, 0, order, -1, 0, 20, 40, -1, keep, state)
        changed += not np.array_equal(z, start)
        moved[r], top[r] = z[20:].min() - z[:20].max(), z[:20].max()
    assert changed > 0.5 * reps                                   # the move does move
    assert abs(moved.mean() / exact.mean() - 1) < 0.06, (moved.mean(), exact.mean())
    assert abs(top.mean()) < 0.03                                 # the boundary stays centred
