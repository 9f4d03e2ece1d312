"""On a cluster without Kubeflow Trainer the wizard's TrainJob card says so and offers no
button; a TrainJob asked for anyway is refused with the same sentence."""

from __future__ import annotations

import html

import pytest

from tests.integration.dashboard.wizard.wizard_flow import NEW
from training.models import WizardDraft


@pytest.fixture(scope="module")
def demo_cluster(no_trainer_cluster):
    return no_trainer_cluster


def test_the_trainjob_card_says_the_cluster_does_not_serve_the_trainer(alice):
    page = html.unescape(alice.get(NEW).content.decode())
    assert ("This cluster does not serve Kubeflow Trainer (trainer.kubeflow.org), so "
            "TrainJobs cannot be created here") in page
    assert 'value="trainjob"' not in page
    r = alice.post(NEW, {"start": "trainjob"}, follow=True)
    assert "does not serve the TrainJob API (trainer.kubeflow.org/v1alpha1)" in \
        html.unescape(r.content.decode())
    assert not WizardDraft.objects.exists()
