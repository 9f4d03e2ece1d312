from __future__ import annotations

from django.urls import path
from django.views.generic import RedirectView

from training.views import assets, bulk, health, help, job_list, wizard
from training.views.account import auth, notifications, preferences
from training.views.cluster import (
    audit_trail,
    costs,
    project,
    queues,
    quota_admin,
    workload_priority,
)
from training.views.cluster import overview as cluster
from training.views.job import artifacts, diagnosis, history, jobs, logs, tensorboard
from training.views.metrics import compare, prometheus
from training.views.metrics import export as metrics_export
from training.views.metrics import tab as metrics

JOB = "jobs/<str:project>/<str:kind>/<str:name>/"
NEW = "jobs/new/<uuid:key>/"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="training-job-list"), name="training-home"),
    path("healthz", health.healthz, name="training-healthz"),
    path("readyz", health.readyz, name="training-readyz"),
    path("metrics", prometheus.metrics, name="training-metrics"),
    path("assets/plotly.css", assets.plotly_css, name="training-plotly-css"),
    path("oauth/login/", auth.login_view, name="training-login"),
    path("oauth/callback/", auth.callback, name="training-oauth-callback"),
    path("oauth/logout/", auth.logout_view, name="training-logout"),
    path("signed-out/", auth.signed_out, name="training-signed-out"),
    # the user menu: language (Django's set_language) and colour theme
    path("preferences/language/", preferences.set_language, name="training-set-language"),
    path("preferences/theme/", preferences.set_theme, name="training-set-theme"),
    # subscriptions to job transitions and their deliveries (the user menu's "Notifications")
    path("notifications/", notifications.notification_settings, name="training-notifications"),
    path("notifications/read/", notifications.notices_read, name="training-notices-read"),
    path("notifications/<int:pk>/delete/", notifications.notification_delete,
         name="training-notification-delete"),
    path("notifications/<int:pk>/test/", notifications.notification_test,
         name="training-notification-test"),
    path("jobs/", job_list.job_list, name="training-job-list"),
    path("jobs/compare/", compare.job_compare, name="training-job-compare"),
    # several ticked jobs at once: suspend, resume, delete (one confirmation), export
    path("jobs/bulk/", bulk.job_bulk, name="training-job-bulk"),
    path("jobs/bulk/export/", bulk.job_bulk_export, name="training-job-bulk-export"),
    # a project's own page, for whoever may list its jobs
    path("projects/<str:project>/", project.project_page, name="training-project"),
    # the troubleshooting guide (docs/troubleshooting/), linked from every diagnosis
    path("help/troubleshooting/", help.guide_index, name="training-help"),
    path("help/troubleshooting/<slug:slug>/", help.guide_page, name="training-help-page"),
    # cluster administrators: the overview and the audit trail
    path("cluster/", cluster.cluster_overview, name="training-cluster-overview"),
    path("cluster/audit/", audit_trail.audit_trail, name="training-cluster-audit"),
    path("cluster/queues/", queues.cluster_queues, name="training-cluster-queues"),
    # cluster administrators change a project's quota and a queue's nominal quota
    path("cluster/quotas/<str:project>/<str:quota>/", quota_admin.quota_edit,
         name="training-cluster-quota"),
    path("cluster/queues/<str:queue>/quota/", quota_admin.nominal_quota_edit,
         name="training-cluster-queue-quota"),
    path("cluster/workloads/<str:project>/<str:workload>/priority/",
         workload_priority.workload_priority, name="training-cluster-workload-priority"),
    path("cluster/prices/", costs.cluster_prices, name="training-cluster-prices"),
    path("cluster/chargeback.csv", costs.cluster_chargeback_csv,
         name="training-cluster-chargeback"),
    path("cluster/audit/export/", audit_trail.audit_export,
         name="training-cluster-audit-export"),
    # the create-job wizard (before JOB: "jobs/new/<key>/<step>/" would match it too)
    path("jobs/new/", wizard.job_new, name="training-job-new"),
    path(NEW + "validate/", wizard.job_new_validate, name="training-job-new-validate"),
    path(NEW + "check/", wizard.job_new_check, name="training-job-new-check"),
    path(NEW + "fix/", wizard.job_new_fix, name="training-job-new-fix"),
    path(NEW + "advice/", wizard.job_new_advice, name="training-job-new-advice"),
    path(NEW + "make-room/", wizard.job_new_make_room, name="training-job-new-make-room"),
    path(NEW + "create/", wizard.job_new_create, name="training-job-new-create"),
    path(NEW + "yaml/", wizard.job_new_yaml, name="training-job-new-yaml"),
    path(NEW + "template/", wizard.job_new_save_template,
         name="training-job-new-save-template"),
    path(NEW + "<str:step>/", wizard.job_new_step, name="training-job-new-step"),
    path(JOB, jobs.job_detail, name="training-job-detail"),
    path(JOB + "delete/", jobs.job_delete, name="training-job-delete"),
    path(JOB + "suspend/", jobs.job_suspend, name="training-job-suspend"),
    path(JOB + "resume/", jobs.job_resume, name="training-job-resume"),
    path(JOB + "export/", jobs.job_export, name="training-job-export"),
    path(JOB + "notify/", notifications.notify_job, name="training-job-notify"),
    path(JOB + "queue/", jobs.job_queue, name="training-job-queue"),
    path(JOB + "metrics.json", metrics.job_metrics_json, name="training-job-metrics"),
    path(JOB + "metrics.csv", metrics_export.job_metrics_csv,
         name="training-job-metrics-csv"),
    path(JOB + "artifacts/summary/", artifacts.job_artifacts_summary,
         name="training-job-artifacts-summary"),
    path(JOB + "artifacts/download/", artifacts.job_artifact_download,
         name="training-job-artifact-download"),
    # the job's TensorBoard: its state and start, then TensorBoard itself behind the dashboard
    path(JOB + "tensorboard/", tensorboard.job_tensorboard, name="training-job-tensorboard"),
    path(JOB + "tensorboard/p/", tensorboard.job_tensorboard_proxy,
         name="training-job-tensorboard-root"),
    path(JOB + "tensorboard/p/<path:rest>", tensorboard.job_tensorboard_proxy,
         name="training-job-tensorboard-proxy"),
    path(JOB + "curves/", metrics_export.job_training_part, name="training-job-curves"),
    path(JOB + "retry/", wizard.job_retry, name="training-job-retry"),
    path(JOB + "diagnosis/", diagnosis.job_diagnosis, name="training-job-diagnosis"),
    path(JOB + "diagnosis/dismiss/", diagnosis.job_diagnosis_dismiss,
         name="training-job-diagnosis-dismiss"),
    # a finished run's history record (it outlives the job): views/history.py
    path(JOB + "history/<str:uid>/", history.job_history, name="training-job-history"),
    path(JOB + "logs/<str:pod>/download/", logs.job_log_download,
         name="training-job-log-download"),
]
