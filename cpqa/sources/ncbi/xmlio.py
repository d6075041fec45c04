"""Streaming XML plumbing shared by the PubMed and JATS parsers: open a path (``.gz`` too), bytes or a
binary file, and yield top-level record elements one at a time so a 30,000-record baseline file never
sits whole in memory."""

from __future__ import annotations

import gzip
import io
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Union, cast

from lxml import etree

from cpqa.sources.clean_text import clean_text

XmlSource = Union[str, Path, bytes, bytearray, BinaryIO]


class XmlFormatError(ValueError):
    """The input is not the XML format the parser expects (malformed, or another root element)."""


@contextmanager
def open_source(source: XmlSource) -> Iterator[BinaryIO]:
    """A binary stream over ``source``; gzip is detected by its magic bytes, not the file name."""
    if isinstance(source, (bytes, bytearray)):
        raw: BinaryIO = io.BytesIO(bytes(source))
        owned = True
    elif isinstance(source, (str, Path)):
        raw = open(source, "rb")
        owned = True
    else:
        raw, owned = source, False
    try:
        stream: BinaryIO = raw
        if raw.seekable():
            pos = raw.tell()
            head = raw.read(2)
            raw.seek(pos)
        else:
            if not hasattr(raw, "peek"):
                # BufferedReader reads through readinto(), so a stream without peek() must be a raw stream
                stream = io.BufferedReader(cast(io.RawIOBase, raw))
            head = stream.peek(2)[:2]  # type: ignore[attr-defined]
        if head == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=stream)  # type: ignore[assignment]
        yield stream
    finally:
        if owned:
            raw.close()


def iter_records(source: XmlSource, tags: Iterable[str], roots: Iterable[str]) -> Iterator[etree._Element]:
    """Yield each complete element named in ``tags``, then free it. An element nested inside another
    wanted one is left to its ancestor (a ``MedlineCitation`` inside a ``PubmedArticle``). A document
    whose root is neither in ``roots`` nor ``tags`` raises ``XmlFormatError`` (e.g. an esearch answer)."""
    wanted = set(tags)
    allowed = wanted | set(roots)
    with open_source(source) as stream:
        parser = etree.iterparse(
            stream,
            events=("end",),
            tag=tuple(wanted),
            huge_tree=True,
            resolve_entities=False,
            load_dtd=False,
            no_network=True,
            remove_comments=True,
            remove_pis=True,
        )
        try:
            for _, elem in parser:
                if _has_wanted_ancestor(elem, wanted):
                    continue
                yield elem
                elem.clear(keep_tail=True)
                parent = elem.getparent()
                if parent is not None:
                    while elem.getprevious() is not None:
                        del parent[0]
        except etree.XMLSyntaxError as exc:
            raise XmlFormatError(f"malformed XML: {exc}") from None
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise XmlFormatError(f"damaged gzip input: {exc}") from None
        root = parser.root
        if root is not None and root.tag not in allowed:
            raise XmlFormatError(
                f"unexpected root element <{root.tag}>; expected one of " + ", ".join(f"<{t}>" for t in sorted(allowed))
            )


def _has_wanted_ancestor(elem: etree._Element, wanted: set[str]) -> bool:
    return any(a.tag in wanted for a in elem.iterancestors())


def text(elem: etree._Element | None) -> str:
    """All text inside ``elem`` (inline markup dropped), cleaned (``cpqa.sources.clean_text``), whitespace
    collapsed."""
    if elem is None:
        return ""
    value = elem.text if len(elem) == 0 else "".join(elem.itertext())
    return clean_text(value) if value else ""


def to_bytes(elem: etree._Element) -> bytes:
    """The element's own XML, UTF-8, without declaration or tail."""
    return etree.tostring(elem, encoding="UTF-8", xml_declaration=False, with_tail=False)


def as_pmcid(value: str | int) -> str:
    """A PMC ID in NCBI's "PMC1234567" form, whether or not the prefix was given."""
    value = str(value).strip()
    return value if value.upper().startswith("PMC") else f"PMC{value}"
