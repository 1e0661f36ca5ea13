//! The committed C header must be exactly what cbindgen generates from the current source, so a
//! doc comment or signature change cannot ship without its header. Regenerate with
//! `TASKDAG_BLESS=1 cargo test --test header`.

use std::path::Path;

#[test]
fn committed_header_matches_cbindgen_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen could not parse the crate")
        .write(&mut generated);
    let header = root.join("include/taskdag.h");
    if std::env::var_os("TASKDAG_BLESS").is_some() {
        std::fs::write(&header, &generated).expect("write include/taskdag.h");
        return;
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/taskdag.h is stale: it differs from what cbindgen generates from src/capi. \
         Regenerate it with `TASKDAG_BLESS=1 cargo test --test header` and commit it."
    );
}
