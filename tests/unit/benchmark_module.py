"""A benchmark script (benchmarks/*.py, not a package) loaded as a module, for its pure parts."""

import importlib.util
import sys

from harness.paths import project_root


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", project_root() / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module
