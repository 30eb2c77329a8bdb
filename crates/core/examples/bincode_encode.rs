//! An encode micro-benchmark for callgrind: `Bincode<T>::encode` (Tabula's own serializer)
//! against what it called before, the `bincode` 2 crate's `encode_into_std_write` with
//! `config::standard()` into the same reused buffer. Instruction counts do not depend on the
//! machine's load:
//!
//! ```text
//! cargo build --release -p tabula-core --example bincode_encode
//! for enc in tabula bincode; do for n in 0 100000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/bincode_encode $enc row $n 2>&1 | grep 'refs'
//! done; done
//! ```
//!
//! (the `n = 0` run is the fixed start-up cost to subtract; per encode = difference / n).
//! Values: `row` is the benchmarks' typed row (what `--only upsert` puts), `blob` a 100-byte
//! `Vec<u8>` (a serde sequence of `u8`), `mixed` a nested struct with an enum, an option, a
//! vector of integers and a map.

use std::collections::BTreeMap;
use std::hint::black_box;

use serde::Serialize;
use tabula_core::{Bincode, Value};

#[derive(Serialize, serde::Deserialize)]
struct Row {
    id: u64,
    amount: u64,
    name: String,
    flags: u32,
    hash: [u8; 32],
}

#[derive(Serialize, serde::Deserialize)]
enum Kind {
    Transfer { from: u64, to: u64 },
    Mint(u128),
    Burn,
}

#[derive(Serialize, serde::Deserialize)]
struct Mixed {
    kind: Kind,
    memo: Option<String>,
    amounts: Vec<i64>,
    tags: BTreeMap<u16, bool>,
    fee: f64,
}

fn rows() -> Vec<Row> {
    (0..64u64)
        .map(|i| Row {
            id: i,
            amount: i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1 << 63,
            name: format!("account-{i:04}"),
            flags: (i as u32) << 12,
            hash: [i as u8; 32],
        })
        .collect()
}

fn blobs() -> Vec<Vec<u8>> {
    (0..64u8).map(|i| vec![i; 100]).collect()
}

fn mixed() -> Vec<Mixed> {
    (0..64u64)
        .map(|i| Mixed {
            kind: match i % 3 {
                0 => Kind::Transfer {
                    from: i,
                    to: i << 20,
                },
                1 => Kind::Mint(u128::from(i) << 70),
                _ => Kind::Burn,
            },
            memo: (i % 2 == 0).then(|| format!("memo {i}")),
            amounts: (0..8).map(|j| (i as i64 - 4) * 1000 * j).collect(),
            tags: (0..3).map(|j| (j * 300, j % 2 == 0)).collect(),
            fee: i as f64 / 7.0,
        })
        .collect()
}

fn run<T>(values: &[T], tabula: bool, n: usize) -> usize
where
    T: Serialize + serde::de::DeserializeOwned,
{
    let mut scratch = Vec::with_capacity(256);
    for v in values {
        let ours = Bincode::<T>::encode(v, &mut scratch).unwrap().to_vec();
        let theirs = bincode::serde::encode_to_vec(v, bincode::config::standard()).unwrap();
        assert_eq!(ours, theirs, "the two encoders disagree");
    }
    let mut sum = 0usize;
    for i in 0..n {
        let v = black_box(&values[i % values.len()]);
        let bytes: &[u8] = if tabula {
            Bincode::<T>::encode(v, &mut scratch).unwrap()
        } else {
            scratch.clear();
            bincode::serde::encode_into_std_write(v, &mut scratch, bincode::config::standard())
                .unwrap();
            &scratch
        };
        sum = sum.wrapping_add(bytes.len() + usize::from(bytes[bytes.len() / 2]));
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bincode_encode tabula|bincode row|blob|mixed N";
    let [enc, value, n] = args.as_slice() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let tabula = match enc.as_str() {
        "tabula" => true,
        "bincode" => false,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let Ok(n) = n.parse::<usize>() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let sum = match value.as_str() {
        "row" => run(&rows(), tabula, n),
        "blob" => run(&blobs(), tabula, n),
        "mixed" => run(&mixed(), tabula, n),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    println!("{enc} {value} x{n}: checksum {sum}");
}
