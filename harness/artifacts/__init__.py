"""Kubernetes from source: Go builds into a content-addressed store, the kit's OCI images."""
