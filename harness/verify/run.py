"""Running layers: each layer's findings, in order, as they come.

A layer whose reads fail (an API error or a node command timing out
mid-layer) becomes one `does not hold` finding naming the error, so the other
layers still run and the record says which layer could not be read. A bug in
kubelab is not a reading: it propagates, and the run ends as an internal
error (exit 2). A cluster or node that cannot be reached at all stops the run
before any layer (access.reach).
"""

from __future__ import annotations

import traceback

from ..errors import HarnessError
from . import layer
from .finding import FAILS, Finding


def is_reading_failure(exc: BaseException) -> bool:
    """API and transport errors (the kubernetes client, urllib3, sockets; SSH's are HarnessErrors),
    not kubelab bugs."""
    from ..probes.cluster import not_answering

    return isinstance(exc, (HarnessError, TimeoutError) + not_answering())


def run_layers(access, names, on_finding, on_error=None) -> list[Finding]:
    out = []
    for name in names:
        access.layer = name
        try:
            findings = layer(name).check(access)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - one layer's failed reads are that layer's finding
            if not is_reading_failure(exc):
                raise
            if on_error is not None:
                on_error(name, traceback.format_exc())
            said = str(exc).splitlines()[0] if str(exc) else ""
            findings = [Finding(name, "layer could be read", FAILS, f"{type(exc).__name__}: {said[:300]}",
                                "verify itself")]
        for f in findings:
            on_finding(f)
            out.append(f)
    return out
