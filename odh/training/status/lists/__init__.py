"""The job list: its filters in the address (listing), the label, user and status
selectors the CLI shares, and the bulk actions on ticked jobs."""
