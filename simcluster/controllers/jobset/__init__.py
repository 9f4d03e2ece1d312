"""JobSet: the controller, the Jobs it makes, its status."""
