"""The wizard's YAML mode in the browser: from the form to the YAML and back, by label."""

from __future__ import annotations

import uuid

from playwright.sync_api import expect

from tests.e2e.conftest import sign_in

NS = "team-nlp"
IMAGE = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"


def test_the_yaml_edited_shows_in_the_form_and_an_error_keeps_the_text(page, live_dashboard):
    sign_in(page, live_dashboard, "alice")
    page.get_by_role("link", name="Create job").first.click()
    page.get_by_role("button", name="Create an MPIJob").click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    page.get_by_label("Project").select_option(NS)
    name = f"e2e-yaml-{uuid.uuid4().hex[:5]}"
    page.get_by_label("Job name").fill(name)
    page.get_by_label("Training image").fill(IMAGE)
    page.get_by_label("Command").fill("horovodrun -np 1 python /workspace/train.py")
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()

    page.get_by_role("link", name="Edit as YAML").click()
    editor = page.get_by_label("Manifest (YAML)")
    expect(editor).to_be_visible()
    text = editor.input_value()
    assert f"name: {name}" in text
    broken = text + "\n  bad: [unclosed\n"
    editor.fill(broken)
    page.get_by_role("button", name="Read into the form").click()
    expect(page.get_by_text("This is not valid YAML")).to_be_visible()
    expect(page.get_by_label("Manifest (YAML)")).to_have_value(broken)

    page.get_by_label("Manifest (YAML)").fill(text.replace(IMAGE, IMAGE + "-v2"))
    page.get_by_role("button", name="Read into the form").click()
    expect(page.get_by_text("The YAML was read into the form")).to_be_visible()
    expect(page.get_by_label("Training image")).to_have_value(IMAGE + "-v2")
