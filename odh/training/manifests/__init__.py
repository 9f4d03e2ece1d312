"""The spec model of a job as people describe it, and the manifests built from it and read
back: imported, exported, templated, shown as SDK code.
"""
