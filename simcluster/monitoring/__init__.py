"""The cluster as Prometheus sees it: the query API (prometheus.py) and its PromQL, the
series computed from pod lifetimes (metrics_*.py), a Pushgateway, and the API server's own
request metrics."""
