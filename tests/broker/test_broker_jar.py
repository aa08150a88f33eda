"""The native libraries bundled in the broker plugin's jar (``dist/kassign-broker-<version>.jar``).

``make broker-plugin`` bundles one library per platform under
``kassign/broker/native/<platform>/libkassign.so`` (``NativeLibrary.platform()`` picks the directory
from ``os.name``/``os.arch``). Each must be an ELF shared object for its own machine, need no glibc
symbol version above 2.17 (the floor docs/broker.md states), and export the same JNI entry points
(read with tests/support/elf.py, not binutils). Each is then loaded by tests/support/jni_probe.c,
built by zig for its machine, which calls ``NativeAssignor.version()``: natively for x86-64, under
qemu-user with Debian's aarch64 C library for aarch64 (.ci/run installs both), so no ARM64 JVM is
needed. The x86-64 library's assignments run in the Maven tests and tests/broker/test_broker_plugin.py;
the aarch64 library runs only that one call here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import elf
from support.kafka_plugin_cluster import REPO, plugin_jar

pytestmark = pytest.mark.broker  # needs `make broker-plugin`'s jar (Maven), as the broker tests do

PLATFORMS = {"linux-x86_64": elf.EM_X86_64, "linux-aarch64": elf.EM_AARCH64}
GLIBC_FLOOR = (2, 17)
JNI_PREFIX = "Java_kassign_broker_NativeAssignor_"
PROBE = Path(__file__).resolve().parents[1] / "support" / "jni_probe.c"
# zig's target for the probe, and what runs it on this (x86-64) machine.
PROBE_TARGET = {"linux-x86_64": "x86_64-linux-gnu.2.17", "linux-aarch64": "aarch64-linux-gnu.2.17"}
AARCH64_SYSROOT = Path("/usr/aarch64-linux-gnu")  # Debian's libc6-arm64-cross


def bundled() -> dict[str, bytes]:
    """Every file under ``kassign/broker/native/`` in the jar, by its path below that directory."""
    prefix = "kassign/broker/native/"
    with zipfile.ZipFile(plugin_jar()) as jar:
        return {n[len(prefix) :]: jar.read(n) for n in jar.namelist() if n.startswith(prefix) and not n.endswith("/")}


def library(platform: str) -> bytes:
    return bundled()[f"{platform}/libkassign.so"]


def glibc_needs(lib: elf.Elf) -> list[tuple[tuple[int, ...], str, str]]:
    """The GLIBC_* versions the library needs: (version, shared object, name)."""
    return [(v, file, name) for file, name in lib.needed_versions if (v := elf.glibc_version(name)) is not None]


def test_jar_bundles_a_library_per_platform_and_nothing_else():
    assert sorted(bundled()) == sorted(f"{p}/libkassign.so" for p in PLATFORMS)


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_library_is_a_shared_object_for_its_machine_with_a_glibc_2_17_floor(platform):
    lib = elf.parse(library(platform))
    assert lib.e_type == elf.ET_DYN
    assert lib.machine == PLATFORMS[platform]
    glibc = glibc_needs(lib)
    assert glibc, f"{platform}: needs no GLIBC symbol version at all (not linked against glibc?)"
    too_new = [(file, name) for v, file, name in glibc if v > GLIBC_FLOOR]
    assert not too_new, f"{platform} needs glibc symbols newer than 2.17: {too_new}"


def test_both_libraries_export_the_same_jni_entry_points():
    exported = {p: {s for s in elf.parse(library(p)).defined_symbols if s.startswith(JNI_PREFIX)} for p in PLATFORMS}
    assert exported["linux-x86_64"], "the x86-64 library exports no kassign.broker.NativeAssignor method"
    assert exported["linux-aarch64"] == exported["linux-x86_64"]


def test_the_checks_see_a_newer_glibc_version_and_a_wrong_machine():
    # The checks above can fail: the same aarch64 library with one needed version renamed from
    # GLIBC_2.17 to GLIBC_2.99 (same length, in .dynstr) and its e_machine set to x86-64's.
    data = bytearray(library("linux-aarch64"))
    at = data.find(b"GLIBC_2.17\0")
    assert at > 0
    data[at : at + 10] = b"GLIBC_2.99"
    data[18:20] = elf.EM_X86_64.to_bytes(2, "little")
    lib = elf.parse(bytes(data))
    assert lib.machine == elf.EM_X86_64
    assert max(v for v, _, _ in glibc_needs(lib)) == (2, 99)
    with pytest.raises(ValueError, match="not an ELF file"):
        elf.parse(b"\0" * 64)


def java_include() -> Path:
    """The JDK's include directory (jni.h), from JAVA_HOME or the javac on PATH."""
    home = os.environ.get("JAVA_HOME")
    if not home:
        javac = shutil.which("javac")
        assert javac, "no JDK: neither JAVA_HOME nor javac on PATH"
        home = str(Path(os.path.realpath(javac)).parents[1])
    include = Path(home) / "include"
    assert (include / "jni.h").exists(), f"no jni.h in {include}"
    return include


def run_probe(platform: str, lib: Path, work: Path) -> subprocess.CompletedProcess[str]:
    probe = work / f"jni_probe-{platform}"
    inc = java_include()
    zig = [sys.executable, "-m", "ziglang", "cc", "-target", PROBE_TARGET[platform], "-O1", "-Wall", "-Werror"]
    subprocess.run([*zig, f"-I{inc}", f"-I{inc / 'linux'}", str(PROBE), "-ldl", "-o", str(probe)], check=True)
    if platform == "linux-aarch64":
        qemu = shutil.which("qemu-aarch64")
        assert qemu and (AARCH64_SYSROOT / "lib" / "libc.so.6").exists(), (
            "needs qemu-user and Debian's aarch64 C library: apt-get install qemu-user libc6-arm64-cross (.ci/run)"
        )
        cmd = [qemu, "-L", str(AARCH64_SYSROOT), str(probe), str(lib)]
    else:
        cmd = [str(probe), str(lib)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_library_loads_and_answers_a_jni_call_on_its_machine(platform, tmp_path):
    version = re.search(r'^version = "([^"]+)"', (REPO / "Cargo.toml").read_text(), re.M)
    assert version
    lib = tmp_path / "libkassign.so"
    lib.write_bytes(library(platform))
    out = run_probe(platform, lib, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == version.group(1) + "\n"
    # The probe tells a library it cannot load from one that answers: the other machine's fails.
    other = "linux-aarch64" if platform == "linux-x86_64" else "linux-x86_64"
    lib.write_bytes(library(other))
    wrong = run_probe(platform, lib, tmp_path)
    assert wrong.returncode == 1 and "dlopen" in wrong.stderr, wrong
