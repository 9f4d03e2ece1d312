"""The Metrics tab and its data (Prometheus' charts, the training curves, the downloads),
the Prometheus pass-through and the comparison of runs."""
