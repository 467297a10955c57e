"""Fixtures shared by the tests: short MCMC settings, the stores, Dagster instances on SQLite and Postgres."""
import os

import pytest

from mixsynth import SamplerSettings


def pytest_configure(config):
    """Under pytest-xdist (`make test`: two workers), each worker's in-process chains get
    their share of the cores: numba's threads meet at a barrier every sweep, and two
    workers each running two threads on two cores made those chains 10x slower. The draws
    do not depend on the thread count (test_sampler.py, test_truncnorm.py)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        import numba
        numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS // workers))


# The files that take longest (a minute or more on two cores), longest first: run first,
# they leave the short files to fill in, and the two workers end together.
LONG_FILES = ["test_pipeline_daemon.py", "test_pipeline_faults.py", "test_sbc.py", "test_responses.py",
              "test_checkpoint.py", "test_screen.py", "test_sampler.py", "test_pipeline_celery.py"]


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))


@pytest.fixture(scope="session")
def short_run():
    """MCMC settings for tests: one chain, short but past burn-in."""
    return SamplerSettings(sweeps=1200, burn_in=400, thin=4, chains=1)


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL server on a free loopback port for the whole session (Debian's
    binaries, run as the `postgres` user when the tests run as root), stopped at the end."""
    from services import PostgresServer
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_env(postgres, request):
    """A fresh database on the session's server, as the DAGSTER_POSTGRES_* variables."""
    import re
    name = "t_" + re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:50] + f"_{id(request) % 10**6}"
    return postgres.env(postgres.create_database(name))


@pytest.fixture(params=["sqlite", "postgres"])
def dagster_home(request, tmp_path, monkeypatch):
    """A DAGSTER_HOME with the shipped instance settings: `dagster.yaml` (SQLite storage in
    the folder) or `docker/dagster.yaml` (runs, event logs, schedules and dynamic partitions
    in Postgres, from the DAGSTER_POSTGRES_* variables); set in the environment."""
    import shutil
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    home = tmp_path / "dagster"
    home.mkdir()
    if request.param == "postgres":
        for var, value in request.getfixturevalue("postgres_env").items():
            monkeypatch.setenv(var, value)
        shutil.copy(root / "docker" / "dagster.yaml", home / "dagster.yaml")
    else:
        shutil.copy(root / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


@pytest.fixture
def instance(dagster_home):
    """The Dagster instance of `dagster_home` (both storages in turn)."""
    import dagster as dg
    with dg.DagsterInstance.from_config(str(dagster_home)) as inst:
        yield inst


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Stores and landing root in tmp_path, set through the environment as in production."""
    for var, sub in (("MIXSYNTH_CONFIDENTIAL_DIR", "confidential"), ("MIXSYNTH_RELEASE_DIR", "release"),
                     ("MIXSYNTH_LANDING_DIR", "landing")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    return tmp_path
