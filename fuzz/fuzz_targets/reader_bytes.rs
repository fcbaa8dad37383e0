//! The reader on any bytes (HDF5, JSON, gzip or neither).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = scope_profiler_fuzz::scratch("bytes", data);
    scope_profiler_fuzz::read_everything(&path);
});
