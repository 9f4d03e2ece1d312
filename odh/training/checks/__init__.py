"""The rules a spec is checked by before it is created: names, images, sizes, the pods'
surroundings. `odh.training.validation` runs them.
"""
