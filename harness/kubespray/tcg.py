"""The kubeadm track's TCG allowances (harness/tuning.py), said in kubespray's own variables.

Only under TCG: under KVM this gives nothing, and kubespray runs with its defaults. Variable
names and where kubespray reads them, as of kubespray master 46dbdd39 (v2.31.0-96):

    kube_controller_manager_leader_elect_lease_duration / _renew_deadline
        kubernetes/control-plane/templates/kubeadm-config.v1beta4.yaml.j2 (controller-manager extraArgs)
    kube_kubeadm_controller_extra_args            the same template: further controller-manager flags
    kube_scheduler_leader_elect_lease_duration / _renew_deadline, kube_scheduler_leader_elect_extra_opts
        kubernetes/control-plane/templates/kubescheduler-config.yaml.j2 (leaderElection)
    etcd_heartbeat_interval, etcd_election_timeout, etcd_extra_vars
        etcd/templates/etcd.env.j2 (kubespray's default etcd_deployment_type `host`: ETCD_* variables)
    kube_asymmetric_encryption_algorithm          kubeadm-config.v1beta4.yaml.j2 (encryptionAlgorithm)
    kubeadm_patches                               kubernetes/kubeadm_common/tasks/main.yml: each
                                                  {target, type, patch} written as a kubeadm patch file
    kubelet_custom_flags                          kubernetes/node/templates/kubelet.env.v1beta1.j2

Not said, because kubespray has no variable for them: kubeadm's own timeouts (its
kubeadm-config template writes no `timeouts:`), the Go runtime settings of containerd and the
kubelet, and CoreDNS's probes (kubespray deploys its own CoreDNS, not kubeadm's addon).
"""

from __future__ import annotations

import yaml

# kubespray only copies patches for these targets (kubeadm_common's pattern); its etcd runs on the host
PATCH_TARGETS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


def variables(tuned) -> dict:
    """kubespray's variables for the acceleration `tuned` decided; empty under KVM."""
    if not tuned.is_tcg:
        return {}
    le, etcd = tuned.leader_election, tuned.etcd_args
    patches = []
    for name, content in sorted(tuned.static_pod_patches.items()):
        target, _, kind = name.removesuffix(".yaml").partition("+")
        if target in PATCH_TARGETS:
            patches.append({"target": target, "type": kind or "strategic", "patch": yaml.safe_load(content)})
    return {
        "kube_controller_manager_leader_elect_lease_duration": le["leader-elect-lease-duration"],
        "kube_controller_manager_leader_elect_renew_deadline": le["leader-elect-renew-deadline"],
        "kube_kubeadm_controller_extra_args": {"leader-elect-retry-period": le["leader-elect-retry-period"]},
        "kube_scheduler_leader_elect_lease_duration": le["leader-elect-lease-duration"],
        "kube_scheduler_leader_elect_renew_deadline": le["leader-elect-renew-deadline"],
        "kube_scheduler_leader_elect_extra_opts": {"retryPeriod": le["leader-elect-retry-period"]},
        "etcd_heartbeat_interval": etcd["heartbeat-interval"],
        "etcd_election_timeout": etcd["election-timeout"],
        "etcd_extra_vars": {"ETCD_UNSAFE_NO_FSYNC": etcd["unsafe-no-fsync"]},
        "kube_asymmetric_encryption_algorithm": tuned.encryption_algorithm,
        "kubeadm_patches": patches,
        "kubelet_custom_flags": [f"--{k}={v}" for k, v in sorted(tuned.kubelet_args.items())],
    }
