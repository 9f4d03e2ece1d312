"""A job's charts from Prometheus (PromQL, series) and the numbers the dashboard reports on its
own /metrics.
"""
