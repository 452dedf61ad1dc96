"""Lab networks and cluster ranges: what a network or range may be, and the lint that
warns when the lab's network lies inside the cluster's pod or Service range."""

from __future__ import annotations

from ..model import InstallDef, LabDef
from .checker import Checker


def overlap_warnings(c: Checker, lab: LabDef, install: InstallDef, recover=()) -> list[str]:
    """A lab network inside the cluster's pod or Service range: almost always a mistake
    (node addresses routed as pods or Services), so said before anything is created.
    A rebuild's ranges are held to it always: a rebuild is how an overlap is undone."""
    import ipaddress

    if not lab.network or not install.installs_kubernetes:
        return []
    out = []
    net = ipaddress.ip_network(lab.network)
    ranges = [] if lab.overlap == "intended" else [
        (("lab", "network"), "install", "pod_cidr", install.pod_cidr),
        (("lab", "network"), "install", "service_cidr", install.service_cidr)]
    for i, s in enumerate(recover):
        ranges += [(("recover", i, "reinstall", key), f"recover[{i}].reinstall", key, cidr)
                   for key, cidr in s.networks.items()]
    for where, owner, key, cidr in ranges:
        if net.overlaps(ipaddress.ip_network(cidr)):
            file, line = c.src.where(where)
            what = "pod" if key == "pod_cidr" else "Service"
            hint = ("choose a range outside it" if owner != "install"
                    else "if that is the point, declare it with `lab: {overlap: intended}`")
            out.append(f"{file}:{line}: lab.network: {lab.network} overlaps {owner}.{key} {cidr}: the nodes' "
                       f"addresses lie in the cluster's {what} range; {hint}")
    return out


def is_cidr(value) -> bool:
    import ipaddress

    try:
        return isinstance(value, str) and ipaddress.ip_network(value, strict=True).version == 4
    except ValueError:
        return False


def network_problem(value) -> str:
    import ipaddress

    try:
        net = ipaddress.ip_network(str(value), strict=True)
    except ValueError:
        return "a network like 192.168.150.0/24 (address/prefix, host bits zero)"
    if net.version != 4 or net.prefixlen != 24 or not net.is_private:
        return "a private IPv4 /24, like 10.244.1.0/24"
    return ""
