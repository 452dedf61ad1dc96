"""OCI images without a daemon: layers as tar files, written as an OCI image layout."""
