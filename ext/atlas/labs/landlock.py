"""Linux Landlock, through its three system calls: make a process unable to write outside the
folders it names, and unable to signal processes outside its own sandbox.

Why Landlock: the labs run as root (on CI too), so permission bits stop nothing; Landlock
restricts root as well, needs no privilege and no mount namespace, applies to the calling
process and everything it forks, and cannot be lifted from inside. Why our own ``ctypes`` code:
the only PyPI binding (``landlock``) is an alpha pre-release that pip does not install by
default, and the three calls with two structures are short; the constants are those of
``<linux/landlock.h>``, whose ABI is versioned and only ever grows.

Which rights exist depends on the kernel's ABI version: :func:`abi_version` asks it, and the
rules use only the rights that version knows (a right the kernel does not handle cannot be
denied; see :data:`WRITE_RIGHTS`). Signal scoping needs ABI 6 (Linux 6.12).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on every arch
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem rights (LANDLOCK_ACCESS_FS_*) that change the tree, with the ABI that added each.
WRITE_FILE = 1 << 1
REMOVE_DIR, REMOVE_FILE = 1 << 4, 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK = 1 << 6, 1 << 7, 1 << 8, 1 << 9
MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2: link or rename across folders
TRUNCATE = 1 << 14  # ABI 3
_V1_WRITES = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
) | (MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
FILE_WRITES = WRITE_FILE | TRUNCATE  # the rights a rule on a device or regular file may grant
SCOPE_SIGNAL = 1 << 1  # ABI 6: no signal to a process outside the sandbox


class _RulesetAttr(ctypes.Structure):
    _fields_ = [  # noqa: RUF012 - ctypes' own idiom
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the kernel's header
    _fields_ = [  # noqa: RUF012
        ("allowed_access", ctypes.c_uint64),
        ("parent_fd", ctypes.c_int32),
    ]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (old kernel, disabled, not Linux)."""
    try:
        version = _libc().syscall(
            _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION
        )
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def write_rights(abi: int) -> int:
    """Every right that changes the filesystem, as far as ABI ``abi`` knows them."""
    rights = _V1_WRITES
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"landlock {what}: {os.strerror(errno)}")
    return result


def restrict(writable: dict[Path, int], scope_signals: bool = True) -> int:
    """Deny this process (and what it forks) every write except ``writable``'s, for good.

    ``writable`` maps a path to the rights granted beneath it (a folder: any of
    :func:`write_rights`; a file or device: :data:`FILE_WRITES` at most); a path that does not
    exist is left out. Reading and executing stay allowed everywhere. Returns the ABI version
    enforced; raises ``OSError`` where the kernel has no Landlock (the caller falls back).
    """
    abi = abi_version()
    if abi < 1:
        raise OSError(0, "this kernel has no Landlock")
    handled = write_rights(abi)
    libc = _libc()
    attr = _RulesetAttr(handled, 0, SCOPE_SIGNAL if scope_signals and abi >= 6 else 0)
    ruleset = _check(
        libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0),
        "create_ruleset",
    )
    try:
        for path, rights in writable.items():
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent here (no /dev/shm, no GPU): nothing to allow
            try:
                directory = os.path.isdir(path)
                allowed = rights & handled & (handled if directory else FILE_WRITES)
                rule = _PathBeneathAttr(allowed, fd)
                _check(
                    libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0),
                    f"add_rule {path}",
                )
            finally:
                os.close(fd)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0), "restrict_self")
    finally:
        os.close(ruleset)
    return abi
