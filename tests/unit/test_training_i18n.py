"""odh's translatable text: identity by default, the host's translator once installed."""

from __future__ import annotations

import pytest

from odh.training import MPIJobSpec, i18n
from odh.training.capacity.fit import check_fit
from odh.training.validation import validate_spec


@pytest.fixture(autouse=True)
def installed_translator():
    """Each test's translator goes again afterwards: the Django pages tested later in the
    same process translate with Django's."""
    before = (i18n._translate, i18n._translate_plural)
    yield
    i18n.set_translator(*before)


def test_identity_by_default():
    assert i18n._("Completed") == "Completed"
    assert i18n.ngettext("%(count)d worker", "%(count)d workers", 1) == "%(count)d worker"
    assert i18n.ngettext("%(count)d worker", "%(count)d workers", 3) == "%(count)d workers"


def test_messages_go_through_the_installed_translator():
    seen = []

    def translate(message: str) -> str:
        seen.append(message)
        return message.replace("Enter", "Gib")

    i18n.set_translator(translate)
    found = validate_spec(MPIJobSpec(namespace="team-nlp", image="x:1", command=["x"]))
    assert found[0].message == 'Gib a job name, for example "bert-finetune".'
    assert "Enter a job name, for example \"%(example)s\"." in seen
    text = check_fit(MPIJobSpec(workers=3), [], [], [], "ns").totals.text()
    assert "%(count)d workers" in seen and text.startswith("3 workers")


def test_a_plural_translator_is_used_for_counts():
    i18n.set_translator(lambda m: m, lambda s, p, n: f"[{n}] " + (s if n == 1 else p))
    assert i18n.ngettext("%(count)d GPU", "%(count)d GPUs", 2) == "[2] %(count)d GPUs"


def test_a_jobs_step_is_made_once_and_said_in_each_viewers_language():
    """The watch hub summarizes a job once for every viewer: its step is translated when
    shown, not when made (a French page once said the hub's English)."""
    import pickle

    from odh.training.status.summarize import summarize
    from tests.unit.training_objects import mpijob

    summary = summarize(mpijob(), [], [])  # made in no language at all
    assert str(summary.lifecycle_step) == "Waiting for the MPI Operator"
    french = {"Waiting for the MPI Operator": "En attente du MPI Operator",
              "%(step)s (%(why)s)": "%(step)s [%(why)s]"}
    i18n.set_translator(lambda m: french.get(m, m))
    assert str(summary.lifecycle_step) == "En attente du MPI Operator"
    assert f"{summary.lifecycle_step}" == "En attente du MPI Operator"
    # nested: the outer sentence and the inner step each in the language shown
    nested = i18n.gettext_lazy("%(step)s (%(why)s)", step=summary.lifecycle_step, why="x")
    assert str(nested) == "En attente du MPI Operator [x]"
    # kept in a cache as what it is, not as one language's words
    assert pickle.loads(pickle.dumps(nested)) == nested  # noqa: S301 (our own bytes)
    assert nested.startswith("En attente")  # reads as a str would


def test_a_diagnosis_names_the_pods_in_the_readers_language():
    """A headline made while a Japanese page is read names the Worker in Japanese (the hub's
    and the cards' headlines once kept "Launcher" and "Worker 1" in English)."""
    from odh.training.diagnosis import diagnose
    from tests.unit.diagnosis_objects import (
        facts,
        failed_job,
        failed_launcher,
        tail,
        worker,
    )

    pods = [failed_launcher("llama"), worker("llama", 0), worker("llama", 1)]
    log = tail(pods[0], ["[1,1]<stderr>:torch.OutOfMemoryError: CUDA out of memory. Tried "
                         "to allocate 12.00 GiB."])
    japanese = {"Worker": "ワーカー", "Launcher": "ランチャー",
                "%(pod)s ran out of GPU memory (CUDA out of memory)":
                    "%(pod)s の GPU メモリが不足しました"}
    i18n.set_translator(lambda m: japanese.get(m, m))
    found = diagnose(facts(failed_job("llama", workers=2), pods, logs=[log]))
    assert found.headline == "ワーカー 1 の GPU メモリが不足しました"
    assert found.affected_labels == ["ワーカー 1"]
