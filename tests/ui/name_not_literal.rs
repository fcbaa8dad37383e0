use scope_profiler::profile;

#[profile(name = solver)]
fn by_ident() {}

#[profile(42)]
fn by_number() {}

#[profile(concat!("a", "b"))]
fn by_macro() {}

fn main() {
    by_ident();
    by_number();
    by_macro();
}
