"""The compiled independence steps of the scale move (mixsynth/moves.py, ``gig_move``) for
u ~ GIG(p, psi, chi), density u^(p-1) exp(-(psi u + chi / u) / 2): one a latent column, its
random parts drawn outside from the chain's generator."""
import math

import numba as nb
import numpy as np


@nb.njit(cache=True)
def gig_steps(p, psi, chi, normals, uniforms):
    """moves.gig_move given its random parts, all arrays (m,): p, psi, chi the GIG's
    parameters, ``normals`` and ``uniforms`` the proposal's standard normal and the
    acceptance test's uniform, one of each an entry. Returns u (m,), each column's squared
    scale factor (1 where the step is refused)."""
    out = np.ones(p.size)
    for t in range(p.size):
        a, c = p[t], chi[t]
        b = max(psi[t], 1e-12)
        r = math.sqrt(a * a + b * c)
        mode = math.log((a + r) / b) if a > 0 else math.log(c / (r - a))
        sd = math.sqrt(1.5 / (0.5 * (b * math.exp(mode) + c * math.exp(-mode))))
        prop = mode + sd * normals[t]
        # log target minus log proposal, up to a constant; a far-out proposal gives -inf: refused
        there = a * prop - 0.5 * (b * math.exp(prop) + c * math.exp(-prop)) + 0.5 * ((prop - mode) / sd) ** 2
        here = -0.5 * (b + c) + 0.5 * (mode / sd) ** 2
        if math.log(uniforms[t]) < there - here:
            out[t] = math.exp(prop)
    return out
