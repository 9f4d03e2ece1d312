"""The cluster's and the projects' pages: use and quota, costs and chargeback, queues,
quota and priority changes, a project's own page, the audit trail."""
