"""Who the person is: OpenShift OAuth sign-in and their encrypted token in the session.
"""
