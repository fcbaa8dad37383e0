//! Build facts written into `/metadata` at `MetadataDetail::Full`: the
//! compiler's version, the target triple and the build profile.

fn main() {
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
