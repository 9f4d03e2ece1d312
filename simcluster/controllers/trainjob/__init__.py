"""Kubeflow Trainer v2: the TrainJob controller, the JobSet it makes from a runtime, its status."""
