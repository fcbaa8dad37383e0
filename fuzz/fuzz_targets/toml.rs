//! `Options::from_toml` on any bytes: `Ok` or an `Error::Config` naming the
//! file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scope_profiler::{Error, Options};

fuzz_target!(|data: &[u8]| {
    let path = scope_profiler_fuzz::scratch("config.toml", data);
    match Options::from_toml(&path) {
        Ok(_) => {}
        Err(Error::Config { path: named, .. }) => assert_eq!(named, path),
        Err(e) => panic!("not a configuration error: {e}"),
    }
});
