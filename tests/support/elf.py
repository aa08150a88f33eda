"""A minimal reader for 64-bit little-endian ELF shared objects (the broker plugin's native libraries).

It reads what the jar checks need straight from the bytes (the System V gABI and the LSB's symbol
versioning sections), so no binutils is needed:

* the header's ``e_type`` and ``e_machine`` (``EM_X86_64`` = 62, ``EM_AARCH64`` = 183);
* ``.gnu.version_r`` (``SHT_GNU_verneed``): the symbol versions the library needs, per shared object,
  e.g. ``("libc.so.6", "GLIBC_2.17")``;
* ``.dynsym``: the names of the dynamic symbols it defines.

Malformed input raises ``ValueError`` (every offset is bounds-checked).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

ET_DYN = 3
EM_X86_64 = 62
EM_AARCH64 = 183

SHT_DYNSYM = 11
SHT_GNU_VERNEED = 0x6FFFFFFE
SHN_UNDEF = 0

_SHDR = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_VERNEED = struct.Struct("<HHIII")  # Elf64_Verneed
_VERNAUX = struct.Struct("<IHHII")  # Elf64_Vernaux
_SYM = struct.Struct("<IBBHQQ")  # Elf64_Sym


@dataclass(frozen=True)
class Section:
    type: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


@dataclass(frozen=True)
class Elf:
    e_type: int
    machine: int
    needed_versions: tuple[tuple[str, str], ...]
    defined_symbols: frozenset[str]


def glibc_version(name: str) -> tuple[int, ...] | None:
    """``GLIBC_2.17`` -> ``(2, 17)``; ``None`` for any other version name."""
    m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)*)", name)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _slice(data: bytes, offset: int, size: int, what: str) -> bytes:
    if offset < 0 or size < 0 or offset + size > len(data):
        raise ValueError(f"{what} at {offset}+{size} is outside the {len(data)}-byte file")
    return data[offset : offset + size]


def _cstr(table: bytes, offset: int) -> str:
    if not 0 <= offset < len(table):
        raise ValueError(f"string offset {offset} outside a {len(table)}-byte string table")
    end = table.find(b"\0", offset)
    if end < 0:
        raise ValueError("unterminated string")
    return table[offset:end].decode("ascii")


def parse(data: bytes) -> Elf:
    """Parse a 64-bit little-endian ELF file's header, version needs and defined dynamic symbols."""
    ident = _slice(data, 0, 64, "ELF header")
    if ident[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    if ident[4] != 2 or ident[5] != 1:
        raise ValueError(f"not a 64-bit little-endian ELF file (class {ident[4]}, data {ident[5]})")
    e_type, machine = struct.unpack_from("<HH", ident, 16)
    (shoff,) = struct.unpack_from("<Q", ident, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", ident, 0x3A)
    if shentsize != _SHDR.size:
        raise ValueError(f"section header size {shentsize}, expected {_SHDR.size}")
    table = _slice(data, shoff, shnum * shentsize, "section header table")
    sections = []
    for i in range(shnum):
        _, typ, _, _, off, size, link, info, _, entsize = _SHDR.unpack_from(table, i * shentsize)
        sections.append(Section(typ, off, size, link, info, entsize))

    def strtab(s: Section) -> bytes:
        if not 0 <= s.link < len(sections):
            raise ValueError(f"section link {s.link} out of range")
        t = sections[s.link]
        return _slice(data, t.offset, t.size, "string table")

    needed: list[tuple[str, str]] = []
    for s in sections:
        if s.type != SHT_GNU_VERNEED:
            continue
        body, names = _slice(data, s.offset, s.size, ".gnu.version_r"), strtab(s)
        pos = 0
        for _ in range(s.info):  # sh_info: the number of Verneed entries
            _slice(body, pos, _VERNEED.size, "Verneed")
            _, cnt, file, aux, nxt = _VERNEED.unpack_from(body, pos)
            apos = pos + aux
            for _ in range(cnt):
                _slice(body, apos, _VERNAUX.size, "Vernaux")
                _, _, _, name, anext = _VERNAUX.unpack_from(body, apos)
                needed.append((_cstr(names, file), _cstr(names, name)))
                apos += anext
            pos += nxt

    defined: set[str] = set()
    for s in sections:
        if s.type != SHT_DYNSYM:
            continue
        if s.entsize != _SYM.size:
            raise ValueError(f"symbol size {s.entsize}, expected {_SYM.size}")
        body, names = _slice(data, s.offset, s.size, ".dynsym"), strtab(s)
        for i in range(s.size // _SYM.size):
            name, _, _, shndx, _, _ = _SYM.unpack_from(body, i * _SYM.size)
            if shndx != SHN_UNDEF and name:
                defined.add(_cstr(names, name))
    return Elf(e_type, machine, tuple(needed), frozenset(defined))
