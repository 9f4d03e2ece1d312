"""Shared fixtures: a real simcluster process per test session."""

from __future__ import annotations

import pytest

from tests import simcluster_process


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


# `make test` runs the suite on two pytest-xdist workers (--dist loadgroup): tests that
# must not run at the same time as each other share a group, so they run on one worker, one
# after the other. The browser tests (one Chromium at a time is what two cores bear), and
# the tests that use the machine's one PostgreSQL database `test`. Known: with pytest 9.2
# and pytest-xdist 3.8 the groups are not applied (xdist adds them to `item._nodeid`,
# which pytest 9.2 no longer reads). With pytest 8.4 they are, and tests that happened to
# pass on the other worker then fail: a database fixture after a Playwright test in the
# same process (Django's async-unsafe check) and log capture in test_errors.py; to be
# fixed before pinning pytest.
_GROUPS = {"tests/e2e/": "browser",
           "tests/integration/database/": "postgresql",
           "tests/integration/hub/test_history.py": "postgresql"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = str(item.path.relative_to(config.rootpath)) if item.path else ""
        for prefix, group in _GROUPS.items():
            if path.startswith(prefix):
                item.add_marker(pytest.mark.xdist_group(group))
                break


@pytest.fixture(autouse=True)
def _back_to_the_sites_language():
    """A request served in French by the test client leaves French active in this thread
    (Django activates each request's language and resets none): later tests read the
    site's language again."""
    yield
    from django.utils import translation

    translation.deactivate()
