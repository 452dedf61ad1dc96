"""A small tree in the layout of a kubespray checkout, written for the tests.

Its variables and versions are made up (Kubernetes 1.40.x, a fictional
"widget" CNI) in the format kubelab reads; nothing here comes from kubespray.
"""

from pathlib import Path

ANSIBLE_VERSION = """\
---
- name: Gate the controller
  hosts: all
  gather_facts: false
  vars:
    minimal_ansible_version: 2.20.0
    maximal_ansible_version: 2.21.0
  tasks:
    - name: Check
      assert:
        that: ansible_version.string is version(minimal_ansible_version, ">=")
"""

ANSIBLE_CFG = """\
[ssh_connection]
pipelining=True
ssh_args = -o ControlMaster=auto -o ControlPersist=5m -o UserKnownHostsFile=/dev/null -oStrictHostKeyChecking=no
#control_path = ~/.ssh/x-%%r@%%h
[defaults]
host_key_checking=False
"""

DEFAULTS = """\
---
kube_version: "{{ (kubelet_checksums['amd64'] | dict2items)[0].key }}"
container_manager: containerd
kube_network_plugin: widget
dns_mode: coredns
etcd_deployment_type: host
kube_proxy_mode: iptables
gizmo_enabled: false
"""

ROLE_VARS = """\
---
kube_major_version: "{{ (kube_version | split('.'))[:-1] | join('.') }}"
kube_next: "{{ ((kube_version | split('.'))[1] | int) + 1 }}"
kube_major_next_version: "1.{{ kube_next }}"
pause_by_minor:
  '1.40': '9.1'
  '1.39': '9.0'
"""

DOWNLOAD = """\
---
image_arch: "{{ host_architecture | default('amd64') }}"
github_url: https://github.com
dl_k8s_io_url: https://dl.k8s.io
kube_image_repo: "registry.k8s.io"
docker_image_repo: "docker.io"
kubeadm_image_repo: "{{ kube_image_repo }}"
runc_version: "{{ (runc_checksums['amd64'] | dict2items)[0].key }}"
crictl_version: "{{ (crictl_checksums['amd64'].keys() | select('version', kube_major_next_version, '<'))[0] }}"
widget_version: 0.9.1
containerd_version: 2.3.4
pause_version: "{{ pause_by_minor[kube_major_version] }}"
kubeadm_download_url: "{{ dl_k8s_io_url }}/release/v{{ kube_version }}/bin/linux/{{ image_arch }}/kubeadm"
runc_download_url: "{{ github_url }}/example/runc/releases/download/v{{ runc_version }}/runc.{{ image_arch }}"
crictl_download_url: "{{ github_url }}/example/crictl/v{{ crictl_version }}/crictl-{{ ansible_facts['system'] | lower }}.tgz"
kubeadm_binary_checksum: "{{ kubeadm_checksums[image_arch][kube_version] }}"
runc_binary_checksum: "{{ runc_checksums[image_arch][runc_version] }}"
crictl_binary_checksum: "{{ crictl_checksums[image_arch][crictl_version] }}"
widget_image_repo: "{{ docker_image_repo }}/example/widget"
widget_image_tag: "v{{ widget_version }}"
pause_image_repo: "{{ kube_image_repo }}{{ '/pause' if pause_version is version('9.0', '>=') else '/old-pause' }}"

downloads:
  kubeadm:
    enabled: true
    file: true
    url: "{{ kubeadm_download_url }}"
    checksum: "{{ kubeadm_binary_checksum }}"
    groups:
      - k8s_cluster
  runc:
    file: true
    enabled: "{{ container_manager == 'containerd' }}"
    url: "{{ runc_download_url }}"
    checksum: "{{ runc_binary_checksum }}"
    groups:
      - k8s_cluster
  crictl:
    file: true
    enabled: true
    url: "{{ crictl_download_url }}"
    checksum: "{{ crictl_binary_checksum }}"
    groups:
      - k8s_cluster
  gizmo:
    file: true
    enabled: "{{ gizmo_enabled }}"
    url: "{{ a_variable_nobody_defines }}/gizmo"
    groups:
      - kube_node
  widget:
    enabled: "{{ kube_network_plugin == 'widget' }}"
    container: true
    repo: "{{ widget_image_repo }}"
    tag: "{{ widget_image_tag }}"
    checksum: "{{ widget_digest_checksum | default(None) }}"
    groups:
      - k8s_cluster
  crds:
    file: true
    enabled: "{{ kube_network_plugin == 'gadget' }}"
    url: "{{ github_url }}/example/widget/raw/v{{ widget_version }}/crds.yaml"
    checksum: "{{ widget_crds_checksums.no_arch[widget_version] }}"
    groups:
      - kube_control_plane
  pause:
    enabled: true
    container: true
    repo: "{{ pause_image_repo }}"
    tag: "{{ pause_version }}"
    groups:
      - k8s_cluster
"""

SHA = {name: (name * 64)[:64] for name in ("a", "b", "c", "d", "e", "f")}

# roles/system_packages/vars/main.yml in kubespray's form (each package: conditions that must all hold)
SYSTEM_PACKAGES = """---
pkgs:
  curl: []
  python3-apt:
    - "{{ ansible_os_family == 'Debian' }}"
  gadget-tools:
    - "{{ ansible_distribution_major_version == '12' }}"
    - "{{ 'k8s_cluster' in group_names }}"
  widget-proxy:
    - "{{ kube_proxy_mode == 'widget' }}"
  suse-only:
    - "{{ ansible_os_family == 'Suse' and ansible_distribution_version is version('15.4', '<') }}"
"""


def checksums() -> str:
    rows = {
        "kubelet_checksums": ["1.40.1", "1.40.0", "1.39.5"],
        "kubectl_checksums": ["1.40.1", "1.40.0", "1.39.5"],
        "kubeadm_checksums": ["1.40.1", "1.40.0", "1.39.5", "1.38.0"],
        "runc_checksums": ["2.1.0", "2.0.9"],
        "crictl_checksums": ["1.41.0", "1.40.0", "1.39.0"],
    }
    out = ["---"]
    for i, (table, versions) in enumerate(rows.items()):
        out += [f"{table}:", "  arm64:", f"    {versions[0]}: sha256:{'0' * 64}", "  amd64:"]
        out += [f"    {v}: sha256:{SHA['abcdef'[(i + j) % 6]]}" for j, v in enumerate(versions)]
    # a file that is the same on every architecture (kubespray's calico_crds_checksums)
    out += ["widget_crds_checksums:", "  no_arch:", f"    0.9.1: sha256:{SHA['d']}", f"    0.9.0: sha256:{SHA['e']}"]
    return "\n".join(out) + "\n"


def write(root: Path, omit: tuple[str, ...] = ()) -> Path:
    files = {
        "cluster.yml": "---\n- name: Install\n  hosts: all\n",
        "ansible.cfg": ANSIBLE_CFG,
        "requirements.txt": "ansible-core==2.20.3\n",
        "galaxy.yml": "namespace: example\nname: kubespray\nversion: 9.8.7\n",
        "playbooks/ansible_version.yml": ANSIBLE_VERSION,
        "roles/kubespray_defaults/defaults/main/download.yml": DOWNLOAD,
        "roles/kubespray_defaults/defaults/main/main.yml": DEFAULTS,
        "roles/kubespray_defaults/vars/main/checksums.yml": checksums(),
        "roles/kubespray_defaults/vars/main/main.yml": ROLE_VARS,
        "roles/system_packages/vars/main.yml": SYSTEM_PACKAGES,
    }
    for rel, text in files.items():
        if rel in omit or any(rel.startswith(o + "/") for o in omit):
            continue
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return root
