"""Talking to a Kubernetes API server with one person's credentials: the client, watches,
queries, access reviews, events, leader election.
"""
