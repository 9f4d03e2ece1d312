"""The dashboard's own metrics for Prometheus (/metrics): the exposition, who may read it, and
the collectors read at scrape time.
"""
