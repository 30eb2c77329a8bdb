//! Migrations: version 1 of an application writes data; version 2 renames a table, adds a field
//! to its value type (a transform), adds a table and drops one. Both versions run in sequence
//! against the same directory; the example prints the plan, the progress and the data after.
//!
//! Run with `cargo run --example migrate`.

use serde::{Deserialize, Serialize};
use tabula::{Migrations, Options};

/// Version 1 of the application.
mod v1 {
    use super::*;
    use tabula::{Schema, Table};

    #[derive(Debug, Serialize, Deserialize)]
    pub struct User {
        pub name: String,
    }

    #[derive(Table)]
    #[table(name = "people", key = u64, value = User)]
    pub struct People;

    #[derive(Table)]
    #[table(name = "sessions", key = u64, value = String)]
    pub struct Sessions;

    #[derive(Schema)]
    pub struct App(People, Sessions);
}

/// Version 2: `people` becomes `users` with an e-mail field, `sessions` goes, `logins` comes.
mod v2 {
    use super::*;
    use tabula::{Schema, Table};

    #[derive(Debug, Serialize, Deserialize)]
    pub struct User {
        pub name: String,
        pub email: Option<String>,
    }

    #[derive(Table)]
    #[table(name = "users", key = u64, value = User)]
    pub struct Users;

    #[derive(Table)]
    #[table(name = "logins", key = (u64, u64), value = ())]
    pub struct Logins;

    #[derive(Schema)]
    pub struct App(Users, Logins);

    /// Declared next to the schema; applied once, at the first open of version 2.
    pub fn migrations() -> Migrations {
        Migrations::new()
            .batch_size(2_000)
            .step(2, "users-with-email", |m| {
                m.rename_table::<Users>("people");
                m.transform::<Users, v1::User>(|old| User {
                    email: old
                        .name
                        .starts_with('a')
                        .then(|| format!("{}@example.org", old.name)),
                    name: old.name,
                });
                m.drop_table("sessions");
            })
            .on_progress(|p| {
                println!(
                    "  progress: v{} {} — {}: {}/{}",
                    p.version, p.step, p.operation, p.done, p.total
                )
            })
    }
}

const NAMES: [&str; 4] = ["ada", "brian", "alan", "grace"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("app");

    println!("== version 1: create and fill");
    {
        let db = tabula::open::<v1::App>(&path, Options::new())?;
        let mut tx = db.write()?;
        let mut people = tx.appender::<v1::People>()?;
        for id in 0..10_000u64 {
            let name = format!("{}{id}", NAMES[id as usize % NAMES.len()]);
            people.append(&id, &v1::User { name })?;
        }
        drop(people);
        tx.put::<v1::Sessions>(&1, &"token".to_string())?;
        tx.commit()?;
        println!("  wrote 10000 people and 1 session");
    }

    println!("== version 2: plan (nothing is written)");
    let plan = tabula::plan::<v2::App>(&path, &v2::migrations())?;
    print!("{plan}");

    println!("== version 2: open (applies the step)");
    let (db, report) = tabula::open_with::<v2::App>(&path, Options::new(), &v2::migrations())?;
    println!(
        "  applied {:?}; created {:?}; now at version {}",
        report.applied, report.created, report.version
    );
    let tx = db.read()?;
    for entry in tx.range::<v2::Users>(0..4) {
        let (id, user) = entry?;
        println!("  users[{id}] = {user:?}");
    }
    println!(
        "  {} users, {} logins",
        tx.len::<v2::Users>()?,
        tx.len::<v2::Logins>()?
    );
    drop(tx);
    drop(db);

    println!("== version 2 again: nothing left to do");
    let (_db, report) = tabula::open_with::<v2::App>(&path, Options::new(), &v2::migrations())?;
    println!("  applied {:?}", report.applied);
    Ok(())
}
