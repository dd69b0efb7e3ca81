//! Bad attributes are compile errors that point at the field: each file in
//! `tests/ui/` must fail to build with the message in its `.stderr`
//! (regenerate with `TRYBUILD=overwrite` after a deliberate change).

#[test]
fn bad_attributes_point_at_the_field() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
