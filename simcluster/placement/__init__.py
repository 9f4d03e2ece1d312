"""Where and whether pods run: the scheduler, resource arithmetic, ResourceQuotas, and
Kueue (queues, admission of jobs, the visibility API)."""
