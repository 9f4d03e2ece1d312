"""How `make test` shares the suite between its workers (tests/scheduling.py): the groups
that must not run in parallel are one unit each, whatever pytest does with node ids."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests import conftest
from tests.scheduling import SuiteScheduling, unit_of


def test_it_puts_the_browser_tests_in_two_units_each_module_whole():
    first = {unit_of("tests/e2e/test_live.py::test_a[chromium]"),
             unit_of("tests/e2e/test_live.py::test_d[chromium]"),
             unit_of("tests/e2e/test_wizard.py::test_b[chromium]")}
    second = {unit_of("tests/e2e/test_accessibility.py::test_c[chromium-alice-phone]"),
              unit_of("tests/e2e/test_notifications.py::test_e[chromium]")}
    assert first == {"group:browser"}
    assert second == {"group:browser-2"}
    # every browser module is in one of them
    e2e = Path(__file__).resolve().parents[1] / "e2e"
    assert {unit_of(f"tests/e2e/{m.name}::t") for m in e2e.glob("test_*.py")} == \
        {"group:browser", "group:browser-2"}


def test_it_puts_the_postgresql_tests_in_one_unit_apart_from_the_browser():
    assert unit_of("tests/integration/database/test_backend.py::test_x") == "group:postgresql"
    assert unit_of("tests/integration/hub/test_history.py::test_y[postgresql]") == \
        "group:postgresql"
    assert unit_of("tests/integration/hub/test_hub.py::test_z") != "group:postgresql"


def test_an_integration_module_is_one_unit_and_a_unit_test_its_own():
    assert unit_of("tests/integration/test_training_cli_plan.py::test_a") == \
        unit_of("tests/integration/test_training_cli_plan.py::test_b")
    assert unit_of("tests/conformance/test_kubectl.py::test_a") == \
        "tests/conformance/test_kubectl.py"
    assert unit_of("tests/unit/test_training_fit.py::test_a") != \
        unit_of("tests/unit/test_training_fit.py::test_b")


def test_make_tests_distribution_uses_it():
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert "--dist loadgroup" in makefile  # the option the hook answers
    hook = conftest.pytest_xdist_make_scheduler
    assert hook(SimpleNamespace(getoption=lambda name: "load"), None) is None
    # the scheduler's units are unit_of's
    assert SuiteScheduling._split_scope(None, "tests/e2e/test_live.py::t") == "group:browser"
