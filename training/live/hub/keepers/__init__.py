"""What the watcher keeps and does with what the hub sees, each on a thread of its own:
the transitions recorded once (and the job history), the training curves, the diagnosis
evidence, the Workers' use, the early warnings, the notifications delivered and the
automatic retries."""
