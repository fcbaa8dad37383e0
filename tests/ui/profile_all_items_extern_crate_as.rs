// A renaming `extern crate` inside profile_all_items! would build and then
// fail under `cargo test` wherever its name is also passed with `--extern`:
// the error says to move it before the macro. `extern crate x;` stays.
scope_profiler::profile_all_items! {
    always;

    extern crate scope_profiler;
    pub extern crate scope_profiler as sp;

    pub fn label() -> String {
        format!("{:?}", sp::Options::new())
    }
}

fn main() {
    label();
}
