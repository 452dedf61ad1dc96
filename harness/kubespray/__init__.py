"""The kubespray track's groundwork: a user's kubespray checkout, its Python venv,
what it would download, the inventory and the ansible-playbook command for a lab.

Nothing here runs a play or touches a machine; the engine does not use it yet.
kubespray is never part of kubelab: everything is read from the user's checkout.
"""
