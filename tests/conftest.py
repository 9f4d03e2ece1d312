"""Shared fixtures: a real simcluster process per test session."""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

import pytest

from tests import simcluster_process
from tests.scheduling import group_of

# Playwright's sync API runs an event loop in the test process's main thread, which Django
# then takes for async code: the database tests that follow a browser test on the same
# worker would be refused. The test process only; the dashboard never sets it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def simcluster(tmp_path_factory):
    """The `empty` scenario at speed 50: one namespace (team-nlp), one node, the demo users."""
    cluster = simcluster_process.start(tmp_path_factory.mktemp("simcluster") / "state",
                                       scenario="empty", speed=50)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def admin_api(simcluster):
    return simcluster.api_client("admin")


@pytest.fixture(scope="session")
def alice_api(simcluster):
    return simcluster.api_client("alice")


@pytest.fixture(scope="session")
def bob_api(simcluster):
    return simcluster.api_client("bob")


def pytest_xdist_make_scheduler(config, log):
    """`make test`'s workers share the suite as tests/scheduling.py says."""
    if config.getoption("dist") == "loadgroup":
        from tests.scheduling import SuiteScheduling

        return SuiteScheduling(config, log)
    return None


@pytest.fixture(autouse=True)
def _one_at_a_time(request, testrun_uid):
    """A test of a group (the browser tests, the PostgreSQL tests) fails at once when
    another test of its group is running on the other worker: the groups are not applied."""
    group = group_of(str(request.node.path.relative_to(request.config.rootpath)))
    if not group:
        yield
        return
    lock = Path(tempfile.gettempdir()) / f"odh-tests-{testrun_uid}-{group}.lock"
    with open(lock, "w") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pytest.fail(f"another test of the group {group!r} is running at the same time: "
                        "the suite's groups are not applied (see tests/scheduling.py)")
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _back_to_the_sites_language():
    """A request served in French by the test client leaves French active in this thread
    (Django activates each request's language and resets none): later tests read the
    site's language again."""
    yield
    from django.utils import translation

    translation.deactivate()
