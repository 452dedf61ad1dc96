"""Real git repositories made for a test: a project at a tag, as a user's clone would be."""

import subprocess
from pathlib import Path


def git(path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def tagged(path: Path, module: str, tag: str, files: dict[str, str] | None = None) -> Path:
    """A repository at `path` whose one commit (go.mod naming `module`, and `files`) is tagged `tag`."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for name, text in {"go.mod": f"module {module}\n\ngo 1.24\n", **(files or {})}.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", tag)
    git(path, "tag", tag)
    return path
