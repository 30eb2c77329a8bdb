#!/usr/bin/env python3
"""What a commit's write calls cost by their length, on this machine's page cache.

Writes a 280 MiB file (the size of big_txn's 1M-entry commit) with pwritev calls of 4 MiB
(libmdbx 0.14.4: osal_ioring_add merges contiguous pages up to MAX_IO_BYTES), 256 KiB (LMDB:
MDB_COMMIT_PAGES) and 64 KiB (patches/libmdbx-0.14.4-write-chunks.patch), each into a
preallocated file (libmdbx grows its file with fallocate), pausing before each so the pages
freed by the previous file go back to the free lists, and prints the time of the writes alone
and, where the kernel has it, how much free memory it reported to the hypervisor meanwhile
(virtio-balloon free page reporting).

    python3 patches/write-size-probe.py [DIR] [PAUSE_SECONDS] [ROUNDS]

DIR (default: the current directory) must be on the file system under test; the file is
removed afterwards. Nothing else changes.
"""
import os
import sys
import time

TOTAL = 280 << 20
CHUNKS = (4 << 20, 256 << 10, 64 << 10)
REPORTED = "/sys/module/page_reporting/parameters/reported_kib"
ORDER = "/sys/module/page_reporting/parameters/page_reporting_order"


def reported_kib():
    try:
        with open(REPORTED) as f:
            return int(f.read())
    except OSError:
        return None


def write_file(path, chunk, pages):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        step = 16 << 20
        for end in range(step, TOTAL + step, step):
            os.posix_fallocate(fd, 0, end)
        start = time.perf_counter()
        offset = 0
        while offset < TOTAL:
            written = os.pwritev(fd, [pages[i % len(pages)] for i in range(chunk // 4096)], offset)
            assert written == chunk, f"short write: {written} of {chunk}"
            offset += chunk
        return time.perf_counter() - start
    finally:
        os.close(fd)
        os.unlink(path)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "."
    pause = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    path = os.path.join(directory, f"write-size-probe.{os.getpid()}")
    pages = [os.urandom(4096) for _ in range(1024)]
    if os.path.exists(ORDER):
        with open(ORDER) as f:
            print(f"free page reporting on, order {f.read().strip()} and above")
    else:
        print("no free page reporting on this kernel")
    for r in range(rounds):
        for chunk in CHUNKS:
            time.sleep(pause)
            before = reported_kib()
            seconds = write_file(path, chunk, pages)
            after = reported_kib()
            note = "" if before is None else f"; reported meanwhile {(after - before) >> 10} MiB"
            print(
                f"round {r + 1}: {chunk >> 10:5} KiB calls: {seconds * 1e3:7.1f} ms "
                f"({TOTAL / seconds / 1e6:5.0f} MB/s){note}",
                flush=True,
            )


if __name__ == "__main__":
    main()
