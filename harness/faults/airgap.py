"""An air-gapped node with nowhere to pull from: containerd's registry mirrors
moved aside and the images it holds removed, as on a node that never had the lab's
registry configured. The guests have no default route, so every pull fails."""

from ..serve.mirror import CONFIG_PATH
from .base import Fault, check
from .containerd import restart_containerd

ASIDE = f"{CONFIG_PATH}.kubelab-off"


class ImageMirrorRemoved(Fault):
    kind = "image-mirror-removed"
    summary = "no registry mirror in containerd and no images in it: pulls have nowhere to go"
    PARAMS = {}

    def inject(self):
        return [
            f"rm -rf {ASIDE} && mv {CONFIG_PATH} {ASIDE}",
            # every image, the sandbox image too: `--prune` keeps it, since containerd 2.x pins
            # the sandbox image (measured on sid's 2.1: one image left after --prune)
            "crictl rmi --all >/dev/null",
            restart_containerd(),
        ]

    def armed_checks(self):
        return [
            check("no registry mirror", "file-exists", {"path": CONFIG_PATH}, equals=False),
            check("no images in containerd", "command", {"cmd": "crictl images -q | wc -l"}, pattern=r"\A0\s*\Z"),
        ]

    def recover(self):
        """Point containerd at the lab registry again (the images come from it on the next pull).
        Where nothing was set aside (a control run), the track's mirror configuration stays."""
        return [f"if [ -e {ASIDE} ]; then rm -rf {CONFIG_PATH} && mv {ASIDE} {CONFIG_PATH}; fi", restart_containerd()]

    def persistence_checks(self):
        return [check("registry.k8s.io mirrored", "file-exists",
                      {"path": f"{CONFIG_PATH}/registry.k8s.io/hosts.toml"}, equals=True)]
