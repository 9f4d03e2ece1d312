"""Where a job is and why: the status summary, its one-line story, pods, waiting, topology,
events as a timeline, the index and history of jobs, lists and comparisons.
"""
