"""Numbers across many jobs, for the pages that sum them up: the administrators' cluster
and queues overviews, each project's use, success rates, and the dashboard's own /metrics.
"""
