//! The files mapped into the process (`/proc/self/maps`): where each
//! executable or shared object was loaded, so that a sampled address can be
//! told as a file and an offset in it after the run.

#![forbid(unsafe_code)]

use crate::platform::Module;

/// The mapped files of this process, read now; empty if the maps cannot be
/// read.
pub fn modules() -> Vec<Module> {
    match std::fs::read_to_string("/proc/self/maps") {
        Ok(maps) => parse_maps(&maps, is_fixed_address),
        Err(_) => Vec::new(),
    }
}

/// Whether the ELF file at `path` is a fixed-address executable
/// (`ET_EXEC`), whose addresses are its own: its base is then 0.
fn is_fixed_address(path: &str) -> bool {
    use std::io::Read;
    let mut header = [0u8; 18];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| {
            &header[..4] == b"\x7fELF" && {
                let e_type = match header[5] {
                    2 => u16::from_be_bytes([header[16], header[17]]),
                    _ => u16::from_le_bytes([header[16], header[17]]),
                };
                e_type == 2
            }
        })
}

/// The modules of a `/proc/PID/maps` text: each file's executable ranges
/// and its base (the address of its offset 0; 0 for a file `fixed` says is
/// a fixed-address executable). Pseudo-files (`[vdso]`) are kept, with
/// their name; anonymous mappings and malformed lines are skipped.
pub(crate) fn parse_maps(maps: &str, fixed: impl Fn(&str) -> bool) -> Vec<Module> {
    let mut out: Vec<Module> = Vec::new();
    for line in maps.lines() {
        let mut fields = line.split_ascii_whitespace();
        let (Some(range), Some(perms), Some(offset), Some(_dev), Some(_inode)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        // The path is the rest of the line (it may hold spaces).
        let path = fields.collect::<Vec<_>>().join(" ");
        if path.is_empty() || !(path.starts_with('/') || path.starts_with('[')) {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end), Ok(offset)) = (
            u64::from_str_radix(start, 16),
            u64::from_str_radix(end, 16),
            u64::from_str_radix(offset, 16),
        ) else {
            continue;
        };
        if end <= start {
            continue;
        }
        let at = match out.iter().position(|m| m.path == path) {
            Some(at) => at,
            None => {
                out.push(Module {
                    base: u64::MAX,
                    ranges: Vec::new(),
                    path,
                });
                out.len() - 1
            }
        };
        let m = &mut out[at];
        m.base = m.base.min(start.saturating_sub(offset));
        if perms.as_bytes().get(2) == Some(&b'x') {
            m.ranges.push((start, end));
        }
    }
    out.retain(|m| !m.ranges.is_empty());
    for m in &mut out {
        if m.path.starts_with('/') && fixed(&m.path) {
            m.base = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
5600a0000000-5600a0010000 r--p 00000000 08:01 123 /usr/bin/my prog
5600a0010000-5600a0050000 r-xp 00010000 08:01 123 /usr/bin/my prog
5600a0050000-5600a0060000 rw-p 00050000 08:01 123 /usr/bin/my prog
5600a1000000-5600a1100000 rw-p 00000000 00:00 0 [heap]
7f0000000000-7f0000020000 r--p 00000000 08:01 456 /lib/libc.so.6
7f0000020000-7f0000180000 r-xp 00020000 08:01 456 /lib/libc.so.6
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0 [vdso]
garbage line
zz-yy r-xp 0 0 0 /bad
400000-401000 r-xp 00000000 08:01 789 /opt/fixed
";

    #[test]
    fn each_file_has_its_base_and_executable_ranges() {
        let mods = parse_maps(MAPS, |p| p == "/opt/fixed");
        let names: Vec<&str> = mods.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(
            names,
            ["/usr/bin/my prog", "/lib/libc.so.6", "[vdso]", "/opt/fixed"]
        );
        assert_eq!(mods[0].base, 0x5600a0000000);
        assert_eq!(mods[0].ranges, [(0x5600a0010000, 0x5600a0050000)]);
        assert_eq!(mods[1].base, 0x7f0000000000);
        assert_eq!(mods[2].base, 0x7ffc00000000);
        assert_eq!(
            mods[3].base, 0,
            "a fixed-address executable's own addresses"
        );
    }

    #[test]
    fn this_process_maps_its_own_code() {
        let here = this_process_maps_its_own_code as *const () as u64;
        let mods = modules();
        let m = mods
            .iter()
            .find(|m| m.ranges.iter().any(|&(s, e)| s <= here && here < e))
            .expect("the test's own code is mapped");
        let exe = std::env::current_exe().unwrap();
        assert_eq!(std::path::Path::new(&m.path), exe.as_path());
        assert!(m.base <= here);
    }
}
