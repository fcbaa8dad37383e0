//! What the linked HDF5 library can do, from the versions `hdf5-sys`
//! reports (its `DEP_HDF5_VERSION_*` variables, seen only by a crate that
//! depends on it directly).

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
    println!("cargo:rerun-if-changed=build.rs");
}
