"""The MPIJob: the kind (kind.py), its spec model (model.py) and its manifest (manifest.py)."""
