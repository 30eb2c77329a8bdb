//! Compile-fail tests: every derive error path, with the message rustc shows.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
