"""Going through the create-job wizard with a Django test client, as a browser without
JavaScript would: each step's form is read from the page and posted back with changes."""

from __future__ import annotations

import re
import uuid
from html.parser import HTMLParser

from django.urls import reverse

from training.models import WizardDraft

NEW = reverse("training-job-new")
STEP = re.compile(r"/jobs/new/(?P<key>[0-9a-f-]{36})/(?P<step>[a-z]+)/")


class _FormReader(HTMLParser):
    """The successful controls of the form whose action contains `action`."""

    def __init__(self, action: str) -> None:
        super().__init__(convert_charrefs=True)
        self.action = action
        self.inside = False
        self.found = False
        self.values: dict[str, str | list[str]] = {}
        self.select: str | None = None
        self.select_first: str | None = None
        self.select_chosen = False
        self.textarea: str | None = None
        self.text = ""
        self.option_value: str | None = None
        self.option_selected = False
        self.option_text = ""

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action in a.get("action", "") and not self.found:
            self.inside = self.found = True
            return
        if not self.inside:
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = a.get("type", "text")
            if kind in ("submit", "button", "file", "image", "reset"):
                return
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            self.values[name] = a.get("value", "on" if kind == "checkbox" else "")
        elif tag == "select" and name:
            self.select, self.select_first, self.select_chosen = name, None, False
        elif tag == "option" and self.select:
            self.option_value = a.get("value")
            self.option_selected = "selected" in a
            self.option_text = ""
        elif tag == "textarea" and name:
            self.textarea, self.text = name, ""

    def handle_data(self, data):
        if self.textarea is not None:
            self.text += data
        if self.option_value is None and self.select and self.inside:
            self.option_text += data

    def handle_endtag(self, tag):
        if not self.inside:
            return
        if tag == "form":
            self.inside = False
        elif tag == "option" and self.select:
            value = self.option_value if self.option_value is not None else \
                self.option_text.strip()
            if self.select_first is None:
                self.select_first = value
            if self.option_selected and not self.select_chosen:
                self.values[self.select] = value
                self.select_chosen = True
            self.option_value = None
        elif tag == "select" and self.select:
            if not self.select_chosen and self.select_first is not None:
                self.values[self.select] = self.select_first
            self.select = None
        elif tag == "textarea" and self.textarea is not None:
            self.values[self.textarea] = self.text.removeprefix("\n")
            self.textarea = None


def form_values(html: str, action: str) -> dict:
    reader = _FormReader(action)
    reader.feed(html)
    assert reader.found, f"no form posting to {action!r} on the page"
    return reader.values


def step_url(key: str, step: str) -> str:
    return reverse("training-job-new-step", args=[key, step])


def key_of(response) -> str:
    match = STEP.search(response["Location"])
    assert match, response["Location"]
    return match.group("key")


def start(client, **post) -> str:
    """Step 1: "Create an MPIJob" (or a template/import given in `post`); the draft's key."""
    response = client.post(NEW, post or {"start": "mpijob"})
    assert response.status_code == 302, response.content.decode()[:2000]
    return key_of(response)


def post_step(client, key: str, step: str, action: str = "next", **changes):
    """Post a step's form as the page shows it, with `changes` typed over it."""
    page = client.get(step_url(key, step))
    assert page.status_code == 200
    values = form_values(page.content.decode(), step_url(key, step))
    for name, value in changes.items():
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value
    values["action"] = action
    return client.post(step_url(key, step), values)


def fill(client, key: str, *, name: str, namespace: str = "team-cv", workers: int = 2,
         image: str = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1",
         command: str = "horovodrun -np 2 python /workspace/train.py", **resources) -> None:
    if draft(key).data.get("_simple"):  # a first job starts simple: the full wizard here
        post_step(client, key, "configuration", action="full")
    r = post_step(client, key, "configuration", namespace=namespace, name=name, image=image,
                  command=command)
    assert r.status_code == 302, _problems(r)
    assert r["Location"] == step_url(key, "resources")
    r = post_step(client, key, "resources", workers=str(workers),
                  **{k: str(v) for k, v in resources.items()})
    assert r.status_code == 302, _problems(r)
    assert r["Location"] == step_url(key, "review")


def _problems(response) -> str:
    body = response.content.decode()
    items = re.findall(r'pf-v6-c-helper-text__item pf-m-error">(.*?)</div>', body, re.S)
    texts = [re.sub(r"<[^>]+>", "", item).strip() for item in items]
    return "\n".join(texts) or body[:3000]


def create(client, key: str):
    return client.post(reverse("training-job-new-create", args=[key]))


def draft(key: str) -> WizardDraft:
    return WizardDraft.objects.get(key=key)


def unique(prefix: str = "wiz") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"
