//! The run description stored as `/metadata` attributes.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::clock::Anchor;
use crate::options::Options;
use crate::profile::MetaValue;

/// The `/metadata` attributes of a session with `options`, started at
/// `wall_start` (wall clock) and `start`, ending at `end`.
pub(crate) fn run_metadata(
    options: &Options,
    wall_start: SystemTime,
    start: Anchor,
    end: Anchor,
) -> Vec<(String, MetaValue)> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    let omp = std::env::var("OMP_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(cores);
    let entries: Vec<(&str, MetaValue)> = vec![
        ("label", options.get_label().into()),
        ("timestamp", iso8601(wall_start).into()),
        ("hostname", hostname().into()),
        ("platform", platform().into()),
        ("chip_information", chip().into()),
        ("total_cores", cores.into()),
        ("omp_num_threads", omp.into()),
        ("mpi_size", 1i64.into()),
        ("num_nodes", 1i64.into()),
        ("start_time_ns", start.ns.into()),
        ("finalize_time_ns", end.ns.into()),
        ("source", "rust".into()),
        ("source_language", "rust".into()),
        (
            "scope_profiler_rust_version",
            env!("CARGO_PKG_VERSION").into(),
        ),
    ];
    entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// `s` as a JSON string literal, quoted and escaped (RFC 8259). The runtime
/// writes a few JSON values into string attributes; a JSON crate would
/// bring trait impls into every user's crate (see the crate's dependency
/// policy in ARCHITECTURE.md), so this one function does it.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    crate::value::write_json_string(&mut out, s);
    out
}

/// `2026-12-02T11:15:15.202952+00:00`, as Python's `datetime.isoformat()`.
pub(crate) fn iso8601(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:06}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is passed.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// `Linux-<release>-<machine>`, like Python's `platform.platform()` prefix.
fn platform() -> String {
    // SAFETY: utsname is plain old data; all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return std::env::consts::OS.to_owned();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{}-{}-{}",
        field(&u.sysname),
        field(&u.release),
        field(&u.machine)
    )
}

fn chip() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn iso8601_matches_python() {
        let t = UNIX_EPOCH + Duration::from_micros(1_796_210_115_202_952);
        assert_eq!(iso8601(t), "2026-12-02T11:15:15.202952+00:00");
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000000+00:00");
    }

    #[test]
    fn host_description_is_filled() {
        assert!(!hostname().is_empty());
        assert!(platform().contains('-'));
        assert!(!chip().is_empty());
    }
}
