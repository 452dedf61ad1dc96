"""What makes a Debian guest a Kubernetes node: containerd's config, kubelet's unit, the kit's binaries."""
