"""A person's own pages: signing in and out, preferences, notifications."""
