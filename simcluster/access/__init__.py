"""Who may do what: authentication and authorisation, the OAuth server, the certificates,
aggregated cluster roles."""
