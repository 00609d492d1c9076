//! Finds libzyfa.so; never builds it (CMake does). Search order: ZYFA_LIB_DIR (the folder that holds
//! libzyfa.so), ZYFA_DIR (an install prefix: its lib/ or lib64/), `pkg-config zyfa`, and last the
//! linker's default path. Explicit variables come first so a build tree wins over an installed copy.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const LIBRARY_FILE: &str = "libzyfa.so";

fn from_lib_dir() -> Option<PathBuf> {
    env::var_os("ZYFA_LIB_DIR").map(PathBuf::from)
}

fn from_prefix() -> Option<PathBuf> {
    let prefix = PathBuf::from(env::var_os("ZYFA_DIR")?);
    ["lib", "lib64", "."]
        .iter()
        .map(|sub| prefix.join(sub))
        .find(|dir| dir.join(LIBRARY_FILE).exists())
}

fn from_pkg_config() -> Option<PathBuf> {
    let output = Command::new("pkg-config").args(["--libs-only-L", "zyfa"]).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout)
        .ok()?
        .split_whitespace()
        .find_map(|flag| flag.strip_prefix("-L").map(PathBuf::from))
}

fn main() {
    for var in ["ZYFA_LIB_DIR", "ZYFA_DIR", "PKG_CONFIG_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let dir = from_lib_dir().or_else(from_prefix).or_else(from_pkg_config);
    if let Some(dir) = dir.as_deref() {
        if !Path::new(dir).join(LIBRARY_FILE).exists() {
            println!("cargo:warning=zyfa-sys: {} has no {LIBRARY_FILE}", dir.display());
        }
        println!("cargo:rustc-link-search=native={}", dir.display());
        // Dependents read it as DEP_ZYFA_LIB_DIR (the `links` key), e.g. to set an rpath for their tests.
        println!("cargo:lib_dir={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=zyfa");
}
