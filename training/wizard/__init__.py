"""The create-job wizard's state and checks: forms, drafts, what it says about a project, and
the Kueue queue step. The views are in training/views/wizard/.
"""
