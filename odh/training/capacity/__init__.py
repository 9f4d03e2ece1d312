"""What the cluster and a project have room for: allocation, quotas, LimitRanges, nodes, the
wizard's fit check and preflight.
"""
