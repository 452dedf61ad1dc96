"""Machine backends: create, list, snapshot and destroy lab machines."""
