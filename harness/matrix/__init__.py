"""The version matrix: cells of (Kubernetes, containerd), run on one host or exported to CI."""
