//! Value codecs on a realistic value set: size and get cost of `Zstd<Bincode<T>>` and of
//! `ZstdDict<Bincode<T>, D>` (with a dictionary trained from the table by
//! `Step::train_zstd_dictionary`) against `Bincode<T>` alone, and what writing into the page (`put_reserve`) and reading in place
//! (`get_ref`) cost against `put` and `get`.
//!
//! The values are transaction receipts as applications store them: a few fixed fields and the
//! receipt as JSON text (addresses and hashes in hex, a varying number of logs), 200 B to 2 KB
//! each. The generator is seeded: the seed is printed, `VALUE_CODECS_SEED` replays one.
//!
//! ```text
//! cargo build --release -p tabula-bench --example value_codecs
//! target/release/examples/value_codecs                 # sizes and timings (medians of 3)
//! # instructions per get, repeatable on a loaded machine (N and 2N gets, difference / N):
//! for n in 20000 40000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/value_codecs get_zstd $n 2>&1 | grep Collected
//! done
//! ```
//!
//! Paths for callgrind: `get_bincode`, `get_zstd`, `get_zstd_dict` (typed gets of the
//! receipts), `get_pod`,
//! `get_ref_pod` (a 96-byte `Pod` value copied out or viewed in place), `put_big`,
//! `put_reserve_big` (a 256 KiB raw value assembled from two parts: into a buffer then `put`,
//! or straight into the page).

use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tabula::zerocopy::byteorder::{LittleEndian, U64};
use tabula::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};
use tabula::{
    Bincode, Migrations, Options, Pod, Raw, Schema, Table, Value, Zstd, ZstdDict, ZstdDictionary,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Receipt {
    block: u64,
    index: u32,
    status: bool,
    gas_used: u64,
    /// The receipt as JSON text.
    json: String,
}

#[derive(Table)]
#[table(name = "plain", key = u64, value = Receipt)]
struct Plain;

#[derive(Table)]
#[table(name = "zstd", key = u64, value = Receipt, codec = Zstd<Bincode<Receipt>>)]
struct Compressed;

#[derive(Table)]
#[table(name = "zstd1", key = u64, value = Receipt, codec = Zstd<Bincode<Receipt>, 1>)]
struct Compressed1;

#[derive(Table)]
#[table(name = "zstd19", key = u64, value = Receipt, codec = Zstd<Bincode<Receipt>, 19>)]
struct Compressed19;

/// The dictionary of the receipts, stored in the database.
struct ReceiptDictionary;

impl ZstdDictionary for ReceiptDictionary {
    const NAME: &'static str = "receipts";
}

#[derive(Table)]
#[table(name = "zstd_dict", key = u64, value = Receipt,
        codec = ZstdDict<Bincode<Receipt>, ReceiptDictionary>)]
struct CompressedDict;

/// Values sampled to train the dictionary, and its size at most.
const DICT_SAMPLES: usize = 5_000;
const DICT_SIZE: usize = 32 << 10;

#[derive(Debug, Clone, PartialEq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[zerocopy(crate = "tabula::zerocopy")]
#[repr(C)]
struct Account {
    nonce: U64<LittleEndian>,
    balance: [u8; 32],
    code_hash: [u8; 32],
    storage_root: [u8; 24],
}

#[derive(Table)]
#[table(name = "accounts", key = u64, value = Account, codec = Pod<Account>)]
struct Accounts;

#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Schema)]
struct App(
    Plain,
    Compressed,
    Compressed1,
    Compressed19,
    CompressedDict,
    Accounts,
    Blobs,
);

/// xorshift64*: small, seeded, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn hex(&mut self, bytes: usize) -> String {
        let mut s = String::from("0x");
        for _ in 0..bytes {
            s.push_str(&format!("{:02x}", self.next() as u8));
        }
        s
    }
}

/// A receipt of 200 B to 2 KB: from, to, value, gas and 0–5 logs of 1–4 topics and some data.
/// Addresses come from a pool of 50 (accounts recur, as they do on a chain).
fn receipt(rng: &mut Rng, pool: &[String], n: u64) -> Receipt {
    let mut logs = Vec::new();
    for _ in 0..rng.below(6) {
        let topics: Vec<String> = (0..1 + rng.below(4))
            .map(|_| format!("\"{}\"", rng.hex(32)))
            .collect();
        let data = rng.below(64) as usize;
        logs.push(format!(
            "{{\"address\":\"{}\",\"topics\":[{}],\"data\":\"{}\"}}",
            pool[rng.below(pool.len() as u64) as usize],
            topics.join(","),
            rng.hex(data)
        ));
    }
    let json = format!(
        "{{\"from\":\"{}\",\"to\":\"{}\",\"value\":\"{}\",\"gasPrice\":\"{}\",\"type\":\"0x2\",\
         \"contractAddress\":null,\"logs\":[{}]}}",
        pool[rng.below(pool.len() as u64) as usize],
        pool[rng.below(pool.len() as u64) as usize],
        rng.below(1 << 50),
        rng.below(1 << 30),
        logs.join(",")
    );
    Receipt {
        block: 17_000_000 + n / 150,
        index: (n % 150) as u32,
        status: rng.below(20) != 0,
        gas_used: 21_000 + rng.below(500_000),
        json,
    }
}

const N: u64 = 20_000;
const BIG: usize = 256 << 10;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let seed: u64 = std::env::var("VALUE_CODECS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_cafe);
    let which = std::env::args().nth(1).unwrap_or_default();
    let gets: u64 = std::env::args()
        .nth(2)
        .map_or(200_000, |s| s.parse().unwrap());
    let mut rng = Rng(seed | 1);
    let pool: Vec<String> = (0..50).map(|_| rng.hex(20)).collect();
    let receipts: Vec<Receipt> = (0..N).map(|n| receipt(&mut rng, &pool, n)).collect();

    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<App>(dir.path(), Options::new().max_size(4 << 30)).unwrap();
    let mut tx = db.write().unwrap();
    for (n, r) in receipts.iter().enumerate() {
        let n = n as u64;
        tx.put::<Plain>(&n, r).unwrap();
        tx.put::<Compressed>(&n, r).unwrap();
        if which.is_empty() {
            tx.put::<Compressed1>(&n, r).unwrap();
            tx.put::<Compressed19>(&n, r).unwrap();
        }
        if which.is_empty() || which == "get_zstd_dict" {
            tx.put::<CompressedDict>(&n, r).unwrap();
        }
        tx.put::<Accounts>(
            &n,
            &Account {
                nonce: U64::new(n),
                balance: [n as u8; 32],
                code_hash: [7; 32],
                storage_root: [9; 24],
            },
        )
        .unwrap();
    }
    tx.commit().unwrap();
    drop(db);
    // The migration step trains the dictionary from the table and re-encodes it.
    let migrations = Migrations::new().step(2, "receipts-dictionary", |m| {
        m.train_zstd_dictionary::<CompressedDict>(DICT_SAMPLES, DICT_SIZE)
    });
    let trained = Instant::now();
    let (db, _) =
        tabula::open_with::<App>(dir.path(), Options::new().max_size(4 << 30), &migrations)
            .unwrap();
    let trained = trained.elapsed();

    // The callgrind paths: the work only, checked through `sum`.
    let mut sum = 0u64;
    let key = |i: u64| i.wrapping_mul(7919) % N;
    let parts = (vec![1u8; BIG / 2], vec![2u8; BIG / 2]);
    match which.as_str() {
        "" => {}
        "get_bincode" | "get_zstd" | "get_zstd_dict" => {
            let tx = db.read().unwrap();
            for i in 0..gets {
                let r = match which.as_str() {
                    "get_zstd" => tx.get::<Compressed>(&key(i)),
                    "get_zstd_dict" => tx.get::<CompressedDict>(&key(i)),
                    _ => tx.get::<Plain>(&key(i)),
                };
                sum += r.unwrap().unwrap().json.len() as u64;
            }
        }
        "get_pod" => {
            let tx = db.read().unwrap();
            for i in 0..gets {
                sum += tx.get::<Accounts>(&key(i)).unwrap().unwrap().nonce.get();
            }
        }
        "get_ref_pod" => {
            let tx = db.read().unwrap();
            for i in 0..gets {
                sum += tx
                    .get_ref::<Accounts>(&key(i))
                    .unwrap()
                    .unwrap()
                    .nonce
                    .get();
            }
        }
        "put_big" | "put_reserve_big" => {
            let mut tx = db.write().unwrap();
            for i in 0..gets {
                if which == "put_big" {
                    let mut value = Vec::with_capacity(BIG);
                    value.extend_from_slice(&parts.0);
                    value.extend_from_slice(&parts.1);
                    tx.put::<Blobs>(&(i % 64), &value).unwrap();
                } else {
                    tx.put_reserve::<Blobs, _>(&(i % 64), BIG, |room| {
                        room.write_all(&parts.0)?;
                        room.write_all(&parts.1)
                    })
                    .unwrap()
                    .unwrap();
                }
                sum += 1;
            }
        }
        other => panic!("unknown path {other}"),
    }
    if !which.is_empty() {
        println!("{}", black_box(sum));
        return;
    }

    println!("seed {seed} (VALUE_CODECS_SEED replays it); {N} receipts");
    let tx = db.read().unwrap();
    let mut scratch = Vec::new();
    let plain_total: usize = receipts
        .iter()
        .map(|r| Bincode::<Receipt>::encode(r, &mut scratch).unwrap().len())
        .sum();
    let (min, max) = receipts.iter().fold((usize::MAX, 0), |(lo, hi), r| {
        let n = Bincode::<Receipt>::encode(r, &mut scratch).unwrap().len();
        (lo.min(n), hi.max(n))
    });
    println!(
        "bincode values: {min}..{max} bytes, mean {}",
        plain_total / N as usize
    );
    println!(
        "\n| codec | stored bytes (mean) | vs bincode | table pages × page size | get, ns (median of 3) |"
    );
    println!("|---|---|---|---|---|");
    fn row<T>(tx: &tabula::RoTx<'_, App>, name: &str, plain_total: usize, receipts: &[Receipt])
    where
        App: tabula::Contains<T>,
        T: Table<Key = u64, Value = Receipt>,
    {
        let stored: usize = (0..N)
            .map(|n| tx.get_bytes::<T>(&n).unwrap().unwrap().len())
            .sum();
        let stat = tx.stat::<T>().unwrap();
        let pages = stat.branch_pages + stat.leaf_pages + stat.overflow_pages;
        let mut times = Vec::new();
        for _round in 0..3 {
            let start = Instant::now();
            let mut check = 0usize;
            for i in 0..200_000u64 {
                let k = i.wrapping_mul(7919) % N;
                let r = tx.get::<T>(&k).unwrap().unwrap();
                check += r.json.len();
                debug_assert_eq!(r, receipts[k as usize]);
            }
            times.push(start.elapsed().as_nanos() as f64 / 200_000.0);
            black_box(check);
        }
        // Every value reads back as written.
        for (n, r) in receipts.iter().enumerate() {
            assert_eq!(&tx.get::<T>(&(n as u64)).unwrap().unwrap(), r);
        }
        println!(
            "| {name} | {} | {:.2} | {} KiB | {:.0} |",
            stored / N as usize,
            stored as f64 / plain_total as f64,
            pages * stat.page_size as u64 / 1024,
            median(times)
        );
    }
    row::<Plain>(&tx, "`Bincode<Receipt>`", plain_total, &receipts);
    row::<Compressed1>(&tx, "`Zstd<Bincode<Receipt>, 1>`", plain_total, &receipts);
    row::<Compressed>(
        &tx,
        "`Zstd<Bincode<Receipt>>` (level 3)",
        plain_total,
        &receipts,
    );
    row::<Compressed19>(&tx, "`Zstd<Bincode<Receipt>, 19>`", plain_total, &receipts);
    row::<CompressedDict>(
        &tx,
        &format!(
            "`ZstdDict<Bincode<Receipt>, _>` (level 3; a {} KiB dictionary from {DICT_SAMPLES} \
             values, trained and applied in {:.1} s)",
            DICT_SIZE >> 10,
            trained.as_secs_f64()
        ),
        plain_total,
        &receipts,
    );

    // Borrowed against owned: a 96-byte Pod value.
    let time = |f: &dyn Fn(u64) -> u64| {
        let mut times = Vec::new();
        for _round in 0..3 {
            let start = Instant::now();
            let mut s = 0u64;
            for i in 0..1_000_000u64 {
                s = s.wrapping_add(f(i.wrapping_mul(7919) % N));
            }
            black_box(s);
            times.push(start.elapsed().as_nanos() as f64 / 1e6);
        }
        median(times)
    };
    println!("\n| read of a 96-byte `Pod` value | ns (median of 3) |\n|---|---|");
    println!(
        "| `get` (copied out) | {:.0} |",
        time(&|k| tx.get::<Accounts>(&k).unwrap().unwrap().nonce.get())
    );
    println!(
        "| `get_ref` (viewed in place) | {:.0} |",
        time(&|k| tx.get_ref::<Accounts>(&k).unwrap().unwrap().nonce.get())
    );
    drop(tx);

    // A 256 KiB value assembled from two parts: into a buffer then `put`, or into the page.
    println!("\n| write of a 256 KiB raw value from two parts | µs (median of 3) |\n|---|---|");
    for reserve in [false, true] {
        let mut times = Vec::new();
        for _round in 0..3 {
            let mut tx = db.write().unwrap();
            let start = Instant::now();
            for i in 0..256u64 {
                if reserve {
                    tx.put_reserve::<Blobs, _>(&(i % 64), BIG, |room| {
                        room.write_all(&parts.0)?;
                        room.write_all(&parts.1)
                    })
                    .unwrap()
                    .unwrap();
                } else {
                    let mut value = Vec::with_capacity(BIG);
                    value.extend_from_slice(&parts.0);
                    value.extend_from_slice(&parts.1);
                    tx.put::<Blobs>(&(i % 64), &value).unwrap();
                }
            }
            times.push(start.elapsed().as_nanos() as f64 / 256.0 / 1000.0);
            let stored = tx.get_bytes::<Blobs>(&3).unwrap().unwrap();
            assert!(
                stored[..BIG / 2].iter().all(|&b| b == 1)
                    && stored[BIG / 2..].iter().all(|&b| b == 2)
            );
            tx.abort();
        }
        println!(
            "| {} | {:.1} |",
            if reserve {
                "`put_reserve`"
            } else {
                "`put` of a `Vec`"
            },
            median(times)
        );
    }
}
