#!/usr/bin/env python3
"""Inspects a libmdbx 0.14 data file (mdbx.dat) without libmdbx, for power-cut images.

    python3 patches/mdbx-pages.py DIR/mdbx.dat

Prints the three meta pages (transaction ID, steady/weak/none signature, boot ID, roots),
how many pages carry each transaction ID, and then, for each steady meta page from the
newest, every page reachable from its GC and main trees (named tables, nested dup trees and
large pages included) whose header is wrong: a page number that is not its own, or a
transaction ID newer than the snapshot's (or than its parent page's). Such a page was written
by a later transaction over a page that snapshot still uses. Little-endian files only; page
layout from libmdbx 0.14.4's mdbx-internals.h (page_t, meta_t, tree_t, node_t)."""
import struct
import sys

PAGEHDRSZ = 20
P_BRANCH, P_LEAF, P_LARGE, P_META, P_DUPFIX, P_SUBP = 1, 2, 4, 8, 0x20, 0x40
N_BIG, N_TREE, N_DUP = 1, 2, 4


def tree(b, off):
    flags, height, dupfix, root, br, lf, lg, seq, items, mod = struct.unpack_from("<HHIIIIIQQQ", b, off)
    return dict(flags=flags, height=height, root=root, branch=br, leaf=lf, large=lg, items=items, mod_txnid=mod)


def meta(b, pgno, ps):
    off = pgno * ps + PAGEHDRSZ
    magic = struct.unpack_from("<Q", b, off)[0]
    txnid_a = struct.unpack_from("<Q", b, off + 8)[0]
    lower, upper, now, first_unalloc = struct.unpack_from("<IIII", b, off + 24)
    pagesize = struct.unpack_from("<I", b, off + 44)[0]
    gc = tree(b, off + 40)
    main = tree(b, off + 88)
    sign = struct.unpack_from("<Q", b, off + 168)[0]
    txnid_b = struct.unpack_from("<Q", b, off + 176)[0]
    bootid = b[off + 192: off + 208].hex()
    return dict(slot=pgno, magic=magic, txnid=txnid_a if txnid_a == txnid_b else None, txnid_a=txnid_a,
                txnid_b=txnid_b, sign=("none" if sign == 0 else "weak" if sign == 1 else "steady"),
                first_unallocated=first_unalloc, now=now, pagesize=pagesize, gc=gc, main=main, bootid=bootid[:8])


class Walker:
    def __init__(self, b, ps, limit):
        self.b, self.ps, self.limit = b, ps, limit
        self.seen = {}
        self.bad = []

    def hdr(self, pgno):
        off = pgno * self.ps
        if off + PAGEHDRSZ > len(self.b):
            return None
        txnid, ksize, flags, lower, upper, pg = struct.unpack_from("<QHHHHI", self.b, off)
        return dict(txnid=txnid, flags=flags, lower=lower, upper=upper, pgno=pg,
                    pages=lower | (upper << 16))

    def page(self, pgno, front, path):
        h = self.hdr(pgno)
        if h is None:
            self.bad.append((path, pgno, "beyond the end of the file"))
            return None
        self.seen[pgno] = (h["txnid"], path)
        problems = []
        if h["pgno"] != pgno:
            problems.append(f"header says pgno {h['pgno']}")
        if h["txnid"] > self.limit:
            problems.append(f"txnid {h['txnid']} > meta {self.limit}")
        elif h["txnid"] > front:
            problems.append(f"txnid {h['txnid']} > parent's {front}")
        if problems:
            self.bad.append((path, pgno, f"flags {h['flags']:#x}, txnid {h['txnid']}: " + "; ".join(problems)))
        return h

    def nodes(self, pgno):
        off = pgno * self.ps
        h = self.hdr(pgno)
        n = h["lower"] >> 1
        for i in range(n):
            e = struct.unpack_from("<H", self.b, off + PAGEHDRSZ + 2 * i)[0]
            no = off + PAGEHDRSZ + e
            if no + 8 > len(self.b):
                return
            dsize, nflags, extra, ksize = struct.unpack_from("<IBBH", self.b, no)
            key = self.b[no + 8: no + 8 + ksize]
            data_off = no + 8 + ksize
            yield dsize, nflags, key, data_off

    def walk(self, root, path, front, depth=0):
        if root == 0xFFFFFFFF:
            return
        if depth > 64:
            self.bad.append((path, root, "too deep"))
            return
        h = self.page(root, front, path)
        if h is None or root in self.visiting:
            return
        t = h["flags"] & 0x7F
        if t & P_BRANCH:
            self.visiting.add(root)
            for dsize, nflags, key, doff in self.nodes(root):
                self.walk(dsize, path, h["txnid"], depth + 1)  # child_pgno shares dsize's slot
            self.visiting.discard(root)
        elif t & P_LEAF and not t & P_DUPFIX:
            for dsize, nflags, key, doff in self.nodes(root):
                if nflags & N_BIG:
                    lp = struct.unpack_from("<I", self.b, doff)[0]
                    self.page(lp, h["txnid"], path + f" big[{key[:8].hex()}]")
                elif nflags & N_TREE:
                    t2 = tree(self.b, doff)
                    name = key.decode("utf-8", "replace") if not nflags & N_DUP else key[:8].hex()
                    self.walk(t2["root"], path + "/" + name, h["txnid"], depth + 1)
        elif t & P_DUPFIX or t & P_LARGE:
            pass
        else:
            self.bad.append((path, root, f"unexpected page flags {h['flags']:#x}"))

    def run(self, m):
        self.visiting = set()
        self.walk(m["gc"]["root"], "GC", m["txnid"])
        self.walk(m["main"]["root"], "Main", m["txnid"])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: mdbx-pages.py PATH/mdbx.dat")
    path = sys.argv[1]
    b = open(path, "rb").read()
    ps = struct.unpack_from("<I", b, PAGEHDRSZ + 44)[0] or 4096
    metas = [meta(b, i, ps) for i in range(3)]
    print(f"{path}: {len(b)} bytes, page size {ps}, {len(b)//ps} pages")
    for m in metas:
        print(f"  meta{m['slot']}: txnid {m['txnid_a']}/{m['txnid_b']} {m['sign']} boot {m['bootid']} "
              f"main root {m['main']['root']} gc root {m['gc']['root']} first_unallocated {m['first_unallocated']}")
    # Every page's txnid, for reference.
    txnids = {}
    for pg in range(3, len(b) // ps):
        h = struct.unpack_from("<Q", b, pg * ps)[0]
        txnids.setdefault(h, []).append(pg)
    print("  page txnids in the file:", {k: len(v) for k, v in sorted(txnids.items())})
    steady = [m for m in metas if m["txnid"] is not None and m["sign"] == "steady"]
    for m in sorted(steady, key=lambda m: -m["txnid"]):
        w = Walker(b, ps, m["txnid"])
        w.run(m)
        print(f"  snapshot of steady meta{m['slot']} (txnid {m['txnid']}): {len(w.seen)} pages reachable, "
              f"{len(w.bad)} bad")
        for p, pg, what in w.bad[:20]:
            print(f"    page {pg} in {p}: {what}")


main()
