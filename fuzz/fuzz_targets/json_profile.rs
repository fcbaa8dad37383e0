//! The JSON profile reader on any text (and gzip): `ProfileReader`,
//! `read_profile` and the exports.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The reader tells the format by the first bytes: keep it JSON.
    let mut text = Vec::with_capacity(data.len() + 1);
    if !data.starts_with(b"{") && !data.starts_with(&[0x1f, 0x8b]) {
        text.push(b'{');
    }
    text.extend_from_slice(data);
    let path = scope_profiler_fuzz::scratch("profile.json", &text);
    scope_profiler_fuzz::read_everything(&path);
});
