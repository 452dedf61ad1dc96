"""kubelab: reproducible Kubernetes installation labs on libvirt guests."""
