"""What several jobs at once means (odh.training.status.lists.bulk): the jobs named, what each
action needs, the result of each in words."""

from __future__ import annotations

from odh.training.status.lists import bulk


def test_jobs_are_named_once_each_and_what_names_no_job_is_set_apart():
    jobs, unreadable = bulk.parse_refs([
        "team-nlp/mpijob/bert", "team-nlp/mpijob/bert", "research/pytorchjob/ddp",
        "team-nlp/nosuchkind/x", "Bad_NS/mpijob/x", "just-a-name", "team-nlp/mpijob/"])
    assert [j.ref for j in jobs] == ["team-nlp/mpijob/bert", "research/pytorchjob/ddp"]
    assert jobs[1].kind.label == "PyTorchJob"
    assert unreadable == ["team-nlp/nosuchkind/x", "Bad_NS/mpijob/x", "just-a-name",
                          "team-nlp/mpijob/"]


def test_suspend_and_resume_need_update_and_delete_needs_delete():
    assert bulk.Action("suspend").needs == "update"
    assert bulk.Action("resume").needs == "update"
    assert bulk.Action("delete").needs == "delete"


def test_a_job_left_alone_says_why():
    (job,), _ = bulk.parse_refs(["research/mpijob/bert"])
    assert bulk.not_allowed_text(bulk.Action.SUSPEND, job, visible=False) == (
        "Not changed: you have no access to the project “research”.")
    assert bulk.not_allowed_text(bulk.Action.RESUME, job, visible=True) == (
        "Not changed: you may view but not change MPIJobs in “research”.")
    assert bulk.not_allowed_text(bulk.Action.DELETE, job, visible=True) == (
        "Not deleted: you may not delete MPIJobs in “research”.")


def test_the_summary_counts_each_outcome():
    (a, b, c), _ = bulk.parse_refs(["p/mpijob/a", "p/mpijob/b", "p/mpijob/c"])
    results = [bulk.Result(a, bulk.Outcome.DONE, ""), bulk.Result(b, bulk.Outcome.REFUSED, ""),
               bulk.Result(c, bulk.Outcome.DONE, "")]
    assert bulk.summary(results) == "2 jobs done, 1 refused"
    assert bulk.summary(results[1:2]) == "1 refused"
