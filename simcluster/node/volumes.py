"""What PersistentVolumeClaims hold, and the two programs that read it back (`find` and
`base64`), as a kubelet and a container runtime would run them in a pod that mounts the
claim.

Files are kept per claim (namespace, claim name), by their path inside the volume, with a
size and a modification time; small ones with their bytes, large ones (model weights) with
their size only: their bytes are made up, deterministically, when read (at most
CONTENT_LIMIT). Training programs write here as they run (checkpoints.py); a claim
deleted takes its files with it. Nothing persists across restarts, as the rest of the
cluster.

`find PATH... [-mindepth N] [-maxdepth N] [-type f|d] [-size -Nc|+Nc|Nc] [-printf FMT]
[-print] [-exec base64 -w 0 {} ;]` runs GNU find's subset the dashboard uses, on the paths
the pod's volume mounts make visible (`%y %s %T@ %P %p %f`, `\\n`, `\\0`, `%%`); `base64
[-w 0] FILE` prints a file. A path on no mounted claim is "No such file or directory".
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simcluster.node.workloads import Program, Run

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]
ClaimKey = tuple[str, str]
CONTENT_LIMIT = 64 * 1024 * 1024


@dataclass
class SimFile:
    size: int
    mtime: float
    is_dir: bool = False
    content: bytes | None = None

    def read(self, path: str) -> bytes:
        if self.content is not None:
            return self.content
        seed = hashlib.sha256(path.encode()).digest()
        return (seed * (self.size // len(seed) + 1))[:self.size]


class Volumes:
    """Every claim's files: {(namespace, claim): {path: SimFile}}; "" is the root."""

    def __init__(self) -> None:
        self.claims: dict[ClaimKey, dict[str, SimFile]] = {}

    @classmethod
    def of(cls, cluster: Cluster) -> Volumes:
        found = getattr(cluster, "_volumes", None)
        if found is None:
            found = cls()
            cluster._volumes = found  # type: ignore[attr-defined]
        return found

    def files(self, key: ClaimKey) -> dict[str, SimFile]:
        return self.claims.setdefault(key, {"": SimFile(0, 0.0, is_dir=True)})

    def _parents(self, key: ClaimKey, path: str, at: float) -> None:
        files = self.files(key)
        parent = posixpath.dirname(path)
        while True:
            entry = files.get(parent)
            if entry is None:
                files[parent] = SimFile(0, at, is_dir=True)
            else:
                entry.mtime = at  # a new child changes its directory
            if not parent:
                return
            parent = posixpath.dirname(parent)

    def write(self, key: ClaimKey, path: str, at: float, size: int | None = None,
              content: bytes | None = None) -> None:
        path = posixpath.normpath(path).strip("/")
        self._parents(key, path, at)
        self.files(key)[path] = SimFile(len(content) if content is not None else size or 0,
                                        at, content=content)

    def mkdir(self, key: ClaimKey, path: str, at: float) -> None:
        path = posixpath.normpath(path).strip("/")
        self._parents(key, path, at)
        self.files(key).setdefault(path, SimFile(0, at, is_dir=True))

    def remove_tree(self, key: ClaimKey, path: str, at: float) -> None:
        path = posixpath.normpath(path).strip("/")
        files = self.files(key)
        for p in [p for p in files if p == path or p.startswith(path + "/")]:
            del files[p]
        self._parents(key, path, at)

    def forget(self, key: ClaimKey) -> None:
        self.claims.pop(key, None)


# -- what a container sees -------------------------------------------------------------------
def mounted_claims(pod: Obj, container: str) -> list[tuple[str, str, str]]:
    """(mount path, claim, subPath) of the claims `container` mounts, longest path first."""
    spec = pod.get("spec") or {}
    claims = {v.get("name"): (v.get("persistentVolumeClaim") or {}).get("claimName")
              for v in spec.get("volumes") or [] if isinstance(v, dict)}
    found = []
    for c in spec.get("containers") or []:
        if c.get("name") != container:
            continue
        for m in c.get("volumeMounts") or []:
            claim = claims.get(m.get("name"))
            if claim and str(m.get("mountPath", "")).startswith("/"):
                sub = posixpath.normpath(m.get("subPath") or ".").strip("/")
                found.append((posixpath.normpath(m["mountPath"]), str(claim),
                              "" if sub == "." else sub))
    return sorted(found, key=lambda f: -len(f[0]))


def resolve(pod: Obj, container: str, path: str) -> tuple[ClaimKey, str] | None:
    """The claim and the path inside it that `path` names in the container, or None."""
    path = posixpath.normpath(path) if path.startswith("/") else ""
    namespace = (pod.get("metadata") or {}).get("namespace", "")
    for mount, claim, sub in mounted_claims(pod, container):
        if path == mount or path.startswith(mount.rstrip("/") + "/"):
            rest = posixpath.relpath(path, mount)
            inside = posixpath.normpath(posixpath.join(sub, rest)).strip("/")
            return (namespace, claim), "" if inside == "." else inside
    return None


# -- find and base64 -------------------------------------------------------------------------
def _printf(fmt: str, path: str, start: str, start_inside: str, entry: SimFile) -> str:
    rel = path[len(start_inside):].lstrip("/") if start_inside else path
    shown = posixpath.join(start, rel) if rel else start
    out, i = [], 0
    while i < len(fmt):
        ch = fmt[i]
        nxt = fmt[i + 1] if i + 1 < len(fmt) else ""
        if ch == "\\" and nxt in "n0t\\":
            out.append({"n": "\n", "0": "\0", "t": "\t", "\\": "\\"}[nxt])
            i += 2
        elif ch == "%" and fmt[i + 1:i + 3] == "T@":
            out.append(f"{entry.mtime:.10f}")
            i += 3
        elif ch == "%" and nxt:
            out.append({"y": "d" if entry.is_dir else "f",
                        "s": str(4096 if entry.is_dir else entry.size), "P": rel, "p": shown,
                        "f": posixpath.basename(shown), "%": "%"}.get(nxt, "%" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _size_test(arg: str, size: int) -> bool:
    unit = {"c": 1, "k": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(arg[-1:], 512)
    digits = arg.lstrip("+-").rstrip("ckMGb")
    if not digits.isdigit():
        return False
    n, have = int(digits), -(-size // unit)  # find rounds the size up to whole units
    return have < n if arg.startswith("-") else have > n if arg.startswith("+") else have == n


class Find(Program):
    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def start(self, run: Run) -> None:
        args = self.argv[1:]
        paths = []
        while args and not args[0].startswith("-"):
            paths.append(args.pop(0))
        mindepth, maxdepth, tests = 0, 1 << 30, []
        while args:
            word = args.pop(0)
            if word in ("-mindepth", "-maxdepth") and args:
                value = int(args.pop(0)) if args[0].isdigit() else 0
                mindepth, maxdepth = (value, maxdepth) if word == "-mindepth" else \
                    (mindepth, value)
            elif word == "-exec":
                command = []
                while args and args[0] not in (";", "+"):
                    command.append(args.pop(0))
                args = args[1:]
                tests.append(("-exec", command))
            elif word in ("-type", "-size", "-printf") and args:
                tests.append((word, args.pop(0)))
            elif word == "-print":
                tests.append((word, ""))
        if not any(t[0] in ("-printf", "-print", "-exec") for t in tests):
            tests.append(("-print", ""))
        volumes, pod, code = Volumes.of(run.cluster), run.pod(), 0
        for start in paths or ["."]:
            found = resolve(pod, run.container, start)
            files = volumes.files(found[0]) if found else {}
            inside = found[1] if found else ""
            if found is None or inside not in files:
                run.write(f"find: \u2018{start}\u2019: No such file or directory")
                code = 1
                continue
            for path in sorted(files):
                if path != inside and not (not inside or path.startswith(inside + "/")):
                    continue
                depth = 0 if path == inside else (path[len(inside):].strip("/").count("/") + 1)
                if not mindepth <= depth <= maxdepth:
                    continue
                self._act(run, tests, path, start, inside, files[path])
        run.exit(code)

    @staticmethod
    def _act(run: Run, tests: list[tuple[str, Any]], path: str, start: str, inside: str,
             entry: SimFile) -> None:
        for test, arg in tests:
            if test == "-type" and arg != ("d" if entry.is_dir else "f"):
                return
            if test == "-size" and not _size_test(arg, 4096 if entry.is_dir else entry.size):
                return
            if test == "-print":
                run.write(_printf("%p", path, start, inside, entry))
            if test == "-printf":
                text = _printf(arg, path, start, inside, entry)
                for line in text.rstrip("\n").split("\n") if text else []:
                    run.write(line)
            if test == "-exec" and arg and posixpath.basename(arg[0]) == "base64":
                run.write(_base64(path, entry))


def _base64(path: str, entry: SimFile) -> str:
    if entry.size > CONTENT_LIMIT:
        return f"base64: {path}: simcluster keeps no contents for files over 64 MiB"
    return base64.b64encode(entry.read(path)).decode()


class Base64(Program):
    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def start(self, run: Run) -> None:
        names = [a for a in self.argv[1:] if not a.startswith("-") and a != "0"]
        found = resolve(run.pod(), run.container, names[0]) if names else None
        files = Volumes.of(run.cluster).files(found[0]) if found else {}
        entry = files.get(found[1]) if found else None
        if entry is None or entry.is_dir:
            run.write(f"base64: {names[0] if names else '-'}: No such file or directory")
            run.exit(1)
            return
        run.write(_base64(found[1], entry))
        run.exit(0)
