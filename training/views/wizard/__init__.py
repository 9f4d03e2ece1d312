"""The create-job wizard: Job type -> Configuration -> Resources -> Review, then create.

Plain multi-step HTML forms (POST, redirect, GET) that work without JavaScript; htmx adds
field messages as you type, the live resource check and in-place step changes. Input lives
in a `WizardDraft` row (its key is in the URL), so Back, a reload, a failed create and a
trip through sign-in never lose it. Clone and Retry of existing MPIJobs live here too.

Views decide; `training.wizard.drafts` turns text into a spec (`posting` writes a posted
step into it, `changes` a fix); `training.wizard.checks` and
`odh.training` validate, check the fit, build the manifest and the SDK code. The parts:

- `base`: the steps, drafts, ways out of the wizard;
- `render`: a step's page and what each step shows;
- `steps`: starting a job (empty, from a template or an imported manifest) and moving
  between the steps;
- `live`: what htmx asks while a person types (a field's message, the resource check and
  its suggested fixes), and the advice from similar past runs applied;
- `create`: creating the job (its new volume claims first: a claim made for a job that
  then fails to create stays, and the next Create uses it), saving the configuration as a
  template;
- `copies`: Clone and Retry of an existing MPIJob (or of its history record);
- `yamlmode`: the draft edited as its manifest's YAML, read back into the form.
"""

from training.views.wizard.base import DRAFT_MAX_AGE, INPUT_URLS, STEPS, keep_posted_input
from training.views.wizard.copies import job_retry
from training.views.wizard.create import job_new_create, job_new_save_template
from training.views.wizard.live import (
    job_new_advice,
    job_new_check,
    job_new_fix,
    job_new_validate,
)
from training.views.wizard.room import job_new_make_room
from training.views.wizard.steps import IMPORT_MAX_BYTES, import_too_big, job_new, job_new_step
from training.views.wizard.yamlmode import job_new_yaml

__all__ = ["DRAFT_MAX_AGE", "IMPORT_MAX_BYTES", "INPUT_URLS", "STEPS", "import_too_big",
           "job_new", "job_new_advice", "job_new_check", "job_new_create", "job_new_fix",
           "job_new_make_room",
           "job_new_save_template",
           "job_new_step", "job_new_validate", "job_new_yaml", "job_retry",
           "keep_posted_input"]
