"""The API server: routing and verbs (api.py), decoding, discovery and OpenAPI schemas,
patches, selectors, the store and its watches, table output, virtual resources and
admission."""
