"""A cluster administrator changes a project's quota from the cluster overview and sees
the new figure there."""

from __future__ import annotations

import re

from kubernetes import client as k8s
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in


def test_the_admin_raises_researchs_cpu_quota_and_sees_it(page, live_dashboard, e2e_cluster):
    sign_in(page, live_dashboard, "admin", next_path="/cluster/")
    try:
        page.get_by_role("link", name="Change the quota of research").click()
        expect(page.get_by_role("heading", name="Quota team-quota of project research")
               ).to_be_visible()
        cpus = page.get_by_label("CPUs", exact=True)
        expect(cpus).to_have_value("64")
        cpus.fill("-8")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("alert")).to_contain_text("Nothing was changed")
        expect(page.get_by_label("CPUs", exact=True)).to_have_value("-8")  # kept
        page.get_by_label("CPUs", exact=True).fill("80")
        page.get_by_role("button", name="Save").click()
        page.wait_for_url(re.compile(r".*/cluster/(#project-research)?$"))
        expect(page.get_by_role("status").filter(has_text="CPUs 64 → 80")).to_be_visible()
        expect(page.locator("#project-research")).to_contain_text(re.compile(r"CPUs\s+[\d.]+/80"))
    finally:
        with e2e_cluster.api_client("admin") as api:
            k8s.CoreV1Api(api).patch_namespaced_resource_quota(
                "team-quota", "research", {"spec": {"hard": {"requests.cpu": "64"}}})
