"""What runs on the nodes: the kubelet and the stages a pod goes through, images, logs,
volumes, the network, and the simulated workloads (training programs, their checkpoints
and event files)."""
