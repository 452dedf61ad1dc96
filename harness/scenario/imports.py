"""A scenario file's `import:` (deep merge, the importing file wins) and its `vars:`
(`{{ vars.NAME }}` substituted), before anything is validated."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import YamlProblem
from .checker import show
from .yamlsrc import Source, format_path, read

VAR_RE = re.compile(r"\{\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _merge(base, over):
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    return over


def with_imports(path: Path, problems: list[str], stack: tuple = ()) -> Source | None:
    try:
        src = read(path)
    except YamlProblem as exc:
        problems.append(str(exc))
        return None
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc.strerror}")
        return None
    if not isinstance(src.data, dict):
        file, line = src.positions.get((), (str(path), 1))
        problems.append(f"{file}:{line}: (top level): found {show(src.data)}; allowed: a mapping of scenario fields")
        return None
    imports = src.data.pop("import", [])
    if isinstance(imports, str):
        imports = [imports]
    if not isinstance(imports, list) or not all(isinstance(i, str) for i in imports):
        file, line = src.where(("import",))
        problems.append(f"{file}:{line}: import: found {imports!r}; allowed: a list of file paths")
        return src
    merged, positions = {}, {}
    for i, rel in enumerate(imports):
        target = (path.parent / rel).resolve()
        file, line = src.where(("import", i))
        if target in stack or target == path.resolve():
            chain = " -> ".join(p.name for p in (*stack, path.resolve(), target))
            problems.append(f"{file}:{line}: import[{i}]: `{rel}` closes an import cycle: {chain}")
            continue
        if not target.exists():
            problems.append(f"{file}:{line}: import[{i}]: found `{rel}`; allowed: a file relative to {path.parent} (it does not exist)")
            continue
        sub = with_imports(target, problems, stack + (path.resolve(),))
        if sub is not None:
            merged = _merge(merged, sub.data)
            positions.update(sub.positions)
    positions.update({k: v for k, v in src.positions.items() if k[:1] != ("import",)})
    return Source(_merge(merged, src.data), positions)


def substitute(src: Source, problems: list[str]) -> None:
    variables = src.data.pop("vars", {}) or {}
    if not isinstance(variables, dict):
        file, line = src.where(("vars",))
        problems.append(f"{file}:{line}: vars: found {variables!r}; allowed: a mapping of names to values")
        variables = {}

    def walk(value, path):
        if isinstance(value, dict):
            return {k: walk(v, path + (k,)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, path + (i,)) for i, v in enumerate(value)]
        if isinstance(value, str) and "{{" in value:
            whole = VAR_RE.fullmatch(value.strip())
            for m in VAR_RE.finditer(value):
                if m.group(1) not in variables:
                    file, line = src.where(path)
                    known = ", ".join(f"`{k}`" for k in variables) or "none"
                    problems.append(f"{file}:{line}: {format_path(path)}: undefined variable `{m.group(1)}`; defined: {known}")
                    return value
            if whole:  # a whole-value reference keeps the variable's type
                return variables[whole.group(1)]
            return VAR_RE.sub(lambda m: str(variables[m.group(1)]), value)
        return value

    src.data = walk(src.data, ())
