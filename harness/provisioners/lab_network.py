"""What every install track must give a lab guest because it has no default route.

Lab networks have no `<forward>` and guests no default route (the lab stays off the
outside). Two things upstream assumes then fail on a node, whichever tool installs it:

- A node's own connection to a cluster IP (flannel and kube-proxy reach the API at
  10.96.0.1) is routed before kube-proxy's DNAT or IPVS rewrites it, so without a route
  it fails at once: "Network is unreachable" (measured: flannel crash-looped on
  `dial tcp 10.96.0.1:443`, under kubeadm and under kubespray alike). A link route for
  the Service range gives that first lookup an answer; kube-proxy's rules send the
  packet on to a real endpoint. Persisted as a systemd-networkd drop-in.
- flanneld picks the default route's interface unless told one (flannel/flannel.py).
"""

from __future__ import annotations

# The guests' one NIC: images boot with net.ifnames=0 (harness/images/build.py).
LAB_NIC = "eth0"

SERVICE_ROUTE_DROPIN = "/etc/systemd/network/20-dhcp.network.d/kubelab-service-route.conf"
SERVICE_ROUTE_NOTE = "no default route: a cluster IP needs a route before kube-proxy's DNAT"


def service_route_commands(service_cidr: str) -> list[str]:
    return [f"ip route replace {service_cidr} dev {LAB_NIC}",
            f"mkdir -p {SERVICE_ROUTE_DROPIN.rsplit('/', 1)[0]} && "
            f"printf '[Route]\\nDestination={service_cidr}\\nScope=link\\n' > {SERVICE_ROUTE_DROPIN}"]
