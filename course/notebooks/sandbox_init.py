"""The first process inside a notebook's namespaces: it builds the sandbox's file system, drops every
privilege, runs one command and, by exiting, ends every process the command left behind.

:mod:`course.notebooks.sandbox` starts it as ``unshare --user --map-root-user --mount --pid --net --ipc
--uts --fork --kill-child python -I -S sandbox_init.py CONFIG``, so this process is PID 1 of a new PID
namespace, "root" of a new user namespace (only the builder's own user mapped) and owner of new mount,
network, IPC and host-name namespaces. With the standard library only (it runs before any environment is
set up, under ``-I -S``), it:

1. mounts a small tmpfs as the new root and binds into it, read-only, only what running Python needs: the
   system's program and library folders, a few files of ``/etc``, the interpreter, the virtual environment
   and the folders of the project named in CONFIG (never the project root itself: ``.git``, ``docs/``,
   ``site/`` and anything beside the repository stay out of sight), plus ``/dev/null`` and its kind;
2. gives writable tmpfs folders (``/sandbox``, ``/tmp``, ``/dev/shm``) with a size limit each, and a
   ``/proc`` of the new PID namespace (where the kernel refuses one, as inside Docker, none at all);
3. makes the new root the only root (``pivot_root``, the old one detached: a ``chroot`` could be left);
4. drops every capability for good (bounding set, secure bits, ``no_new_privs``), so the command cannot
   remount anything writable, mount anything or undo the above;
5. runs CONFIG's command with CONFIG's environment only, waits for it, and exits with its status.

When PID 1 of a namespace exits, the kernel kills every other process in it: a process a notebook started
in the background ends with the execution, whatever it did to detach. The builder kills ``unshare`` at the
time limit, and ``--kill-child`` passes that on to this process.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import re
import sys
from pathlib import Path

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
# statvfs flags -> the mount flags a read-only remount must keep (the kernel refuses to clear locked ones)
_KEPT_FLAGS = {
    os.ST_NOSUID: MS_NOSUID,
    os.ST_NODEV: MS_NODEV,
    os.ST_NOEXEC: MS_NOEXEC,
    os.ST_NOATIME: MS_NOATIME,
    os.ST_NODIRATIME: MS_NODIRATIME,
    os.ST_RELATIME: MS_RELATIME,
}
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT = 38, 24, 28, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and NO_CAP_AMBIENT_RAISE, each with its lock: root (the mapped
# builder) gains no capability by executing a program, now or in any descendant.
SECURE_BITS = 0b1110_1111
_CAPABILITY_VERSION_3 = 0x20080522
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")
DEVICES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxSetupError(RuntimeError):
    """A step of building the sandbox failed: the command is not run."""


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise SandboxSetupError(f"{what}: {os.strerror(error)}")


def _bytes(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = _bytes
    result = _libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data))
    _check(result, f"mount {source or ''} on {target}")


def _kept_flags(path: str) -> int:
    flags = os.statvfs(path).f_flag
    return sum(mount_flag for stat_flag, mount_flag in _KEPT_FLAGS.items() if flags & stat_flag)


def _mount_points_under(path: str) -> list[str]:
    """Every mount point at or below ``path`` (from this namespace's mountinfo), outermost first."""
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), line.split()[4])  # \040: a space
        if point == path or point.startswith(path.rstrip("/") + "/"):
            points.append(point)
    return sorted(points, key=len)


def bind_read_only(source: str, target: str) -> None:
    """Bind ``source`` (with its sub-mounts) at ``target`` and make each of them read-only."""
    mount(source, target, None, MS_BIND | MS_REC)
    for point in _mount_points_under(target):
        mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _kept_flags(point))


def _make_target(path: Path, like: Path) -> None:
    if like.is_dir():
        path.mkdir(parents=True, exist_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()


def build_root(root: Path, config: dict[str, object]) -> None:
    """Mount the sandbox's file system at ``root`` (see the module's docstring)."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", str(root), "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    for name, target in dict(config["symlinks"]).items():  # type: ignore[call-overload]
        (root / name.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / name.lstrip("/"))
    # The scratch folders first: a checkout or environment under /tmp is bound onto the sandbox's own
    # /tmp afterwards, where a tmpfs mounted later would hide it (the kernel would run nothing: exit 127).
    for path, size in dict(config["writable"]).items():  # type: ignore[call-overload]
        target = root / path.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        mount("tmpfs", str(target), "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
    for path in list(config["read_only"]):  # type: ignore[call-overload]
        source = Path(path)
        if not source.exists():
            continue
        target = root / path.lstrip("/")
        _make_target(target, source)
        bind_read_only(path, str(target))
    for name in DEVICES:
        device = root / "dev" / name
        _make_target(device, Path("/dev") / name)
        mount(f"/dev/{name}", str(device), None, MS_BIND)
    for path in list(config["folders"]):  # type: ignore[call-overload]
        (root / path.lstrip("/")).mkdir(parents=True, exist_ok=True)
    (root / "proc").mkdir(exist_ok=True)
    # This PID namespace's processes only. Refused where the machine's /proc is partly hidden (Docker):
    # then no /proc at all, so nothing of other processes to see either.
    with contextlib.suppress(SandboxSetupError):
        mount("proc", str(root / "proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    mount(None, str(root), None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def enter_root(root: Path) -> None:
    """Make ``root`` this mount namespace's root and detach the old one (unreachable from now on)."""
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise SandboxSetupError(f"pivot_root: unknown on {platform.machine()}")
    os.chdir(root)
    _check(_libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def drop_privileges(last_capability: int) -> None:
    """No capability now or after any ``execve``, and no way to gain one (setuid files included)."""
    prctl = _libc.prctl
    _check(prctl(PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0), "set secure bits")
    for capability in range(last_capability + 1):
        _check(prctl(PR_CAPBSET_DROP, capability, 0, 0, 0), f"drop capability {capability}")
    _check(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "drop capabilities")
    _check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set no_new_privs")


def run(command: list[str], environment: dict[str, str], cwd: str) -> int:
    """Run ``command`` as this namespace's only child, reap whatever else ends, return its exit status."""
    child = os.fork()
    if child == 0:
        try:
            os.chdir(cwd)
            os.execve(command[0], command, environment)
        finally:
            os._exit(127)
    while True:
        pid, status = os.wait()
        if pid == child:
            return os.waitstatus_to_exitcode(status)


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    root = Path(config["root"])
    try:
        last_capability = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
        build_root(root, config)
        enter_root(root)
        drop_privileges(last_capability)
    except (OSError, SandboxSetupError) as error:
        print(f"sandbox: {error}", file=sys.stderr)
        return 125
    code = run(config["command"], config["environment"], config["cwd"])
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
