//! # Tabula: typed tables on libmdbx
//!
//! Declare your tables with `#[derive(Table)]`, list them in one `#[derive(Schema)]`, and open
//! the database once at startup. That one step creates or verifies every table and opens every
//! table handle. From then on a table is an array index by a compile-time constant: no name
//! lookup, no hash map, no lock and no `mdbx_dbi_open` on a request path. Using a table that is
//! not in the schema does not compile.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tabula::{Options, Schema, Table};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! struct Header { parent: u64, miner: String }
//!
//! #[derive(Table)]
//! #[table(key = u64, value = Header)]          // name defaults to "Headers"
//! struct Headers;
//!
//! #[derive(Table)]
//! #[table(name = "owners", key = String, value = u64)]
//! struct Owners;
//!
//! #[derive(Schema)]
//! struct Chain(Headers, Owners);                // IDs 0 and 1, fixed at compile time
//!
//! # fn main() -> tabula::Result<()> {
//! # let dir = tabula::__doc::temp_dir();
//! let db = tabula::open::<Chain>(dir.path(), Options::new())?;
//!
//! let mut tx = db.write()?;
//! tx.put::<Headers>(&1, &Header { parent: 0, miner: "alice".into() })?;
//! tx.put::<Owners>("alice", &1)?;
//! tx.commit()?;
//!
//! let tx = db.read()?;
//! assert_eq!(tx.get::<Owners>("alice")?, Some(1));
//! assert_eq!(tx.get::<Headers>(&1)?.unwrap().miner, "alice");
//! # Ok(()) }
//! ```
//!
//! ## Declaring tables
//!
//! `#[derive(Table)]` goes on a unit struct with a `#[table(..)]` attribute:
//!
//! | key | meaning |
//! |---|---|
//! | `key = K` | the key type: anything implementing [`Key`] (required) |
//! | `value = V` | the value type (required) |
//! | `name = "..."` | the table's name in the file (default: the struct's name) |
//! | `codec = C` | how values are stored: a [`Value`] codec (default [`Bincode<V>`]; [`Raw`] for bytes) |
//! | `dupsort` | several values per key, kept in their order (see [Dupsort tables](#dupsort-tables)) |
//! | `subkey = S` | with `dupsort`: each value is a `(S, V)` pair, sorted and sought by `S` |
//! | `integer_key` | native-endian `u32`/`u64` keys compared as integers (`MDBX_INTEGERKEY`) |
//!
//! Names starting with `__tabula` are reserved. The derive is the supported way to implement
//! [`Table`] and [`Schema`]: it checks names, key types and codecs at compile time. No seal on a
//! trait a macro implements can be airtight (the macro's output lives in your crate), so what a
//! hand-written implementation could get wrong — an empty, reserved or repeated name — is
//! checked again when the database is opened, and refused there.
//!
//! ## Keys
//!
//! Keys are stored so that byte order equals the key type's [`Ord`]: integers big-endian (signed
//! ones with the sign bit flipped), `bool`, `char`, `[u8; N]` raw, `String` and `Vec<u8>`
//! self-delimiting when they are not the last part of a composite key, `Option<K>` with a tag
//! byte, tuples and `#[derive(Key)]` structs as their parts in order. Fixed-size keys encode on
//! the stack. Typed calls take any borrowed form of the key ([`AsKey`]): `&str` for `String`,
//! `("alice", 5)` for `(String, u64)`.
//!
//! ```
//! use tabula::Key;
//!
//! #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
//! struct AccountAt { account: String, block: u64 }   // sorts by account, then block
//! ```
//!
//! A composite key can be scanned by prefix: [`Reads::prefix`] with its first field (or a tuple of
//! its first fields).
//!
//! ## Values
//!
//! Values use serde + bincode 2 by default. `codec = tabula::Raw` stores `Vec<u8>` as is, and
//! any type implementing [`Value`] can be named as a codec. [`Reads::get_bytes`] borrows the stored
//! bytes without copying, for as long as the transaction is borrowed.
//!
//! ### Values without copies
//!
//! A [`ValueRef`] codec decodes *in place*: [`Reads::get_ref`] and [`Iter::borrowed`] return
//! values that borrow the page, for as long as the transaction is borrowed. [`Raw`] gives the
//! bytes; [`Pod<T>`] gives a `&T` view of a fixed-layout struct (derived with
//! [`zerocopy`]; the page is not aligned, so `T` is `Unaligned` and its
//! integers are `zerocopy::byteorder` types, byte order in the type). Any codec can be read
//! lazily: [`Reads::get_lazy`] and [`Iter::lazy`] hand out [`Lazy`] values, the stored bytes
//! decoded only on [`Lazy::decode`]. The other way, [`Tx::put_reserve`] lends the [`Room`]
//! libmdbx reserved in the page (`MDBX_RESERVE`), so a `Raw` value is written once, where it
//! is stored; `put` does the same by itself for a codec that knows its encoded length
//! ([`Value::encoded_len`]).
//!
//! ```
//! use tabula::zerocopy::byteorder::{LittleEndian, U64};
//! use tabula::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};
//! use tabula::{Options, Pod, Raw, Schema, Table};
//! use std::io::Write;
//!
//! #[derive(FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
//! #[zerocopy(crate = "tabula::zerocopy")]
//! #[repr(C)]
//! struct Account { nonce: U64<LittleEndian>, balance: [u8; 32] }
//!
//! #[derive(Table)]
//! #[table(key = [u8; 20], value = Account, codec = Pod<Account>)]
//! struct Accounts;
//!
//! #[derive(Table)]
//! #[table(key = u64, value = Vec<u8>, codec = Raw)]
//! struct Blocks;
//!
//! #[derive(Schema)]
//! struct Chain(Accounts, Blocks);
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tabula::__doc::temp_dir();
//! let db = tabula::open::<Chain>(dir.path(), Options::new())?;
//! let mut tx = db.write()?;
//! tx.put::<Accounts>(&[1; 20], &Account { nonce: U64::new(5), balance: [0; 32] })?;
//! let (header, body) = (b"header", vec![7u8; 10_000]);
//! tx.put_reserve::<Blocks, _>(&1, header.len() + body.len(), |room| {
//!     room.write_all(header)?; // straight into the page
//!     room.write_all(&body)
//! })??;
//! tx.commit()?;
//!
//! let tx = db.read()?;
//! let account: &Account = tx.get_ref::<Accounts>(&[1; 20])?.unwrap(); // a view, no copy
//! assert_eq!(account.nonce.get(), 5);
//! for entry in tx.iter::<Blocks>().borrowed() {
//!     let (number, bytes): (u64, &[u8]) = entry?;
//!     assert_eq!((number, &bytes[..6]), (1, &b"header"[..]));
//! }
//! let lazy = tx.get_lazy::<Blocks>(&1)?.unwrap(); // read, not decoded
//! assert_eq!(lazy.bytes().len(), 10_006);
//! # Ok(()) }
//! ```
//!
//! ### Compressed values
//!
//! With the `compression` feature, `codec = tabula::Zstd<tabula::Bincode<T>>` stores each
//! value as a zstd frame (level 3; `Zstd<C, LEVEL>` picks another). The schema records the
//! codec as `zstd(bincode)`, so a table written compressed is never opened as plain bincode,
//! nor the reverse: the open is refused with the migration step that re-encodes the values.
//! Each value is compressed alone, without a dictionary: on 200 B – 2 KB JSON-like records it
//! stored 0.60 of the bytes for about 5× the decode cost in this project's measurements.
//!
//! Small values that resemble each other compress much better with a dictionary:
//! `codec = tabula::ZstdDict<tabula::Bincode<T>, D>`, where `D` implements
//! `ZstdDictionary` and names a dictionary stored in the database (recorded as
//! `zstd_dict(<name>,bincode)`). Until one is trained values are compressed without it; the
//! migration step `m.train_zstd_dictionary::<T>(samples, size)` trains one from the table's
//! values, stores it (every dictionary ever trained stays, so older values keep decoding),
//! makes it current and re-encodes the table. On the same records: 0.39 of the bytes, and
//! gets cheaper than without a dictionary. Dictionaries are loaded at open into a registry of
//! the process (a value's frame names its dictionary by ID only); an open that would give an
//! ID or a dictionary name a different dictionary than another database open in the process
//! uses is refused with `Error::ZstdDictionary`. Give unrelated databases' tables different
//! dictionary names.
//!
//! ## Secondary indexes
//!
//! An index is declared next to its table with [`#[derive(Index)]`](derive@Index), listed in the
//! schema like a table, and kept exact by Tabula: every write of the table that takes an
//! indexed table writes the index entries it changes, in the same write transaction.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tabula::{Index, Options, Schema, Table};
//!
//! #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
//! struct Transfer { from: u32, to: u32, hash: [u8; 4] }
//!
//! #[derive(Table)]
//! #[table(key = u64, value = Transfer, indexed)] // `indexed`: it has indexes
//! struct Transfers;
//!
//! #[derive(Index)]
//! #[index(on = Transfers, key = u32, by = sender)] // several transfers per sender
//! struct BySender;
//! fn sender(_id: &u64, t: &Transfer) -> u32 { t.from }
//!
//! #[derive(Index)]
//! #[index(on = Transfers, key = [u8; 4], unique, by = hash)] // one transfer per hash
//! struct ByHash;
//! fn hash(_id: &u64, t: &Transfer) -> [u8; 4] { t.hash }
//!
//! #[derive(Schema)]
//! struct Indexer(Transfers, BySender, ByHash);
//!
//! # fn main() -> tabula::Result<()> {
//! # let dir = tabula::__doc::temp_dir();
//! let db = tabula::open::<Indexer>(dir.path(), Options::new())?;
//! let mut tx = db.write()?;
//! tx.put::<Transfers>(&1, &Transfer { from: 7, to: 8, hash: *b"aaaa" })?;
//! tx.put::<Transfers>(&2, &Transfer { from: 7, to: 9, hash: *b"bbbb" })?;
//! // A second row with a taken hash: refused, and nothing is written.
//! let taken = tx.put::<Transfers>(&3, &Transfer { from: 1, to: 2, hash: *b"aaaa" });
//! assert!(matches!(taken, Err(tabula::Error::UniqueViolation { index: "ByHash", .. })));
//! tx.commit()?;
//!
//! let tx = db.read()?;
//! assert_eq!(tx.get_unique::<ByHash>(b"bbbb")?.map(|(id, _)| id), Some(2));
//! let from_7: Vec<u64> = tx.by_index::<BySender>(&7).map(|r| r.map(|(id, _)| id)).collect::<Result<_, _>>()?;
//! assert_eq!(from_7, [1, 2]);
//! # Ok(()) }
//! ```
//!
//! The `by` function returns the key, an `Option` of it (`None`: no entry) or a `Vec` of keys
//! (several entries). An index's table maps index key → primary key (`dupsort` unless
//! `unique`); writing it directly does not compile. `put`, `insert`, `append`, `delete`,
//! `delete_range`, `retain`, `pop_first`/`pop_last`, `clear`, the write cursors
//! ([`Tx::cursor_mut`], [`Tx::cursors_mut`]), the [`Tx::appender`] and [`Db::bulk_load`] keep
//! indexes exact (nested transactions too), and so do `put_bytes` and `retain_bytes`;
//! `put_reserve`, which fills the value after the call, does not compile for a table
//! declared `indexed`. Queries by index key are on [`Reads`] (so on [`Tx`] and [`OwnedTx`]):
//! [`get_unique`](Reads::get_unique), [`by_index`](Reads::by_index) (and
//! [`by_index_lazy`](Reads::by_index_lazy), rows decoded when asked),
//! [`index_range`](Reads::index_range), [`index_prefix`](Reads::index_prefix),
//! [`index_count`](Reads::index_count). A new index on a populated table is built by the
//! startup step (a unique one whose rows already collide fails the open, naming two of them,
//! and nothing changes); raise its `version = N` when `by` changes and it is rebuilt; an
//! index dropped from the schema has its table dropped. `docs/design.md` ("Secondary indexes")
//! has the details.
//!
//! ## Opening: the one startup step
//!
//! [`open`], [`open_with_report`] and [`open_with`] (with migration steps) are the only ways to
//! get a [`Db`]. Each runs one startup transaction that creates missing tables, checks the stored
//! flags, key encodings and value structures of existing ones against the declarations (refusing
//! a mismatch with an error naming the table, what changed and the migration step to add; a value
//! type is identified by its structure, not by how its name is spelled), records the schema in
//! the reserved `__tabula_meta` table,
//! commits, and then fills the handle array. [`Options::read_only`] verifies instead of creating.
//! [`Options`] also sets the size bounds, reader slots and [`SyncMode`]; a value libmdbx would
//! refuse is [`Error::InvalidOption`], naming the option and its range, before anything is
//! opened or created.
//!
//! Only a missing or empty data file becomes a new database. A data file too short to hold its
//! meta pages (truncated, or not a database), or a FIFO, socket, device or directory where the
//! data or lock file belongs, is [`Error::BadFile`], and the file is left as it was.
//!
//! libmdbx allows one open of a file per process: open once and share the `Db` (it is
//! `Send + Sync`) with `Arc` or references.
//!
//! ## Migrations
//!
//! When a table's value type, name or flags change, the open refuses the file (naming the table
//! and what changed) until a migration step says how to get there. Steps are numbered:
//! **version 1 is the initial schema** — the tables a new database is created with — so the
//! first step is version 2, and each later step takes the next number. [`open_with`] runs the
//! pending steps in the same startup transaction (in resumable batches for long ones) and
//! records each with a checksum; a new database starts at the latest version without running
//! any. [`plan`] is the dry run.
//!
//! ```
//! use tabula::{Migrations, Options, Schema, Table};
//!
//! // Version 1 stored balances as plain numbers.
//! #[derive(Table)]
//! #[table(name = "balances", key = u64, value = u64)]
//! struct BalancesV1;
//! #[derive(Schema)]
//! struct V1(BalancesV1);
//!
//! // Version 2 keeps them in cents, under a new name.
//! #[derive(Table)]
//! #[table(name = "accounts", key = u64, value = u64)]
//! struct Accounts;
//! #[derive(Schema)]
//! struct V2(Accounts);
//!
//! fn migrations() -> Migrations {
//!     Migrations::new().step(2, "balances in cents", |m| {
//!         m.rename_table::<Accounts>("balances");
//!         m.transform::<Accounts, u64>(|dollars| dollars * 100);
//!     })
//! }
//!
//! # let dir = tabula::__doc::temp_dir();
//! # let path = dir.path();
//! # let db = tabula::open::<V1>(path, Options::new())?;
//! # let mut tx = db.write()?;
//! # tx.put::<BalancesV1>(&1, &5)?;
//! # tx.commit()?;
//! # drop(db);
//! let (db, report) = tabula::open_with::<V2>(path, Options::new(), &migrations())?;
//! assert_eq!(report.applied, [(2, "balances in cents")]);
//! assert_eq!(db.read()?.get::<Accounts>(&1)?, Some(500));
//! # Ok::<(), tabula::Error>(())
//! ```
//!
//! **Every program that opens the file read-write carries the whole list of steps.** The file
//! records its version, and a program whose steps stop below it is refused ("this program knows
//! versions up to 1"), since writing through an older view could undo the migration. A program
//! that only reads — an inspection tool, a read-only sidecar — opens a newer file with
//! [`Options::read_only`] and no steps: that open succeeds when every table it declares matches
//! the file as it is, and names the first table that does not.
//!
//! ## Transactions
//!
//! - [`Db::read`] hands out a read transaction ([`RoTx`]) on the latest snapshot. It reuses
//!   parked libmdbx transactions from a lock-free pool, so many threads reading many short
//!   transactions scale instead of queueing on libmdbx's reader table. While nothing has been
//!   committed since it was parked, a transaction keeps its snapshot and the tables it looked
//!   up, so starting a read costs the same with 10 tables or 10,000; after a commit it first
//!   moves to the latest snapshot, and after the first [`Error::MapFull`] finished reads are
//!   reset instead of parked ([`Options::reuse_read_snapshots`]). A read transaction may move to
//!   another thread; no transaction may be used by two threads at once (`Tx` is not `Sync`).
//! - [`Db::write`] begins the write transaction ([`RwTx`]); it waits for another writer to
//!   finish, must end on the thread that began it (it is not `Send`), and is aborted when dropped
//!   without [`commit`](Tx::commit).
//!
//! Reads: [`get`](Reads::get), [`get_bytes`](Reads::get_bytes), [`get_ref`](Reads::get_ref),
//! [`get_lazy`](Reads::get_lazy), [`contains_key`](Reads::contains_key),
//! [`len`](Reads::len), [`stat`](Reads::stat), [`iter`](Reads::iter), [`range`](Reads::range) (any
//! `RangeBounds` of the key), [`prefix`](Reads::prefix) and [`cursor`](Reads::cursor); on dupsort
//! tables also [`dups`](Reads::dups), [`dups_from`](Reads::dups_from), [`get_dup`](Reads::get_dup),
//! [`seek_dup`](Reads::seek_dup) and [`dup_count`](Reads::dup_count). Iterators are double-ended:
//! `.rev()` walks from the end. A [`Cursor`] moves explicitly: [`seek`](Cursor::seek) finds
//! the first key `>=` the one given (libmdbx's `MDBX_SET_RANGE`),
//! [`seek_exact`](Cursor::seek_exact) the key itself.
//!
//! Writes: [`put`](Tx::put), [`put_reserve`](Tx::put_reserve), [`insert`](Tx::insert) (fails if
//! present), [`append`](Tx::append) and [`appender`](Tx::appender) (sorted appends in one
//! transaction; a key out of order is a clear error; see [Bulk loading](#bulk-loading) for large
//! loads), [`delete`](Tx::delete), [`clear`](Tx::clear), [`delete_range`](Tx::delete_range),
//! [`retain`](Tx::retain), [`pop_first`](Tx::pop_first), [`pop_last`](Tx::pop_last); on dupsort
//! tables [`append_dup`](Tx::append_dup) and [`delete_dup`](Tx::delete_dup). A [`WriteCursor`]
//! ([`cursor_mut`](Tx::cursor_mut), several at once with [`cursors_mut`](Tx::cursors_mut)) reads
//! and writes at its position.
//!
//! ```
//! # use tabula::{Options, Schema, Table};
//! #[derive(Table)]
//! #[table(key = u32, value = String, dupsort)]
//! struct Tags;
//! #[derive(Schema)]
//! struct TagSchema(Tags);
//! # fn main() -> tabula::Result<()> {
//! # let dir = tabula::__doc::temp_dir();
//! let db = tabula::open::<TagSchema>(dir.path(), Options::new())?;
//! let mut tx = db.write()?;
//! for n in 0..10u32 {
//!     tx.append::<Tags>(&n, &format!("first-{n}"))?;
//!     tx.put::<Tags>(&n, &format!("second-{n}"))?;
//! }
//! tx.commit()?;
//!
//! let tx = db.read()?;
//! let last_three: Vec<u32> = tx.range::<Tags>(3..6).keys().rev().collect::<Result<_, _>>()?;
//! assert_eq!(last_three, [5, 5, 4, 4, 3, 3]);           // two values per key
//! let tags: Vec<String> = tx.dups::<Tags>(&7).values().collect::<Result<_, _>>()?;
//! assert_eq!(tags, ["first-7", "second-7"]);
//! # Ok(()) }
//! ```
//!
//! ## Dupsort tables
//!
//! A `dupsort` table keeps several values per key. libmdbx sorts a key's values by their bytes,
//! so Tabula stores them in an order-preserving encoding, and a key's values come back in their
//! type's order. There are two shapes:
//!
//! - **Without a subkey** (`#[table(key = K, value = V, dupsort)]`): the value itself is what
//!   the values sort by. It is stored in its key encoding ([`Ordered`]), so `V` must be a key
//!   type ([`OrderedValue`]: integers, `String`, `[u8; N]`, tuples, `#[derive(Key)]` structs...);
//!   a serde struct is a compile error that says so.
//! - **With a subkey** (`#[table(key = K, subkey = S, value = V, dupsort)]`, the shape of reth's
//!   and Erigon's storage tables): each value is a `(S, V)` pair, stored as `S`'s key encoding
//!   followed by `V` in its codec ([`SubKeyed`]), sorted by `S`. Typed calls take and return
//!   `(subkey, value)` pairs.
//!
//! [`seek_dup`](Reads::seek_dup) finds a key's first value whose subkey (or value) is `>=` the one
//! given with one search of the B-tree (`MDBX_GET_BOTH_RANGE` on a cursor,
//! [`Cursor::seek_dup`]), [`get_dup`](Reads::get_dup) the exact one;
//! [`dups`](Reads::dups) and [`dups_from`](Reads::dups_from) iterate a key's values from either end.
//! These, the cursors' `first_dup` / `last_dup` / `next_dup` / `prev_dup` / `next_no_dup` /
//! `prev_no_dup`, and `append_dup`, compile only for tables declared `dupsort` ([`DupSort`]);
//! [`WriteCursor::upsert_dup`], which replaces a subkey's value, only with a subkey
//! ([`HasSubKey`]).
//!
//! ```
//! use tabula::{Options, Schema, Table};
//!
//! /// Address -> (slot, value), sorted by slot.
//! #[derive(Table)]
//! #[table(key = [u8; 20], subkey = u64, value = u128, dupsort)]
//! struct Storage;
//!
//! /// Block -> the heights it references, sorted as numbers.
//! #[derive(Table)]
//! #[table(key = u64, value = u64, dupsort)]
//! struct Refs;
//!
//! #[derive(Schema)]
//! struct State(Storage, Refs);
//! # fn main() -> tabula::Result<()> {
//! # let dir = tabula::__doc::temp_dir();
//! let db = tabula::open::<State>(dir.path(), Options::new())?;
//! let alice = [0xa1; 20];
//! let mut tx = db.write()?;
//! for (slot, value) in [(300, 3), (5, 1), (256, 2)] {
//!     tx.put::<Storage>(&alice, &(slot, value))?;
//! }
//! for height in [256u64, 255, 70_000] {
//!     tx.put::<Refs>(&1, &height)?;
//! }
//! tx.append_dup::<Refs>(&1, &70_001)?; // greater than every value of key 1
//! tx.commit()?;
//!
//! let tx = db.read()?;
//! let slots: Vec<(u64, u128)> = tx.dups::<Storage>(&alice).values().collect::<Result<_, _>>()?;
//! assert_eq!(slots, [(5, 1), (256, 2), (300, 3)]);
//! assert_eq!(tx.get_dup::<Storage>(&alice, &256)?, Some((256, 2)));
//! assert_eq!(tx.seek_dup::<Storage>(&alice, &257)?, Some((300, 3))); // first slot >= 257
//! let heights: Vec<u64> = tx.dups::<Refs>(&1).values().collect::<Result<_, _>>()?;
//! assert_eq!(heights, [255, 256, 70_000, 70_001]);
//! # Ok(()) }
//! ```
//!
//! A [`WriteCursor`] reads owned entries and writes where it stands, so a table can be pruned
//! while it is walked: after [`delete_current`](WriteCursor::delete_current),
//! [`next`](WriteCursor::next) returns the entry that followed, nothing skipped or repeated.
//! [`Tx::cursors_mut`] opens cursors on several tables at once, to walk a changeset table
//! backwards while restoring the state it records (`examples/chain_state.rs` unwinds blocks that
//! way).
//!
//! ```
//! # use tabula::{Options, Schema, Table};
//! # #[derive(Table)]
//! # #[table(key = [u8; 20], subkey = u64, value = u128, dupsort)]
//! # struct Storage;
//! # #[derive(Schema)]
//! # struct State(Storage);
//! # fn main() -> tabula::Result<()> {
//! # let dir = tabula::__doc::temp_dir();
//! # let db = tabula::open::<State>(dir.path(), Options::new())?;
//! let mut tx = db.write()?;
//! let mut storage = tx.cursor_mut::<Storage>()?;
//! for slot in 0..10u64 {
//!     storage.upsert_dup(&[1; 20], &slot, &u128::from(slot))?;
//! }
//! storage.upsert_dup(&[1; 20], &3, &333)?; // replaces slot 3's value
//! // Delete the even slots while walking.
//! let mut entry = storage.first()?;
//! while let Some((_, (slot, _))) = entry {
//!     if slot % 2 == 0 {
//!         storage.delete_current()?;
//!     }
//!     entry = storage.next()?;
//! }
//! drop(storage);
//! let left: Vec<(u64, u128)> =
//!     tx.dups::<Storage>(&[1; 20]).values().collect::<Result<_, _>>()?;
//! assert_eq!(left, [(1, 1), (3, 333), (5, 5), (7, 7), (9, 9)]);
//! # Ok(()) }
//! ```
//!
//! A database whose dupsort tables were written by Tabula 0.1.0 (values stored with bincode, so
//! in bincode's byte order) is refused at open with the migration step that re-encodes them:
//! [`Step::reencode_dups`].
//! [`Tx::nested`] runs a closure in a transaction nested in the write transaction (libmdbx's
//! nested transactions, a savepoint): what the closure writes is kept when it returns `Ok`, and
//! undone when it returns an error or panics, while the outer transaction goes on.
//!
//! ## Bulk loading
//!
//! [`Db::bulk_load`] fills a table from entries in increasing key order: it appends them
//! through one cursor, commits a batch every 100,000 entries or 64 MiB by itself (without a
//! flush), and makes the whole load durable with one flush at the end, where a loop of
//! `write()` / `commit()` pays one flush per batch. Entries are `(key, value)` pairs, owned or
//! borrowed; a key that does not sort after the one before (or after the table's last key) is
//! [`Error::AppendOutOfOrder`], naming the table and both keys. [`Db::bulk_loader`] sets the
//! batch size and a callback that sees the running [`BulkReport`] after each batch.
//!
//! ```
//! # use tabula::{Options, Raw, Schema, Table};
//! #[derive(Table)]
//! #[table(key = u32, value = Vec<u8>, codec = Raw, integer_key)]
//! struct Log;
//! #[derive(Schema)]
//! struct LogSchema(Log);
//! # fn main() -> tabula::Result<()> {
//! # let dir = tabula::__doc::temp_dir();
//! let db = tabula::open::<LogSchema>(dir.path(), Options::new().max_size(1 << 30))?;
//! let value = vec![0xab; 100];
//!
//! let report = db.bulk_load::<Log>((0..10_000u32).map(|k| (k, &value)))?;
//! assert_eq!((report.entries, report.batches), (10_000, 1));
//!
//! let mut batches = 0;
//! let report = db
//!     .bulk_loader::<Log>()
//!     .batch_entries(1000)                     // or .batch_bytes(..), whichever comes first
//!     .on_batch(|r| batches = r.batches)       // after each commit
//!     .load((10_000..15_000u32).map(|k| (k, &value)))?;
//! assert_eq!((report.entries, batches), (5000, 5));
//!
//! // Keys must keep increasing: 3 is not after 14,999.
//! let err = db.bulk_load::<Log>([(3u32, &value)]).unwrap_err();
//! assert!(matches!(err, tabula::Error::AppendOutOfOrder { table: "Log", .. }));
//! # Ok(()) }
//! ```
//!
//! The load holds the writer lock until it ends; readers see each batch as it commits. If the
//! process or machine dies mid-load, what was committed before the load is intact (in the
//! default [`SyncMode::Durable`]) and the file is consistent: a process crash keeps the batches
//! committed so far, a system crash may roll them back to the last flushed commit. On an error
//! the batch in progress is rolled back and the ones before it stay; resume after the table's
//! last key. On this project's benchmark machine a durable load of 1M 100-byte entries ran
//! ≈ 2–3× faster than durable commits of 1,000 entries each.
//!
//! ## Services and async
//!
//! A [`Db`] is `Send + Sync`: open it once and share it as `Arc<Db<S>>` between threads and
//! tasks. `examples/server.rs` is a tokio service built on what follows.
//!
//! **Directly in an async task: short reads.** [`Db::read`] takes a parked read transaction
//! from a lock-free pool and a point read walks a few pages of the map: together a few
//! microseconds, with no lock and no system call, so a task may do them on the runtime's
//! worker threads like any other short computation. A read transaction is `Send`, so a task may
//! hold one across an `.await`, but it pins its snapshot while it lives: keep it short.
//!
//! **With `spawn_blocking` (or a thread of your own): writes and long work.** A write
//! transaction must commit on the thread that began it ([`RwTx`] is not `Send`), and a commit
//! waits for the disk in [`SyncMode::Durable`]; [`Db::write`] also waits while another writer
//! is active. Begin, write and commit inside one blocking closure. Long scans, [`Db::bulk_load`],
//! [`Db::copy_to`], [`Db::check`] and [`Db::stat`] take time in proportion to the data: move
//! them off the async workers too.
//!
//! **Owned read transactions.** [`Db::read_owned`] (on an `Arc<Db>`) gives an [`OwnedTx`]: the
//! same pooled transaction, but `'static` and `Send`, so it can live in a session struct, be
//! held across `.await`s or move into `spawn_blocking`, and [`OwnedTx::into_range`] turns it
//! into a lazy iterator that owns it ([`OwnedIter`]). It is not `Sync` (libmdbx allows one
//! thread at a time per transaction): give each task its own. Values come out owned, never
//! borrowed from the snapshot, which is what lets such a transaction be cut (below).
//!
//! ```
//! # use tabula::__doc::*;
//! # fn main() -> tabula::Result<()> {
//! # let dir = temp_dir();
//! use std::sync::Arc;
//!
//! let db = Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
//! let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
//! runtime.block_on(async {
//!     // A write: begun and committed on one blocking thread.
//!     let writer = Arc::clone(&db);
//!     tokio::task::spawn_blocking(move || {
//!         let mut tx = writer.write()?;
//!         for n in 0..1000u64 {
//!             tx.put::<Names>(&n, &format!("event {n}"))?;
//!         }
//!         tx.commit()
//!     })
//!     .await
//!     .unwrap()?;
//!
//!     // A short read: directly in the task.
//!     let reader = Arc::clone(&db);
//!     let one = tokio::spawn(async move { reader.read()?.get::<Names>(&1) }).await.unwrap()?;
//!     assert_eq!(one.as_deref(), Some("event 1"));
//!
//!     // A long scan: an owned iterator, moved to a blocking thread.
//!     let events = db.read_owned()?.into_range::<Names>(..);
//!     let count = tokio::task::spawn_blocking(move || events.count()).await.unwrap();
//!     assert_eq!(count, 1000);
//!     Ok(())
//! })
//! # }
//! ```
//!
//! **Long readers.** A read transaction keeps a write from reusing the pages freed after its
//! snapshot, so a forgotten one makes the file grow. [`Options::max_read_age`] bounds an owned
//! transaction's life: used after that age it is cut (its snapshot released) and fails with
//! [`Error::ReadTxnTimedOut`], naming its age; and a write that would otherwise grow the file
//! because of it cuts it between two of its calls. [`Options::on_slow_reader`] puts that
//! decision in your hands (libmdbx's handle-slow-readers hook): it is shown the [`SlowReader`]
//! holding the oldest snapshot, and answers with a [`SlowReaderAction`]. Borrowed
//! transactions from [`Db::read`] hand out slices of their snapshot and are never cut.
//! [`Db::readers`] lists every reader of the file with its snapshot, lag and retained bytes.
//!
//! **Operations.** [`Db::copy_to`] writes a consistent copy of the live database (optionally
//! compacted) while readers and the writer go on; [`Db::sync`] flushes what the no-sync modes
//! left unflushed; [`Db::stat`] reports each table's entries, pages and bytes and the free
//! list. With the `metrics` feature, commits, commit latency, read-transaction ages and cut
//! transactions are recorded through the [`metrics`](https://docs.rs/metrics) facade as they
//! happen, and `Db::record_metrics` sets the gauges (sizes, free space, readers, per-table
//! bytes and entries); [`telemetry`] names them. Install any `metrics` recorder (a Prometheus
//! exporter, ...) to collect them.
//!
//! ## Watching committed changes
//!
//! A service that serves reads learns what changed without polling its tables:
//!
//! - [`Db::subscribe`]: one [`Commit`] (transaction ID, the [`TableSet`] it wrote, time) per
//!   write transaction this process commits, after the commit returned, in commit order; never
//!   for an abort.
//! - [`Db::watch`] / [`Db::watch_prefix`]: one table's [`Change`]s over a key range or prefix,
//!   with the typed key (and a `dupsort` table's value); a nested transaction that aborted
//!   leaves none.
//! - [`Db::follow`]: a [`Follower`] that learns of commits made by any process, by polling its
//!   read snapshot with backoff (libmdbx has no cross-process wake-up); see `examples/follow.rs`.
//!
//! Each receiver has a bounded queue, and a commit never waits for it: a receiver that falls
//! behind gets [`Received::Lagged`] with how many events it missed and the latest ID, and can
//! resync from a snapshot. Nobody watching costs one relaxed atomic load per write and per
//! commit. With the `stream` feature the receivers are `futures_core::Stream`s.
//!
//! ```
//! # use tabula::__doc::*;
//! # use tabula::{Change, Received};
//! # fn main() -> tabula::Result<()> {
//! # let dir = temp_dir();
//! let db = tabula::open::<App>(dir.path(), Options::new())?;
//! let feed = db.subscribe(1024);
//! let big = db.watch::<Numbers>(1000.., 1024);
//! let mut tx = db.write()?;
//! tx.put::<Numbers>(&7, &1)?;
//! tx.put::<Numbers>(&1234, &2)?;
//! tx.commit()?;
//! let Some(Received::Event(commit)) = feed.recv() else { unreachable!() };
//! assert!(commit.tables.contains::<App, Numbers>());
//! let Some(Ok(Received::Event(Change::Put { key, txn, .. }))) = big.recv() else { unreachable!() };
//! assert_eq!((key, txn), (1234, commit.id));
//! # Ok(()) }
//! ```
//!
//! ## Any file, without its schema
//!
//! [`untyped`] opens any Tabula database read-only with no table types: it lists the tables with
//! the key and value encodings the schema record holds for them, and encodes and decodes keys and
//! values at run time ([`untyped::DynKey`], [`untyped::DynValue`]) exactly as the typed codecs
//! do. The `tabula` command-line tool is built on it.
//!
//! ## What does not compile
//!
//! A table that is not in the schema, `put` on a read transaction, a key of the wrong type, a
//! value type without serde impls, a hand-written `impl Table`, a borrowed value or cursor that
//! outlives its transaction, a write transaction sent to another thread, a dup operation on a
//! table without `dupsort`, a subkey operation on a table without a subkey, and a dupsort
//! value type without an order-preserving encoding are all compile errors, each with a message
//! that names the table or type and says what to declare.
//!
//! ## Cargo features
//!
//! All off by default.
//!
//! | Feature | What it adds |
//! |---|---|
//! | `progress` | `Migrations::with_progress_bar`: an indicatif bar on stderr for long migration steps |
//! | `metrics` | `Db::record_metrics` and inline counters: commits, commit latency, read-transaction ages, map use, table sizes, through the `metrics` crate facade |
//! | `compression` | the `Zstd<C>` value codec (the `zstd` crate, which compiles libzstd's C sources) |
//! | `stream` | `CommitReceiver` and `KeyReceiver` implement `futures_core::Stream`, for async services |
//!
//! ## Errors
//!
//! Every fallible call returns [`Error`]. Its messages name what is known at the failure: the
//! table, and the key when the operation had one — as its type's `Debug` shows it
//! (`TxId { block: 0, position: 5 }`) when the key type has `Debug`, else its stored bytes in
//! hex, truncated ([`KeyHex`]); a cursor step such as `next` has a position, not a key; the
//! database path for environment-level failures (begin, commit, open); the libmdbx code by
//! name; and what to do. Damaged bytes give [`Error::Decode`], never a panic.
//!
//! ## Crashes and damaged files
//!
//! A commit that returned survives a process crash in every [`SyncMode`], and an OS crash in
//! the default [`SyncMode::Durable`]. [`Db::check`] runs libmdbx's own integrity check on the
//! latest snapshot. Open a file that may be damaged with [`Options::validation`], so libmdbx
//! checks each page as it loads it. A read transaction kept open longer than
//! [`Options::long_read_warning`] (default 60 s) logs a `tracing` warning when it ends: while
//! it lives, the file cannot reuse pages freed after its snapshot. The repository's test suite
//! kills writers mid-commit, cuts the power under every sync mode on a simulated disk, damages
//! files and fills disks, and checks that each [`SyncMode`] keeps what its documentation
//! promises and that damage is reported, never read as data.

#![forbid(unsafe_code)]

// The README's example is compiled and run with the doc tests, so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// Lets the derives' `::tabula::..` paths resolve inside this crate too (unit tests, examples).
extern crate self as tabula;

// The public surface, item by item and one `use` per group (`#[rustfmt::skip]` keeps each
// group together): nothing of the engine, the startup internals or the command-line tool's
// support is re-exported.

// Opening and the database.
#[rustfmt::skip]
pub use tabula_core::{
    CheckReport, Db, DbInfo, DbStat, Options, SyncMode, TableUsage, libmdbx_version,
    DEFAULT_FLUSH_THRESHOLD, DEFAULT_LONG_READ_WARNING, KEEP_VERSIONS_BATCH,
    open, open_with, open_with_report,
};
// Tables and schemas.
#[rustfmt::skip]
pub use tabula_core::{Contains, DupSort, HasSubKey, Schema, Table, TableFlags, TableInfo};
pub use tabula_core::{
    EntriesError, EntriesFn, Index, IndexCheck, IndexInfo, IndexKeys, IndexProblem, Indexed,
    KeysFn, RawEntry, Unindexed, Unique, Writable,
};
// Transactions and their reads, written once for `Tx` and `OwnedTx` (`Reads`).
#[rustfmt::skip]
pub use tabula_core::{Handle, Mode, Reads, Ro, RoTx, Rw, RwTx, TableStat, Tx, TxHandle};
// Tables declared `history`: versions, reads as of a version, unwind.
pub use tabula_core::{DupChange, HasHistory, History, HistoryCheck, RowHistory, VersionChange};
// Watching committed changes (`Db::subscribe`, `Db::watch`, `Db::follow`).
pub use tabula_core::{
    Change, Commit, CommitReceiver, DEFAULT_WATCH_CAPACITY, Followed, Follower, KeyReceiver,
    Received, TableSet,
};
// Cursors and iterators.
#[rustfmt::skip]
pub use tabula_core::{Appender, Cursor, Iter, Lazy, WriteCursor, WriteCursors};
// Codecs: keys, values, values read in place, written into the page, compressed.
#[rustfmt::skip]
pub use tabula_core::{
    AnyBytes, AsKey, AsPrefix, AsValue, Bincode, DecodeError, Descriptor, EncodeError,
    IntegerKey, Key, KeyBuf, KeyRange, Ordered, OrderedValue, Pod, Raw, Room, SubKeyed, Value,
    ValueOf, ValueRef, ValueTrace, zerocopy,
};
#[cfg(feature = "compression")]
#[rustfmt::skip]
pub use tabula_core::{Zstd, ZstdDict, ZstdDictionary};
// Bulk loading.
#[rustfmt::skip]
pub use tabula_core::{
    BulkEntry, BulkLoad, BulkReport, DEFAULT_BULK_BATCH_BYTES, DEFAULT_BULK_BATCH_ENTRIES,
};
// Services and long jobs: owned read transactions, long-reader control, metrics.
#[rustfmt::skip]
pub use tabula_core::{
    OwnedHandle, OwnedIter, OwnedTx, ReaderInfo, SlowReader, SlowReaderAction,
    telemetry,
};
// Errors.
#[rustfmt::skip]
pub use tabula_core::{Error, KeyHex, MdbxCode, MismatchDetail, Part, Result};
// Schema-less access (what the `tabula` command stands on).
pub use tabula_core::untyped;
// What the compiler names when a transaction is sent or shared across threads (see `Tx`).
#[doc(hidden)]
pub use tabula_core::{
    ATransactionIsUsedByOneThreadAtATime, AWriteTransactionEndsOnTheThreadThatBeganIt,
};
pub use tabula_derive::{History, Index, Key, Schema, Table};
pub use tabula_migrate::{
    DEFAULT_BATCH, MigrationTx, Migrations, Plan, PlannedIndex, PlannedStep, Progress, Report,
    Step, plan,
};

/// What the doc examples share, so that each shows only the call it documents: the tables most
/// examples use, in one schema, and a database in a temporary directory removed on drop. Not
/// public API: no stability promise.
#[doc(hidden)]
pub mod __doc {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU64, Ordering};

    pub use crate::{Db, Options, Raw, Result, Schema, Table};

    /// `u64` keys, `String` values.
    #[derive(Table)]
    #[table(key = u64, value = String)]
    pub struct Names;

    /// A dupsort table: several `String` values per `u64` key, kept in order.
    #[derive(Table)]
    #[table(key = u64, value = String, dupsort)]
    pub struct Topics;

    /// `u64` keys, `u64` values.
    #[derive(Table)]
    #[table(key = u64, value = u64)]
    pub struct Numbers;

    /// A dupsort table of `u32` values.
    #[derive(Table)]
    #[table(key = u64, value = u32, dupsort)]
    pub struct Sets;

    /// Raw byte values.
    #[derive(Table)]
    #[table(key = u64, value = Vec<u8>, codec = Raw)]
    pub struct Blobs;

    /// Balances by `(account, n)`: a composite key, for the prefix and range examples.
    #[derive(Table)]
    #[table(key = (String, u64), value = u64)]
    pub struct Balances;

    /// A dupsort table with a subkey: `(slot, value)` pairs under each `u64` key, in slot order.
    #[derive(Table)]
    #[table(key = u64, subkey = u32, value = String, dupsort)]
    pub struct Storage;

    /// The examples' schema.
    #[derive(Schema)]
    pub struct App(Names, Topics, Numbers, Sets, Blobs, Balances, Storage);

    /// A transfer: a row of the indexed table [`Transfers`].
    #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub struct Transfer {
        /// The sender's account.
        pub from: u32,
        /// The recipient's account.
        pub to: u32,
        /// The transfer's hash, when it has one.
        pub hash: Option<u64>,
    }

    /// Transfers by ID, with two indexes.
    #[derive(Table)]
    #[table(key = u64, value = Transfer, indexed)]
    pub struct Transfers;

    /// Transfers by sender: several per sender.
    #[derive(crate::Index)]
    #[index(on = Transfers, key = u32, by = sender)]
    pub struct BySender;

    /// Transfers by hash: one per hash; a transfer without a hash has no entry.
    #[derive(crate::Index)]
    #[index(on = Transfers, key = u64, unique, by = hash)]
    pub struct ByHash;

    /// [`BySender`]'s key.
    pub fn sender(_id: &u64, transfer: &Transfer) -> u32 {
        transfer.from
    }

    /// [`ByHash`]'s key.
    pub fn hash(_id: &u64, transfer: &Transfer) -> Option<u64> {
        transfer.hash
    }

    /// The indexed examples' schema.
    #[derive(Schema)]
    pub struct Indexer(Transfers, BySender, ByHash);

    /// A transfer from `from` to `to` with `hash`.
    pub fn transfer(from: u32, to: u32, hash: Option<u64>) -> Transfer {
        Transfer { from, to, hash }
    }

    /// A table declared `history`: `u64` keys, `String` values, its changes kept by version.
    #[derive(Table)]
    #[table(key = u64, value = String, history)]
    pub struct Ledger;

    /// [`Ledger`]'s history.
    #[derive(crate::History)]
    #[history(on = Ledger)]
    pub struct LedgerHistory;

    /// A table declared `history` with a composite key `(account, n)`, for the as-of prefix
    /// example.
    #[derive(Table)]
    #[table(key = (String, u64), value = u64, history)]
    pub struct Holdings;

    /// [`Holdings`]' history.
    #[derive(crate::History)]
    #[history(on = Holdings)]
    pub struct HoldingsHistory;

    /// A `dupsort` table with a subkey declared `history`, the shape of reth's storage: an
    /// account (`u64`), its slots (`u64` subkeys) and their values (`u64`).
    #[derive(Table)]
    #[table(key = u64, subkey = u64, value = u64, dupsort, history)]
    pub struct Slots;

    /// [`Slots`]' history.
    #[derive(crate::History)]
    #[history(on = Slots)]
    pub struct SlotsHistory;

    /// The history examples' schema.
    #[derive(Schema)]
    pub struct Chain(
        Ledger,
        LedgerHistory,
        Holdings,
        HoldingsHistory,
        Slots,
        SlotsHistory,
    );

    /// A directory that is removed when dropped.
    #[derive(Debug)]
    pub struct TempDir(PathBuf);

    impl TempDir {
        /// Where it is.
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A new, empty directory under the system's temporary directory.
    ///
    /// # Panics
    ///
    /// When it cannot be created.
    pub fn temp_dir() -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!(
            "tabula-doc-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }

    /// A new database of [`App`] in a new temporary directory.
    ///
    /// # Errors
    ///
    /// As [`crate::open`].
    pub fn open() -> Result<(TempDir, Db<App>)> {
        let dir = temp_dir();
        let db = crate::open::<App>(dir.path(), Options::new())?;
        Ok((dir, db))
    }

    /// A new database of [`Chain`] in a new temporary directory.
    ///
    /// # Errors
    ///
    /// As [`crate::open`].
    pub fn open_chain() -> Result<(TempDir, Db<Chain>)> {
        let dir = temp_dir();
        let db = crate::open::<Chain>(dir.path(), Options::new())?;
        Ok((dir, db))
    }

    /// A closed database of [`Chain`] in a new temporary directory, where [`Ledger`]'s key 7
    /// was written `"one"` at version 1 and `"two"` at version 2: for the schema-less history
    /// examples, which open the file themselves.
    ///
    /// # Errors
    ///
    /// As [`crate::open`] and the writes.
    pub fn ledger_at_two_versions() -> Result<TempDir> {
        let (dir, db) = open_chain()?;
        for (version, value) in [(1, "one"), (2, "two")] {
            let mut tx = db.write()?;
            tx.set_version(version);
            tx.put::<Ledger>(&7, value)?;
            tx.commit()?;
        }
        drop(db);
        Ok(dir)
    }

    /// A database of [`Chain`] in a new temporary directory whose [`Slots`] key 7 held slot
    /// 1 = 10 at version 1, then slot 1 = 11 and slot 2 = 20 at version 2, closed.
    ///
    /// # Errors
    ///
    /// As [`crate::open`].
    pub fn slots_at_two_versions() -> Result<TempDir> {
        let (dir, db) = open_chain()?;
        let mut tx = db.write()?;
        tx.set_version(1);
        tx.put::<Slots>(&7, &(1, 10))?;
        tx.commit()?;
        let mut tx = db.write()?;
        tx.set_version(2);
        tx.cursor_mut::<Slots>()?.upsert_dup(&7, &1, &11)?;
        tx.put::<Slots>(&7, &(2, 20))?;
        tx.commit()?;
        drop(db);
        Ok(dir)
    }

    /// A new database of [`Indexer`] in a new temporary directory.
    ///
    /// # Errors
    ///
    /// As [`crate::open`].
    pub fn open_indexer() -> Result<(TempDir, Db<Indexer>)> {
        let dir = temp_dir();
        let db = crate::open::<Indexer>(dir.path(), Options::new())?;
        Ok((dir, db))
    }
}

/// Items the derive macros expand to. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use tabula_core::__private::*;
}
