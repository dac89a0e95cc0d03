"""Types of the C accelerator ``_fastscan.c`` (see its header for the contract)."""

from typing_extensions import Buffer

VERSION: int

def scan_run(
    buffer: Buffer,
    offset: int,
    first_line: int,
    previous_qid: bytes | None,
    docnos: Buffer,
    width: int,
    hashes: Buffer,
    scores: Buffer,
    ranks: Buffer | None,
    line_numbers: Buffer | None,
    row: int,
) -> tuple[
    int,
    int,
    int,
    int,
    list[int],
    list[bytes],
    list[tuple[int, bytes, int, int, int]],
    list[tuple[int, bytes]],
    bytes | None,
    tuple[str, int, int, int] | None,
    int,
]: ...
def repeated_hashes(hashes: Buffer, offsets: Buffer) -> bytearray: ...
def topic_tables(hashes: Buffer, offsets: Buffer) -> tuple[bytearray, bytearray]: ...
def lookup_rels(
    slots: Buffer,
    starts: Buffer,
    hashes: Buffer,
    docnos: Buffer,
    width: int,
    qrels_docnos: Buffer,
    qrels_width: int,
    grades: Buffer,
    q_topic: Buffer,
    offsets: Buffer,
    order: Buffer | None,
    order_size: int,
    rel: Buffer,
    rel_size: int,
    first: int,
    last: int,
) -> None: ...
