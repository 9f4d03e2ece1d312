"""How `make test` shares the suite between its pytest-xdist workers (six: Makefile; the
suite waits on its clusters more than it computes, so two cores carry six).

pytest-xdist's own `--dist loadgroup` reads a test's group from a suffix it adds to the
test's node id, which pytest 9.2 no longer reads back: its groups silently stopped being
applied. This scheduler decides from the test's path instead, so it does not depend on
pytest's internals:

- the browser tests are two units (GROUPS: two Chromiums at a time is what two cores bear
  beside the rest), and every test of the machine's one PostgreSQL database `test` is
  one: each runs on one worker, one test after the other (tests/conftest.py's
  `_one_at_a_time` fails a test that finds its group already busy);
- a module of `tests/integration`, `tests/conformance` or `tests/deploy` is one unit, so
  the simcluster or daphne its module-scoped fixtures start is started once, not once per
  worker;
- a unit test is a unit of its own.

The biggest units are handed out first (xdist's `loadscopereorder`), so the long browser
groups start at once and the other workers take everything else meanwhile.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# the first matching prefix names a test's group
GROUPS: dict[str, str] = {
    # the browser tests in two groups of about the same length (each a Chromium, a
    # dashboard and a simcluster of its own), so neither is the suite's long tail
    **{f"tests/e2e/{module}.py": "browser-2" for module in (
        "test_accessibility", "test_notifications", "test_phone_layout", "test_queues",
        "test_metrics", "test_admin", "test_content_security_policy", "test_actions",
        "test_diagnosis", "test_hardening", "test_compare", "test_training_curves",
        "test_quota_admin", "test_bulk_actions", "test_artifacts")},
    "tests/e2e/": "browser",
    "tests/integration/database/": "postgresql",
    "tests/integration/hub/test_history.py": "postgresql",
}
BY_MODULE = ("tests/integration/", "tests/conformance/", "tests/deploy/")


def group_of(path: str) -> str:
    """The group a test file's tests share, or '' when they may run beside anything."""
    for prefix, group in GROUPS.items():
        if path.startswith(prefix):
            return group
    return ""


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to (tests of one unit run on one worker, in order)."""
    path = nodeid.split("::", 1)[0]
    group = group_of(path)
    if group:
        return f"group:{group}"
    if path.startswith(BY_MODULE):
        return path
    return nodeid


class SuiteScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)
