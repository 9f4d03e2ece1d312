"""Kueue: ClusterQueues, where a queued job stands, when it should start, what the wizard
forecasts, and the administrators' view.
"""
