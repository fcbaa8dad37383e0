//! Build facts written into `/metadata` at `MetadataDetail::Full`: the
//! compiler's version, the target triple and the build profile; and what the
//! linked HDF5 library can do, from the versions `hdf5-sys` reports.

fn main() {
    // `H5Pset_file_locking` exists from 1.10.7 in the 1.10 series and from
    // 1.12.1 on (hdf5-sys declares it under the same condition).
    let has = |v: &str| std::env::var_os(format!("DEP_HDF5_VERSION_{v}")).is_some();
    // H5Dget_chunk_info_by_coord (the stored size of a chunk): 1.10.5.
    println!("cargo::rustc-check-cfg=cfg(hdf5_chunk_info)");
    if has("1_10_5") {
        println!("cargo::rustc-cfg=hdf5_chunk_info");
    }
    println!("cargo::rustc-check-cfg=cfg(hdf5_file_locking)");
    if (has("1_10_7") && !has("1_12_0")) || has("1_12_1") {
        println!("cargo::rustc-cfg=hdf5_file_locking");
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SCOPE_PROFILER_RUSTC_VERSION={version}");
    for (name, var) in [
        ("SCOPE_PROFILER_TARGET", "TARGET"),
        ("SCOPE_PROFILER_PROFILE", "PROFILE"),
    ] {
        let value = std::env::var(var).unwrap_or_else(|_| "unknown".into());
        println!("cargo:rustc-env={name}={value}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
