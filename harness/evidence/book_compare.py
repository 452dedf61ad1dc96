"""What changed since a previous book: per claim, its verdict, its matched lines, its versions,
its facts, and each timing that left the previous spread.

A timing is compared with the previous book's spread (min to max over its
runs), not its last value: on shared hardware one run's figure wanders, and a
value inside the spread already seen is no news. Such a claim keeps its
previous timings snippet word for word (`timings_kept`).
"""

from __future__ import annotations

from .book import cell_label


def _by(items: list[dict], key: str) -> dict:
    return {item[key]: item for item in items}


def _lines(scenario: dict) -> dict[tuple, set]:
    out: dict[tuple, set] = {}
    for line in scenario["lines"]:
        out.setdefault((line["kind"], line["check"]), set()).add(line["line"])
    return out


def _show(values) -> str:
    return " | ".join(sorted(values)) or "(none)"


def _scenario_changes(where: str, now: dict, was: dict) -> list[str]:
    out = []
    if now["verdict"] != was["verdict"]:
        out.append(f"{where}: verdict {was['verdict']} -> {now['verdict']}")
    new, old = _lines(now), _lines(was)
    for key in sorted(set(new) | set(old)):
        if new.get(key, set()) != old.get(key, set()):
            kind, check = key
            out.append(f"{where}: matched line of {kind} {check}: `{_show(old.get(key, ()))}` -> "
                       f"`{_show(new.get(key, ()))}`")
    if now["versions"] != was["versions"]:
        out.append(f"{where}: versions {_versions(was['versions'])} -> {_versions(now['versions'])}")
    return out


def _versions(versions: list[dict]) -> str:
    return "; ".join(", ".join(f"{k} {v}" for k, v in sorted(d.items()) if isinstance(v, str)) for d in versions) \
        or "(none)"


def _fact_changes(now: dict, was: dict | None, cells: dict) -> tuple[list[str], bool]:
    """(changes, every timing inside the previous spread)."""
    out, kept = [], True
    name = f"fact {now['fact']} ({now['scenario']})"
    old_cells = _by(was["cells"], "cell") if was else {}
    for cell in now["cells"]:
        where = cell_label(cells[cell["cell"]]) if cell["cell"] in cells else cell["cell"]
        before = old_cells.get(cell["cell"])
        if not now["timing"]:
            if before is None or sorted(map(str, before["values"])) != sorted(map(str, cell["values"])):
                out.append(f"{where}: {name}: {_show(map(str, before['values'])) if before else '(none)'} -> "
                           f"{_show(map(str, cell['values']))}")
            continue
        if before is None or "median" not in before:
            kept = False
            if "median" in cell:
                out.append(f"{where}: {name}: measured {cell['median']} s; the previous book has no figure")
            continue
        if "median" not in cell:
            kept = False
            out.append(f"{where}: {name}: not measured now (values {cell['values']}); previously "
                       f"{before['min']}-{before['max']} s")
        elif not before["min"] <= cell["median"] <= before["max"]:
            kept = False
            out.append(f"{where}: {name}: {cell['median']} s (median of {cell['measured']}) is beyond the previous "
                       f"spread {before['min']}-{before['max']} s")
    return out, kept


def compare(book: dict, previous: dict, previous_name: str) -> dict:
    """Mark every claim of `book` with what changed since `previous` (both book records)."""
    old_claims = _by(previous.get("claims", []), "id")
    for claim in book["claims"]:
        was = old_claims.get(claim["id"])
        changes: list[str] = []
        kept = was is not None
        if was is None:
            changes.append("new in this book")
        else:
            if claim["verdict"] != was["verdict"]:
                changes.append(f"verdict {was['verdict']} -> {claim['verdict']}")
            if claim["says"] != was["says"]:
                changes.append("the sentence was edited in the claims file")
            old_cells = _by(was["cells"], "id")
            for cell in claim["cells"]:
                before = old_cells.get(cell["id"])
                if before is None:
                    changes.append(f"{cell_label(cell)}: not in the previous book")
                    continue
                old_scen = _by(before["scenarios"], "scenario")
                for scen in cell["scenarios"]:
                    where = f"{cell_label(cell)}, {scen['scenario']}"
                    if scen["scenario"] not in old_scen:
                        changes.append(f"{where}: not in the previous book")
                    else:
                        changes += _scenario_changes(where, scen, old_scen[scen["scenario"]])
            for cid in sorted(set(old_cells) - {c["id"] for c in claim["cells"]}):
                changes.append(f"{cell_label(old_cells[cid])}: in the previous book, not in this one")
            old_facts = {(f["scenario"], f["fact"]): f for f in was.get("facts", [])}
            cells = _by(claim["cells"], "id")
            for fact in claim["facts"]:
                found, inside = _fact_changes(fact, old_facts.get((fact["scenario"], fact["fact"])), cells)
                changes += found
                kept = kept and inside
        claim["changes"] = changes
        claim["timings_kept"] = kept
    book["compared_with"] = previous_name
    book["removed"] = sorted(set(old_claims) - {c["id"] for c in book["claims"]})
    return book
