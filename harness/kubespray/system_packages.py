"""What kubespray's system_packages role installs on a lab guest, read from the checkout.

roles/system_packages/vars/main.yml (kubespray v2.31.0, master 46dbdd39) maps each package
to a list of conditions that must all hold (`pkgs | dict2items | selectattr('value',
'ansible.builtin.all')`, roles/system_packages/tasks/main.yml); the role installs them with
`update_cache: true` under `pkg_install_timeout`. A lab guest has no apt mirror, so the
guest image must already hold every one (images/kubespray/packages.txt), and the preflight
names any it lacks before a machine exists: a newer checkout that wants another package
says so instead of failing its apt task half an hour into a play.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError
from . import inventory
from .downloads import DEFAULTS_FILE, GUEST_FACTS
from .template import Scope, TemplateError, load_yaml

VARS = "roles/system_packages/vars/main.yml"
# Ansible's ansible_distribution_major_version on each suite's guest. sid's os-release has no
# VERSION_ID, so it is no release number; the conditions only compare it with numbers
# (== '12', != '13', in ['11', '12']), which no such value matches.
SUITE_MAJOR = {"bookworm": "12", "trixie": "13", "sid": "n/a"}
# a lab guest is in every group kubespray's conditions ask about: the union over its roles, and
# k8s_cluster, the parent group the inventory makes of them
GROUPS = [*inventory.GROUPS, "k8s_cluster"]


def wanted(checkout: Path, suite: str, settings: Mapping | None = None) -> list[str]:
    """The packages the role installs on a Debian guest of `suite`, with the scenario's variables."""
    source = checkout / VARS
    try:
        table = load_yaml(source.read_text(), str(source)).get("pkgs")
        defaults = load_yaml((checkout / DEFAULTS_FILE).read_text(), str(checkout / DEFAULTS_FILE))
    except (OSError, TemplateError) as exc:
        raise UsageError(f"kubespray's package list: {exc}") from exc
    if not isinstance(table, dict):
        raise UsageError(f"{source}: no `pkgs:` mapping; kubelab cannot tell what kubespray installs")
    major = SUITE_MAJOR[suite]
    facts = {"ansible_os_family": "Debian", "ansible_distribution": "Debian",
             "ansible_distribution_major_version": major, "ansible_distribution_version": major,
             "group_names": GROUPS, "main_access_ip": "<the machine's address>"}
    scope = Scope([defaults, GUEST_FACTS, facts, dict(settings or {})])
    out = []
    for package, conditions in table.items():
        try:
            holds = all(_truth(scope.render(c)) for c in conditions or [])  # all() stops at the first false
        except TemplateError as exc:
            raise UsageError(f"{source}: `{package}`: a condition kubelab cannot evaluate ({exc})") from exc
        if holds:
            out.append(package)
    return out


def _truth(value) -> bool:
    if isinstance(value, str):  # a rendered "{{ x }}" inside a longer string: Ansible's bool filter
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)
