"""What every install track must give a lab guest because it has no default route.

Lab networks have no `<forward>` and guests no default route (the lab stays off the
outside). Two things upstream assumes then fail on a node, whichever tool installs it:

- A node's own connection to a cluster IP (flannel and kube-proxy reach the API at
  10.96.0.1) is routed before kube-proxy's DNAT or IPVS rewrites it, so without a route
  it fails at once: "Network is unreachable" (measured: flannel crash-looped on
  `dial tcp 10.96.0.1:443`, under kubeadm and under kubespray alike). A link route for
  the Service range gives that first lookup an answer; kube-proxy's rules send the
  packet on to a real endpoint. Persisted as a systemd-networkd drop-in.
- A pod network may route pods through an address only the node's proxy ARP answers,
  which Linux does only for an address it has a route to (calico's 169.254.1.1: cni/calico.py).
  Each CNI names those (cni/base.py node_routes); they get a link route too.
- flanneld picks the default route's interface unless told one (flannel/flannel.py).
"""

from __future__ import annotations

# The guests' one NIC: images boot with net.ifnames=0 (harness/images/build.py).
LAB_NIC = "eth0"

SERVICE_ROUTE_DROPIN = "/etc/systemd/network/20-dhcp.network.d/kubelab-service-route.conf"
SERVICE_ROUTE_NOTE = "no default route: a cluster IP needs a route before kube-proxy's DNAT"
GATEWAY_ROUTE_NOTE = "no default route: the node proxy-ARPs its pods' gateway only if it has a route to it"


def node_route_steps(service_cidr: str, cni_routes: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """(step name, command, note): a link route for the Service range and for each address the
    pod network needs, now and in a systemd-networkd drop-in read at every boot."""
    out = [("route to the Service network", f"ip route replace {service_cidr} dev {LAB_NIC}", SERVICE_ROUTE_NOTE)]
    out += [("route to the pod gateway", f"ip route replace {d} dev {LAB_NIC}", GATEWAY_ROUTE_NOTE)
            for d in cni_routes]
    sections = "\\n".join(f"[Route]\\nDestination={d}\\nScope=link\\n" for d in (service_cidr, *cni_routes))
    out.append(("routes kept across reboots", f"mkdir -p {SERVICE_ROUTE_DROPIN.rsplit('/', 1)[0]} && "
                f"printf '{sections}' > {SERVICE_ROUTE_DROPIN}", "a systemd-networkd drop-in"))
    return out
