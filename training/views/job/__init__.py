"""One job's pages: its tabs (Overview, Logs, Events, Diagnosis, Artifacts, TensorBoard;
the Metrics tab is in training.views.metrics), its history record and its retries."""
