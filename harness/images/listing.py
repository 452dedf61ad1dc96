"""What `images.list` shows: each built image with the versions its manifest records, and
whether it is stale (its recipe, base image or build changed since)."""

from __future__ import annotations

import json

from . import store


def render(json_: bool = False) -> str:
    images = store.all_images()
    if json_:
        return json.dumps([i.manifest for i in images], indent=2)
    if not images:
        return "no images yet: `invoke images.build --suite bookworm`"
    from .prune import current_suite_images

    current = current_suite_images()
    return "\n".join(describe(image, current) for image in images)


def describe(image: store.Image, current: set[str]) -> str:
    v, m = image.versions, image.manifest
    made = f"{m['built_at']} in {m['build_seconds']}s  {image.directory}"
    kube = m.get("kubernetes")
    if kube:
        return (f"{image.id}  (node image on {m['base_image']})\n  kubeadm {kube['kubeadm']}, "
                f"kubelet {kube['kubelet']}, kubectl {kube['kubectl']}, {kube['crictl']}, "
                f"CNI plugins {kube['cni_plugins']}; preloaded {len(m['preloaded'])} image(s)\n  built {made}")
    built = m.get("containerd_build")
    if built:
        from .containerd_image import is_current

        stale = "" if is_current(image) else "  (stale: suite image or containerd build changed)"
        return (f"{image.id}{stale}  (on {m['base_image']})\n  containerd {built['version']} built "
                f"from {built['module']} over Debian's {built['debian_package']}, runc {v['runc']}\n  made {made}")
    stale = "" if image.id in current else "  (stale: recipe changed)"
    return (f"{image.id}{stale}\n  {v['os']} ({v['debian_version']}), kernel {v['kernel']}, "
            f"containerd {v['containerd']}, runc {v['runc']}, systemd {v['systemd']}\n  built {made}")
