//! The reader on structure-aware edits of real files: ours, the Python
//! package's and the C API's (see `scope_profiler_fuzz::edit`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|script: &[u8]| {
    let bytes = scope_profiler_fuzz::edit(script);
    let path = scope_profiler_fuzz::scratch("structured.h5", &bytes);
    scope_profiler_fuzz::read_everything(&path);
});
