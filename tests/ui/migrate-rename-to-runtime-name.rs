// A migration step cannot create a table whose name is made at run time: a rename's new name
// comes from a table declaration, not from a string.
use tabula::Migrations;

fn main() {
    let name: &'static str = Box::leak(format!("accounts-{}", 2).into_boxed_str());
    let _ = Migrations::new().step(2, "rename", |m| m.rename_table("balances", name));
}
