"""The MPI Operator (v2beta1): the controller, the objects it makes, the status it
writes, the validation of an MPIJob."""
