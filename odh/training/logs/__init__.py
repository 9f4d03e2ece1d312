"""Job logs: one upstream stream per pod shared by every viewer, a person's own reading for the
SDK and CLI, and the training progress read from them.
"""
