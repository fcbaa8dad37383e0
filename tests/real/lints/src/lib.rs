//! Trait impls whose bodies clippy checks for a canonical shape, instrumented
//! by `#[profile_all]` and `profile_all_items!`.

use std::cmp::Ordering;

pub mod complex;
pub mod file_items;
pub mod futures;

/// A version number.
#[derive(PartialEq, Eq, Debug, Copy)]
pub struct Version(pub u32);

#[scope_profiler::profile_all(always)]
impl Ord for Version {
    fn cmp(&self, rhs: &Self) -> Ordering {
        self.0.cmp(&rhs.0)
    }
}

#[scope_profiler::profile_all(always)]
impl PartialOrd for Version {
    fn partial_cmp(&self, rhs: &Self) -> Option<Ordering> {
        Some(self.cmp(rhs))
    }
}

#[scope_profiler::profile_all(always)]
impl Clone for Version {
    fn clone(&self) -> Self {
        *self
    }
}

/// A version whose canonical methods carry a lone `#[profile]`.
#[derive(PartialEq, Eq, Debug, Copy)]
pub struct Lone(pub u32);

impl Ord for Lone {
    fn cmp(&self, rhs: &Self) -> Ordering {
        self.0.cmp(&rhs.0)
    }
}

impl PartialOrd for Lone {
    #[scope_profiler::profile]
    fn partial_cmp(&self, rhs: &Self) -> Option<Ordering> {
        Some(self.cmp(rhs))
    }
}

impl Clone for Lone {
    #[scope_profiler::profile]
    fn clone(&self) -> Self {
        *self
    }
}

/// Parses a version, recording each call's outcome: `?` and `return` in
/// the body work as without the attribute.
#[scope_profiler::profile(record_outcome, tags = ["parse"])]
pub fn parse_version(text: &str) -> Result<Version, std::num::ParseIntError> {
    let n: u32 = text.trim().parse()?;
    if n == 0 {
        return Ok(Version(1));
    }
    Ok(Version(n))
}

impl Version {
    /// Bumps the version in place (an outcome on a `&mut self` method
    /// returning a plain value).
    #[scope_profiler::profile(record_outcome)]
    pub fn bump(&mut self) -> u32 {
        self.0 += 1;
        self.0
    }
}

/// The tests of this crate set up the process-wide session one at a time.
#[cfg(test)]
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod outcome_tests {
    use super::{Version, parse_version};
    use scope_profiler as sp;

    #[test]
    fn outcomes_record_without_changing_results() {
        let _serial = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        assert_eq!(parse_version(" 3 "), Ok(Version(3)));
        assert_eq!(parse_version("0"), Ok(Version(1)));
        assert!(parse_version("x").is_err());
        let mut v = Version(1);
        assert_eq!(v.bump(), 2);
        let results = sp::finalize().unwrap();
        let profile = results.profile().unwrap();
        let row = |name: &str| {
            let i = profile.region_names.iter().position(|n| n == name).unwrap();
            &profile.rows[i]
        };
        let statuses: Vec<String> = row("parse_version")
            .event_metadata
            .iter()
            .map(|m| format!("{:?}", m[0].1))
            .collect();
        assert_eq!(
            statuses,
            [r#"Str("ok")"#, r#"Str("ok")"#, r#"Str("error")"#]
        );
        assert_eq!(row("parse_version").tags, ["parse"]);
        assert_eq!(row("bump").event_metadata.len(), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::{Lone, Version};
    use crate::file_items::Tag;
    use scope_profiler as sp;

    #[test]
    fn canonical_impls_record() {
        let _serial = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        let a = Version(1);
        #[allow(clippy::clone_on_copy)]
        let b = a.clone();
        assert!(a <= b);
        assert!(Tag(1) < Tag(2));
        #[allow(clippy::clone_on_copy)]
        let lone = Lone(3).clone();
        assert!(lone > Lone(2));
        let results = sp::finalize().unwrap();
        let mut names = results.profile().unwrap().region_names.clone();
        names.sort();
        assert_eq!(
            names,
            [
                "clone",
                "partial_cmp",
                "real_lints::<Version as Clone>::clone",
                "real_lints::<Version as Ord>::cmp",
                "real_lints::<Version as PartialOrd>::partial_cmp",
                "real_lints::file_items::<Tag as Ord>::cmp",
                "real_lints::file_items::<Tag as PartialOrd>::partial_cmp",
            ]
        );
    }
}
