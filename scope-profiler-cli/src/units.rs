//! Figures as people read them, for every output of the CLI (text
//! tables, notes): below both `stats` and `text`, which use it.

/// A duration in ns as 3-4 significant digits with a unit.
pub(crate) fn duration(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a >= 1e9 {
        (ns / 1e9, "s")
    } else if a >= 1e6 {
        (ns / 1e6, "ms")
    } else if a >= 1e3 {
        (ns / 1e3, "us")
    } else {
        return format!("{ns:.0} ns");
    };
    if v.abs() >= 100.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}
