"""Short MCMC settings for the fast test set."""
import pytest

from mixsynth import SamplerSettings


@pytest.fixture(scope="session")
def short_run():
    """MCMC settings for tests: one chain, short but past burn-in."""
    return SamplerSettings(sweeps=1200, burn_in=400, thin=4, chains=1)
