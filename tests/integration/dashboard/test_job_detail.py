"""The job detail page: Overview, Logs, Events and Configuration of one job."""

from __future__ import annotations

import html
import json
import re

import yaml
from django.urls import reverse

from tests.html_checks import assert_valid

GPT2 = reverse("training-job-detail", args=["team-nlp", "mpijob", "gpt2-finetune"])
BERT = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])


def _pre(body: str, marker: str) -> str:
    """The raw (still escaped) content of the <pre> with this class or id."""
    match = re.search(rf'<pre [^>]*(?:class|id)="{marker}"[^>]*>(.*?)</pre>', body, re.S)
    assert match, f"no <pre> {marker!r} on the page"
    return match.group(1)


def _event_rows(body: str) -> list[str]:
    tbody = re.search(r'<tbody id="job-event-rows"[^>]*>(.*?)</tbody>', body, re.S)
    assert tbody, "no events table"
    return re.findall(r"<tr.*?</tr>", tbody.group(1), re.S)


def test_it_sends_anonymous_people_to_sign_in(client, db):
    r = client.get(GPT2 + "?tab=logs")
    assert r.status_code == 302
    assert r["Location"] == (reverse("training-login")
                             + "?next=%2Fjobs%2Fteam-nlp%2Fmpijob%2Fgpt2-finetune%2F%3Ftab%3Dlogs")


def test_it_refuses_post(alice):
    assert alice.post(GPT2).status_code == 405


def test_it_tells_bob_which_project_he_lacks(bob):
    r = bob.get(GPT2)
    assert r.status_code == 403
    body = r.content.decode()
    assert "You don't have access to the project “team-nlp”" in html.unescape(body)
    assert "gpt2-finetune" not in body.split("The cluster said:")[0]  # nothing of the job
    assert_valid(body)


def test_it_says_a_missing_job_no_longer_exists(alice):
    r = alice.get(reverse("training-job-detail", args=["team-nlp", "mpijob", "no-such-job"]))
    assert r.status_code == 404
    body = r.content.decode()
    assert "This job no longer exists" in body
    assert "no-such-job" in body
    assert f'href="{reverse("training-job-list")}"' in body
    assert_valid(body)


def test_it_does_not_know_a_type_it_has_never_heard_of(alice):
    r = alice.get("/jobs/team-nlp/sparkjob/gpt2-finetune/")
    assert r.status_code == 404
    body = r.content.decode()
    assert "sparkjob" in body
    assert "This job no longer exists" not in body  # it never existed: an unknown type
    assert_valid(body)


def test_it_shows_the_overview_of_the_failed_job(alice):
    r = alice.get(GPT2)
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert "<h1" in body and ">gpt2-finetune</h1>" in body
    # the Status card tells the diagnosis' story (odh/training/diagnosis/story.py)
    assert "Worker 2 ran out of memory and was killed (exit code 137)" in body
    row = re.search(r'<tr id="replica-gpt2-finetune-worker-2".*?</tr>', body, re.S)
    assert row, "worker 2 is not in the Launcher and Workers table"
    assert "OOMKilled" in row.group(0)
    assert "exit code 137" in row.group(0)
    assert 'data-status="Failed"' in row.group(0)
    assert "fa-exclamation-circle" in row.group(0) and ">Failed<" in row.group(0)
    assert 'aria-label="Conditions history"' in body
    assert "BackoffLimitExceeded" in body
    assert "MPIJobCreated" in body


def _state_actions(body: str) -> str:
    start = body.index('id="job-state-actions"')
    return body[start:body.index("</div>", start)]


def _menu(body: str) -> list[str]:
    start = body.index('class="dash-row-menu dash-job-menu"')
    menu = body[start:body.index("</details>", start)]
    return [html.unescape(m) for m in re.findall(r"<li[^>]*><a [^>]*>([^<]+)</a></li>", menu)]


def test_it_offers_the_actions_that_fit_the_status(alice):
    failed = alice.get(GPT2).content.decode()
    # finished: Clone first; Retry, exports, Compare and Delete in the menu
    assert "/new/?clone=team-nlp/mpijob/gpt2-finetune" in _state_actions(failed)
    assert _menu(failed) == ["Retry", "Export YAML", "Export JSON", "Compare with…", "Delete"]
    assert "/suspend/" not in failed and "/resume/" not in failed
    running = alice.get(BERT).content.decode()
    assert "/suspend/" in _state_actions(running)
    assert _menu(running) == ["Clone", "Export YAML", "Export JSON", "Compare with…", "Delete"]
    suspended = alice.get(reverse("training-job-detail",
                                  args=["team-cv", "mpijob", "whisper-asr-eval"])).content.decode()
    assert "/resume/" in _state_actions(suspended) and 'data-status="Suspended"' in suspended
    assert 'data-may-change="true" data-may-create="true"' in running


def test_it_offers_bob_no_action_he_may_not_take(bob):
    """bob may view research, nothing more: no Suspend, no Clone, Retry or Delete."""
    body = bob.get(reverse("training-job-detail",
                           args=["research", "pytorchjob", "bert-classifier-ddp"])).content.decode()
    assert "/suspend/" not in body and "/delete/" not in body and "?clone=" not in body
    assert _menu(body) == ["Export YAML", "Export JSON", "Compare with…"]
    # a pushed Suspend (the same for every viewer) is hidden from him by the page's flags
    assert 'data-may-change="false" data-may-create="false"' in body


def test_it_answers_htmx_with_the_tab_only(alice):
    r = alice.get(GPT2, {"tab": "events"}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    body = r.content.decode()
    # the tab, after its window title (which htmx takes from the response's root)
    assert re.match(r'\s*<title>Events · gpt2-finetune · [^<]+</title>\s*<div id="tab-content"',
                    body)
    assert "<html" not in body and "dash-detail-header" not in body
    assert "BackoffLimitExceeded" in body
    assert_valid(body, page=False)


def test_it_shows_the_last_lines_of_the_launcher_log(alice):
    r = alice.get(BERT, {"tab": "logs"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    selected = re.search(r'<option value="([^"]+)" selected>', body)
    assert selected and selected.group(1).startswith("bert-large-pretrain-launcher-")
    log = _pre(body, "dash-log")
    assert "Horovod rank 0/8" in log
    assert "bert-large-pretrain-worker-7" in log


def test_it_escapes_log_text(alice):
    # horovodrun tags every rank's line as "[1,0]<stdout>:..." - markup if left unescaped
    log = _pre(alice.get(BERT, {"tab": "logs"}).content.decode(), "dash-log")
    assert "[1,0]&lt;stdout&gt;:Horovod rank 0/8" in log
    assert "<stdout>" not in log
    assert "[1,0]<stdout>:Horovod rank 0/8" in html.unescape(log)


def test_it_shows_the_log_of_a_chosen_worker(alice):
    body = alice.get(BERT, {"tab": "logs", "pod": "bert-large-pretrain-worker-3"}
                     ).content.decode()
    assert '<option value="bert-large-pretrain-worker-3" selected>' in body
    log = _pre(body, "dash-log")
    assert "Server listening on 0.0.0.0 port 22." in log
    assert "Horovod rank" not in log
    assert ("/jobs/team-nlp/mpijob/bert-large-pretrain/logs/bert-large-pretrain-worker-3/"
            "download/") in body


def test_it_downloads_the_whole_log(alice):
    url = reverse("training-job-log-download", args=[
        "team-nlp", "mpijob", "gpt2-finetune", "gpt2-finetune-worker-2"])
    r = alice.get(url)
    assert r.status_code == 200
    assert r.streaming
    assert r["Content-Type"].startswith("text/plain")
    assert r["Content-Disposition"] == 'attachment; filename="gpt2-finetune-worker-2.log"'
    text = b"".join(r.streaming_content).decode()
    assert text.startswith("Server listening on 0.0.0.0 port 22.\n")
    assert "Accepted publickey for root" in text


def test_it_downloads_only_logs_of_the_jobs_own_pods(alice):
    url = reverse("training-job-log-download", args=[
        "team-nlp", "mpijob", "gpt2-finetune", "bert-large-pretrain-worker-0"])
    assert alice.get(url).status_code == 404


def test_it_refuses_bob_the_logs_of_team_nlp(bob):
    url = reverse("training-job-log-download", args=[
        "team-nlp", "mpijob", "gpt2-finetune", "gpt2-finetune-worker-2"])
    r = bob.get(url)
    assert r.status_code == 403
    assert "team-nlp" in r.content.decode()


def test_it_lists_events_newest_first(alice):
    body = alice.get(GPT2, {"tab": "events"}).content.decode()
    assert_valid(body)
    assert 'aria-label="Events, newest first"' in body
    rows = _event_rows(body)
    assert len(rows) > 3
    assert "BackoffLimitExceeded" in rows[0]  # the job gave up last
    reasons = [re.search(r'data-label="Reason"[^>]*>([^<]*)<', row).group(1) for row in rows]
    assert reasons.index("BackoffLimitExceeded") < reasons.index("Scheduled")
    assert "OOMKilled" in body or "Killing" in body or "BackOff" in body or \
        "gpt2-finetune-worker-2" in body


def test_it_filters_events_by_type(alice):
    warnings = _event_rows(alice.get(GPT2, {"tab": "events", "type": "Warning"}
                                     ).content.decode())
    assert warnings and all("Warning" in row for row in warnings)
    assert not any(">Normal<" in row or " Normal</td>" in row for row in warnings)
    normal = _event_rows(alice.get(GPT2, {"tab": "events", "type": "Normal"}).content.decode())
    assert normal and not any("dash-warning" in row for row in normal)
    body = alice.get(GPT2, {"tab": "events", "type": "Warning"}).content.decode()
    assert '<option value="Warning" selected>' in body


def test_it_shows_the_configuration_as_yaml_and_json(alice):
    r = alice.get(GPT2, {"tab": "configuration"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    as_yaml = yaml.safe_load(html.unescape(_pre(body, "job-yaml")))
    assert as_yaml["metadata"]["name"] == "gpt2-finetune"
    assert as_yaml["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 4
    assert "managedFields" not in as_yaml["metadata"]
    as_json = json.loads(html.unescape(_pre(body, "job-json")))
    assert as_json["spec"] == as_yaml["spec"]
    assert 'data-copy-target="job-yaml"' in body and 'data-copy-target="job-json"' in body
    assert "Copy YAML" in body and "Copy JSON" in body


def test_it_shows_bob_a_pytorchjob(bob):
    r = bob.get(reverse("training-job-detail",
                        args=["research", "pytorchjob", "bert-classifier-ddp"]))
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert ">bert-classifier-ddp</h1>" in body
    assert "PyTorchJob" in body
    assert 'id="replica-bert-classifier-ddp-master-0"' in body
    assert 'id="replica-bert-classifier-ddp-worker-1"' in body


def test_it_shows_bob_a_tfjob_and_its_logs(bob):
    url = reverse("training-job-detail", args=["research", "tfjob", "mnist-tf-dist"])
    body = bob.get(url).content.decode()
    assert_valid(body)
    assert "TFJob" in body and 'data-status="Succeeded"' in body
    logs = bob.get(url, {"tab": "logs"}).content.decode()
    assert_valid(logs)
    assert "Training complete" in _pre(logs, "dash-log")


def test_it_offers_bob_no_tab_he_cannot_use(bob):
    # view in research: the detail page works; the logs of another project's job do not
    r = bob.get(GPT2, {"tab": "logs"})
    assert r.status_code == 403


def test_it_says_why_a_suspended_job_has_no_logs(alice):
    url = reverse("training-job-detail", args=["team-cv", "mpijob", "whisper-asr-eval"])
    body = alice.get(url, {"tab": "logs"}).content.decode()
    assert "This job is suspended" in body
    assert "<pre" not in body


def test_it_explains_why_workers_wait(alice):
    url = reverse("training-job-detail", args=["team-cv", "mpijob", "vit-huge-pretrain"])
    body = alice.get(url).content.decode()
    # the Status card says the diagnosis' story, not another one (odh/training/diagnosis/story.py)
    story = re.search(r'<p class="dash-step-large[^"]*" id="job-story-[^"]*">(.*?)</p>', body,
                      re.S).group(1)
    assert "This job can never start: each Worker asks for 12 GPUs and no node has that many" \
        in story
    row = re.search(r'<tr id="replica-vit-huge-pretrain-worker-0".*?</tr>', body, re.S).group(0)
    assert "Unschedulable" in row
    # the scheduler's reason is text on the page, not only a tooltip
    visible = re.sub(r'title="[^"]*"', "", row)
    assert "Insufficient nvidia.com/gpu" in visible


def test_it_shows_the_events_of_pods_already_removed(alice):
    # gpt2-finetune's launcher and healthy workers were cleaned up when it failed
    body = alice.get(GPT2, {"tab": "events"}).content.decode()
    assert "Pod/gpt2-finetune-worker-0" in body
    assert re.search(r"Pod/gpt2-finetune-launcher-[a-z0-9]{5}", body)


def test_it_shows_the_configuration_in_the_usual_order(alice):
    body = alice.get(GPT2, {"tab": "configuration"}).content.decode()
    top_level = re.findall(r"^(\w+):", html.unescape(_pre(body, "job-yaml")), re.M)
    assert top_level[:4] == ["apiVersion", "kind", "metadata", "spec"]


def test_it_never_lets_an_address_steer_the_api_request_elsewhere(alice):
    for url in ("/jobs/team-nlp/mpijob/%2E%2E/", "/jobs/team-nlp/mpijob/./",
                "/jobs/%2E%2E/mpijob/gpt2-finetune/", "/jobs/team-nlp/mpijob/..%2Fpytorchjobs/",
                "/jobs/team-nlp/mpijob/%2E%2E/export/?format=json"):
        assert alice.get(url).status_code == 404, url
    assert alice.post("/jobs/team-nlp/mpijob/%2E%2E/delete/").status_code == 404


def test_the_window_title_names_the_tab(alice):
    page = alice.get(GPT2, {"tab": "events"}).content.decode()
    assert re.search(r"<title>Events · gpt2-finetune · [^<]+</title>", page)
    # a tab fetched alone (htmx) brings its title along
    tab = alice.get(GPT2, {"tab": "logs"}, HTTP_HX_REQUEST="true").content.decode()
    assert re.search(r"<title>Logs · gpt2-finetune · [^<]+</title>", tab)


def test_the_tab_strip_has_its_scroll_cues_hidden_from_screen_readers(alice):
    """On a phone the tabs scroll sideways: a cue on each side (shown by static/js/dashboard.js
    where tabs are hidden) is decoration, out of the accessibility tree and the tab order; the
    strip comes with a tab fetched alone (htmx) too."""
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        body = alice.get(BERT, {"tab": "metrics"}, **headers).content.decode()
        nav = re.search(r'<nav class="pf-v6-c-tabs dash-tabs" aria-label="Job details">(.*?)</nav>',
                        body, re.S)
        assert nav, "no tab strip"
        cues = re.findall(r'<span class="dash-tabs__cue [^"]+"([^>]*)>', nav.group(1))
        assert cues == [' aria-hidden="true"'] * 2
        assert "tabindex" not in "".join(cues)
