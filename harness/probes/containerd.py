"""containerd's effective configuration, as the daemon itself merges it."""

from __future__ import annotations

import re
import tomllib

from ..params import Param
from .base import Probe, Reading, output

_SEGMENT = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)""")


def split_key(dotted: str) -> list[str]:
    """TOML dotted key -> segments: `plugins."io.containerd.grpc.v1.cri".cni.bin_dir`
    -> ["plugins", "io.containerd.grpc.v1.cri", "cni", "bin_dir"]."""
    parts, pos = [], 0
    while pos < len(dotted):
        m = _SEGMENT.match(dotted, pos)
        if not m or m.end() == pos:
            raise ValueError(f"not a TOML dotted key: {dotted!r} (at character {pos + 1})")
        parts.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
    return parts


def lookup(tree: dict, dotted: str):
    node = tree
    for part in split_key(dotted):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


class ContainerdConfig(Probe):
    kind = "containerd-config"
    ARGS = {"key": Param(str, help='TOML dotted key, e.g. plugins."io.containerd.grpc.v1.cri".cni.bin_dir')}

    def command(self, ctx=None) -> str:
        return "containerd config dump"

    def parse(self, result) -> Reading:
        """`containerd config dump` prints the merged configuration as TOML, e.g. (1.6):
        `version = 2` ... `[plugins."io.containerd.grpc.v1.cri".cni]` `  bin_dir = "/usr/lib/cni"`.
        Value is the value at `key` (None when absent); text is `key = value`."""
        if not result.ok:
            return Reading(None, output(result))
        try:
            tree = tomllib.loads(result.stdout)
        except tomllib.TOMLDecodeError as exc:
            return Reading(None, f"containerd config dump is not valid TOML: {exc}")
        value = lookup(tree, self.args["key"])
        shown = "absent" if value is None else repr(value).replace("'", '"') if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
        return Reading(value, f"{self.args['key']} = {shown}")
