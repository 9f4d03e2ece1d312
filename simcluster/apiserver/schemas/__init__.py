"""The structural schemas of the custom resources and how the API server enforces them
(structural.py): pruning, Strict and Warn field validation, defaults."""
