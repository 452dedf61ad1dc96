"""Install tracks: how Kubernetes gets onto a lab's machines, as plan steps."""
