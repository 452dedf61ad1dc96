"""Servers kubelab runs on the host for a lab: the image registry and the file server."""
