//! zyfa-sys found libzyfa.so (DEP_ZYFA_LIB_DIR); an rpath to it lets this crate's tests and examples run
//! from `cargo test` without LD_LIBRARY_PATH. A library user's own binaries link as they choose.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_ZYFA_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_ZYFA_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
