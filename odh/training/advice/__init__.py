"""Advice from history (MPIJob-036): what similar past runs of a project used and how
they went, and the size they suggest (`advise.advise`); which runs are similar
(`runs`); the past runs the SDK reads from the cluster (`gather`)."""
