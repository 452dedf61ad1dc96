"""The install section: which track, and the kubeadm track's release, ranges, CNI,
preparation and timeouts, with what it asks of the lab's machines."""

from __future__ import annotations

import re
from pathlib import Path

from .. import cni as cnis
from ..errors import HarnessError
from ..model import DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR, INSTALL_TRACKS, InstallDef, LabDef
from ..tracks import TRACKS
from .checker import Checker, read_versions, show
from .overlap import is_cidr

IMPLEMENTED_TRACKS = tuple(TRACKS)  # the registry's (harness/tracks)
GO_DURATION_RE = re.compile(r"^(?=\d)(\d+h)?(\d+m)?(\d+s)?$")  # what kubeadm's timeouts take, e.g. 1m30s
PREPARE_ITEMS = ("ip_forward", "br_netfilter")


def read_install(c: Checker, raw, path, lab: LabDef | None) -> InstallDef:
    if raw is None or raw == "none":
        return InstallDef()
    if isinstance(raw, str):
        if raw not in INSTALL_TRACKS:
            c.bad(path, f"found {show(raw)}; allowed: none, or a mapping with track: {', '.join(IMPLEMENTED_TRACKS[1:])}")
        else:
            c.bad(path, f"found {raw!r}; allowed: none, or a mapping like {{track: {raw}, kubernetes: <version>}}")
        return InstallDef()
    found = raw.get("track") if isinstance(raw, dict) else None
    track = found if isinstance(found, str) else None  # a list or mapping is no track name
    if track in TRACKS and TRACKS[track].installs_kubernetes:
        # each track takes its own keys; another track's key is named as such
        keys = TRACKS[track].install_keys
        hints = {k: f"a key of the {t.name} track" for t in TRACKS.values() for k in t.install_keys if k not in keys}
        m = c.mapping(raw, path, required=("track",), optional=keys, hints=hints)
    elif track in TRACKS:  # none: nothing besides the track
        m = c.mapping(raw, path, required=("track",))
    else:  # the track's own problem is enough
        m = c.mapping(raw, path, required=("track",),
                      optional=tuple(dict.fromkeys(k for t in TRACKS.values() for k in t.install_keys)))
    if m is None:
        return InstallDef()
    if track not in INSTALL_TRACKS:
        c.bad(path + ("track",), f"found {show(found)}; allowed: {', '.join(INSTALL_TRACKS)}")
        return InstallDef()
    if track not in IMPLEMENTED_TRACKS:
        c.bad(path + ("track",), f"found {track!r}; the {track} track is not available in this kubelab yet; "
                                 f"allowed now: {', '.join(IMPLEMENTED_TRACKS)}")
        return InstallDef()
    if not TRACKS[track].installs_kubernetes:
        return InstallDef()
    from ..artifacts.versions import DEFAULT_KUBERNETES, KubeVersion

    version = str(m.get("kubernetes", DEFAULT_KUBERNETES))
    try:
        KubeVersion.parse(version).check_supported()
    except HarnessError as exc:
        c.bad(path + ("kubernetes",), f"found {show(m.get('kubernetes'))}; {str(exc).split(': ', 1)[-1]}")
    cidrs = {}
    for key, default in (("pod_cidr", DEFAULT_POD_CIDR), ("service_cidr", DEFAULT_SERVICE_CIDR)):
        cidrs[key] = str(m.get(key, default))
        if not is_cidr(cidrs[key]):
            c.bad(path + (key,), f"found {show(m.get(key))}; allowed: an IPv4 network like {default}")
    cni = m.get("cni", cnis.DEFAULT)
    if cni not in cnis.for_track(track):
        c.bad(path + ("cni",), f"found {show(cni)}; allowed: {', '.join(cnis.for_track(track))}")
        cni = cnis.DEFAULT
    prepare = m.get("prepare", list(PREPARE_ITEMS))
    if not isinstance(prepare, list) or any(p not in PREPARE_ITEMS for p in prepare):
        c.bad(path + ("prepare",), f"found {show(prepare)}; allowed: a list of {', '.join(PREPARE_ITEMS)} (or [])")
        prepare = list(PREPARE_ITEMS)
    pinned = m.get("kubernetes_version_in_config", True)
    preload = m.get("preload", True)
    init_fails = m.get("init_fails", False)
    for key, value in (("kubernetes_version_in_config", pinned), ("preload", preload)):
        if not isinstance(value, bool):
            c.bad(path + (key,), f"found {show(value)}; allowed: true or false")
    init_fails_versions = {}
    if isinstance(init_fails, dict):  # only where these versions are found
        init_fails_versions = read_versions(c, init_fails, path + ("init_fails",))
        init_fails = True
    elif not isinstance(init_fails, bool):
        c.bad(path + ("init_fails",), f"found {show(init_fails)}; allowed: true, false, or a version range "
                                      "like {containerd: \"<2.0\"} where init is expected to stop")
    durations = {}
    for key in ("kubelet_health_check", "kubernetes_api_call"):
        durations[key] = m.get(key, "")
        if durations[key] != "" and not (isinstance(durations[key], str) and GO_DURATION_RE.match(durations[key])):
            c.bad(path + (key,), f"found {show(durations[key])}; allowed: a duration like 40s or 1m30s")
            durations[key] = ""
    if durations["kubernetes_api_call"] and init_fails is False:
        c.bad(path + ("kubernetes_api_call",), "applies only to an init the fault stops; set `init_fails` too, "
                                               "or leave it out (the track's value holds: harness/tuning.py)")
    if lab is not None:
        planes = [x.name for x in lab.machines if x.role == "control-plane"]
        others = [x.name for x in lab.machines if x.role not in ("control-plane", "worker")]
        if len(planes) != 1:
            c.bad(("lab", "machines"), f"the {track} track needs exactly one machine with role control-plane; "
                                       f"found {len(planes)}")
        if others:
            c.bad(("lab", "machines"), f"the {track} track takes roles control-plane and worker; "
                                       f"{', '.join(others)} {'has' if len(others) == 1 else 'have'} another")
    kubespray, schedulable, play_fails, repairs = _kubespray_keys(c, m, path)
    variables = _kubespray_variables(c, m.get("variables", {}), path + ("variables",))
    refused = _versions_list(c, m.get("refused_versions", []), path + ("refused_versions",))
    return InstallDef(track, version, cidrs["pod_cidr"], cidrs["service_cidr"], cni,
                      tuple(prepare), pinned is not False, preload is not False, init_fails is True,
                      durations["kubelet_health_check"], init_fails_versions, durations["kubernetes_api_call"],
                      kubespray=kubespray, kubespray_source="install.kubespray" if kubespray else "",
                      schedulable_control_plane=schedulable, play_fails=play_fails, variables=variables,
                      refused_versions=refused, repairs_faults=repairs)


def _versions_list(c: Checker, raw, path) -> tuple:
    """install.refused_versions: Kubernetes versions like 1.33.0, each a play kubespray must refuse."""
    allowed = 'allowed: a list of Kubernetes versions as strings, like ["1.33.0"]'
    if not isinstance(raw, list):
        c.bad(path, f"found {show(raw)}; {allowed}")
        return ()
    bad = [i for i, v in enumerate(raw) if not (isinstance(v, str) and re.match(r"^\d+\.\d+\.\d+$", v))]
    for i in bad:
        c.bad(path + (i,), f"found {show(raw[i])}; {allowed}")
    return () if bad else tuple(raw)


ANSIBLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _kubespray_variables(c: Checker, raw, path) -> tuple:
    """install.variables: kubespray variables the scenario sets (e.g. enable_nodelocaldns: false), any
    but those kubelab derives from the install section or the lab's offline servers."""
    from ..tracks.kubespray import KUBELAB_VARIABLES

    if not isinstance(raw, dict):
        c.bad(path, f"found {show(raw)}; allowed: a mapping of kubespray variables, like {{enable_nodelocaldns: false}}")
        return ()
    out = []
    for name, value in raw.items():
        if not isinstance(name, str) or not ANSIBLE_NAME.match(name):
            c.bad(path + (name,), f"`{name}` is not an Ansible variable name (letters, digits, _; not first a digit)")
        elif name in KUBELAB_VARIABLES:
            c.bad(path + (name,), f"`{name}` is kubelab's to set: {KUBELAB_VARIABLES[name]}")
        else:
            out.append((name, value))
    return tuple(sorted(out, key=lambda kv: kv[0]))


def _kubespray_keys(c: Checker, m: dict, path) -> tuple[str, bool, bool, bool]:
    """install.kubespray (a checkout, relative to the scenario file's folder),
    install.schedulable_control_plane (the control plane in kube_node too),
    install.play_fails (the fault stops the play) and install.repairs_faults (the play
    undoes the faults itself)."""
    checkout = ""
    if "kubespray" in m:
        value = c.string(m["kubespray"], path + ("kubespray",), allowed="the path of a kubespray checkout")
        if value:
            where = Path(c.src.where(path + ("kubespray",))[0]).parent
            checkout = str((where / Path(value).expanduser()).resolve())
    flags = []
    for key in ("schedulable_control_plane", "play_fails", "repairs_faults"):
        value = m.get(key, False)
        if not isinstance(value, bool):
            c.bad(path + (key,), f"found {show(value)}; allowed: true or false")
            value = False
        flags.append(value)
    return checkout, flags[0], flags[1], flags[2]
