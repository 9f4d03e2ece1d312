"""The rules that read the facts: why a job failed (`failures`), waits (`pending`) or runs
unwell (`running`), each cause with its evidence and fixes; `netpol` reads the
NetworkPolicies that can cut MPI traffic."""
