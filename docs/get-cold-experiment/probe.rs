//! get_cold experiment: the same libmdbx 0.14.4 with its branchless binary search (default) or
//! a branchy one (flag `mdbx_exp_branchy`, patched into mdbx.c), and heed, over identical data,
//! timed in interleaved rounds in one process.
use std::ffi::{CString, c_void};
use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use heed::types::Bytes;
use mdbx_sys as sys;

unsafe extern "C" {
    static mut mdbx_exp_branchy: libc::c_int;
}

fn check(rc: i32, what: &str) {
    assert_eq!(rc, 0, "{what}: {rc}");
}

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

fn value32(i: u64) -> [u8; 32] {
    let mut v = [0u8; 32];
    for c in v.chunks_exact_mut(8) {
        c.copy_from_slice(&i.to_le_bytes());
    }
    v
}

fn val(b: &[u8]) -> sys::MDBX_val {
    sys::MDBX_val { iov_base: b.as_ptr() as *mut c_void, iov_len: b.len() }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let entries: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let gets: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(500_000);
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(7);
    let page: isize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(-1);
    let mut rng = XorShift(0x5EED_0001);
    let keys: Vec<u64> = (0..gets).map(|_| rng.below(entries)).collect();

    // libmdbx env
    let dir = tempfile::tempdir().unwrap();
    let mut env: *mut sys::MDBX_env = ptr::null_mut();
    let txn_r;
    let dbi;
    unsafe {
        check(sys::mdbx_env_create(&mut env), "create");
        check(sys::mdbx_env_set_option(env, sys::MDBX_opt_max_db, 101), "maxdb");
        check(sys::mdbx_env_set_geometry(env, -1, -1, 8 << 30, 16 << 20, -1, page), "geo");
        let p = CString::new(dir.path().to_str().unwrap()).unwrap();
        check(sys::mdbx_env_open(env, p.as_ptr(), sys::MDBX_SYNC_DURABLE, 0o644), "open");
        let mut txn: *mut sys::MDBX_txn = ptr::null_mut();
        check(sys::mdbx_txn_begin_ex(env, ptr::null_mut(), sys::MDBX_TXN_READWRITE, &mut txn, ptr::null_mut()), "begin");
        for i in 0..100 {
            let n = CString::new(format!("t{i:05}")).unwrap();
            let mut d = 0;
            check(sys::mdbx_dbi_open(txn, n.as_ptr(), sys::MDBX_CREATE, &mut d), "dbi");
        }
        let mut d = 0;
        check(sys::mdbx_dbi_open(txn, c"kv".as_ptr(), sys::MDBX_CREATE, &mut d), "dbi");
        dbi = d;
        for i in 0..entries {
            let k = i.to_be_bytes();
            let v = value32(i);
            let kk = val(&k);
            let mut vv = val(&v);
            check(sys::mdbx_put(txn, dbi, &kk, &mut vv, sys::MDBX_APPEND), "put");
        }
        check(sys::mdbx_txn_commit_ex(txn, ptr::null_mut()), "commit");
        let mut r: *mut sys::MDBX_txn = ptr::null_mut();
        check(sys::mdbx_txn_begin_ex(env, ptr::null_mut(), sys::MDBX_TXN_RDONLY, &mut r, ptr::null_mut()), "rbegin");
        txn_r = r;
    }
    let mdbx_pass = |mode: i32| -> f64 {
        unsafe { mdbx_exp_branchy = mode };
        let t = Instant::now();
        let mut sum = 0usize;
        for k in &keys {
            let kb = k.to_be_bytes();
            let kk = val(&kb);
            let mut data = sys::MDBX_val { iov_base: ptr::null_mut(), iov_len: 0 };
            let rc = unsafe { sys::mdbx_get(txn_r, dbi, &kk, &mut data) };
            assert_eq!(rc, 0);
            sum += data.iov_len;
        }
        assert_eq!(black_box(sum), keys.len() * 32);
        t.elapsed().as_nanos() as f64 / keys.len() as f64
    };

    // heed env
    let hdir = tempfile::tempdir().unwrap();
    let henv = unsafe {
        heed::EnvOpenOptions::new().map_size(8 << 30).max_dbs(101).open(hdir.path())
    }
    .unwrap();
    let wtxn = henv.write_txn().unwrap();
    let hdb = henv
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            for i in 0..100 {
                opener.create_database::<Bytes, Bytes>(wtxn, Some(&format!("t{i:05}")))?;
            }
            let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("kv"))?;
            for i in 0..entries {
                db.put_with_flags(wtxn, heed::PutFlags::APPEND, &i.to_be_bytes(), &value32(i))?;
            }
            Ok(heed::CommitOrAbort::<_, ()>::Commit(db))
        })
        .unwrap()
        .unwrap_commit();
    let hr = henv.read_txn().unwrap();
    let heed_pass = || -> f64 {
        let t = Instant::now();
        let mut sum = 0usize;
        for k in &keys {
            sum += hdb.get(&hr, &k.to_be_bytes()).unwrap().map_or(0, <[u8]>::len);
        }
        assert_eq!(black_box(sum), keys.len() * 32);
        t.elapsed().as_nanos() as f64 / keys.len() as f64
    };

    // warm up
    mdbx_pass(0);
    mdbx_pass(1);
    mdbx_pass(2);
    heed_pass();
    let names = ["mdbx_branchless", "mdbx_branchy", "mdbx_prefetch", "heed"];
    let mut res: Vec<Vec<f64>> = vec![vec![]; 4];
    for r in 0..rounds {
        for j in 0..4 {
            let i = (j + r) % 4;
            let ns = match i {
                0 => mdbx_pass(0),
                1 => mdbx_pass(1),
                2 => mdbx_pass(2),
                _ => heed_pass(),
            };
            res[i].push(ns);
        }
    }
    println!("entries {entries} gets {gets} rounds {rounds} page {page}");
    for (n, mut v) in names.iter().zip(res) {
        let all: Vec<String> = v.iter().map(|x| format!("{x:.0}")).collect();
        v.sort_by(f64::total_cmp);
        println!(
            "{n:<16} min {:>7.1} median {:>7.1} max {:>7.1}  [{}]",
            v[0],
            v[v.len() / 2],
            v[v.len() - 1],
            all.join(" ")
        );
    }
    drop(hr);
    unsafe {
        sys::mdbx_txn_abort_ex(txn_r, ptr::null_mut());
        sys::mdbx_env_close_ex(env, false);
    }
}
