//! Sampled addresses to function, file and line (feature `symbols`), from
//! the binaries' own debug info and symbol tables through addr2line (gimli,
//! object: pure Rust), after the run: the `.sps` file keeps raw addresses
//! and each module's load address.

use std::borrow::Cow;

use addr2line::Loader;

use super::{Place, SampleFile};

/// Places the addresses of one sample file: each module's debug info is
/// loaded once, at its first address. A module that cannot be read (gone
/// since the run, a pseudo-file such as `[vdso]`) places its addresses as
/// `module+0xOFFSET`; one without line tables gives functions from its
/// symbol table, with no file.
///
/// ```
/// use scope_profiler_reader::sps::{SampleFile, Symbolizer, region_samples};
/// let file = SampleFile::default(); // SampleFile::parse(&std::fs::read("run_rank00000.sps")?)?
/// let mut symbols = Symbolizer::new(&file);
/// let by_region = region_samples(&file, None, |module, address| symbols.place(module, address));
/// assert!(by_region.is_empty());
/// ```
pub struct Symbolizer {
    modules: Vec<(String, u64)>,
    /// Each module's loader, made at its first address (`None`: unreadable).
    loaders: Vec<Option<Option<Loader>>>,
}

impl Symbolizer {
    /// A symbolizer for the modules `file` names.
    ///
    /// ```
    /// use scope_profiler_reader::sps::{SampleFile, Symbolizer};
    /// let file = SampleFile {
    ///     modules: vec![("/nonexistent/app".into(), 0x1000)],
    ///     ..SampleFile::default()
    /// };
    /// let mut symbols = Symbolizer::new(&file);
    /// assert_eq!(symbols.place(0, 0x1234).function, "app+0x234");
    /// assert_eq!(symbols.place(-1, 0x99).function, "0x99");
    /// ```
    pub fn new(file: &SampleFile) -> Symbolizer {
        Symbolizer {
            modules: file.modules.clone(),
            loaders: (0..file.modules.len()).map(|_| None).collect(),
        }
    }

    /// Where `address` of module `module` (an index into the file's
    /// modules, -1: unknown) is: the innermost function (an inlined one
    /// if the address is in inlined code), demangled, with its file and
    /// line.
    ///
    /// ```
    /// use scope_profiler_reader::sps::{SampleFile, Symbolizer};
    /// let file = SampleFile {
    ///     modules: vec![("[vdso]".into(), 0x7fff_0000)],
    ///     ..SampleFile::default()
    /// };
    /// // A pseudo-file has no debug info: the module and the offset.
    /// assert_eq!(Symbolizer::new(&file).place(0, 0x7fff_0010).function, "[vdso]+0x10");
    /// ```
    pub fn place(&mut self, module: i32, address: u64) -> Place {
        let Some(m) = usize::try_from(module)
            .ok()
            .filter(|&m| m < self.modules.len())
        else {
            return Place {
                function: format!("{address:#x}"),
                ..Place::default()
            };
        };
        let (path, base) = &self.modules[m];
        let probe = address.wrapping_sub(*base);
        let name = path.rsplit('/').next().unwrap_or(path);
        let unknown = || Place {
            function: format!("{name}+{probe:#x}"),
            ..Place::default()
        };
        let loader = self.loaders[m].get_or_insert_with(|| {
            // A pseudo-file (`[vdso]`) has no file to read.
            if path.starts_with('[') {
                return None;
            }
            Loader::new(path).ok()
        });
        let Some(loader) = loader else {
            return unknown();
        };
        let mut place = Place::default();
        if let Ok(mut frames) = loader.find_frames(probe) {
            while let Ok(Some(frame)) = frames.next() {
                if let Some(function) = &frame.function
                    && let Ok(name) = function.demangle()
                {
                    place.function = name.into_owned();
                    if let Some(at) = &frame.location {
                        place.file = at.file.unwrap_or_default().to_owned();
                        place.line = at.line.unwrap_or(0);
                    }
                    break;
                }
            }
        }
        if place.function.is_empty() {
            match loader.find_symbol(probe) {
                Some(symbol) => {
                    place.function =
                        addr2line::demangle_auto(Cow::Borrowed(symbol), None).into_owned();
                }
                None => return unknown(),
            }
            if place.file.is_empty()
                && let Ok(Some(at)) = loader.find_location(probe)
            {
                place.file = at.file.unwrap_or_default().to_owned();
                place.line = at.line.unwrap_or(0);
            }
        }
        place
    }
}

impl std::fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbolizer")
            .field("modules", &self.modules.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sps::Sample;

    #[inline(never)]
    fn a_function_to_find() -> u64 {
        std::hint::black_box(7)
    }

    /// This test binary's own function, found by its address (the module's
    /// base from `/proc/self/maps`, as the runtime writes it).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_function_of_this_binary_is_placed() {
        let here = a_function_to_find as *const () as u64;
        let exe = std::env::current_exe().unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let base = maps
            .lines()
            .filter(|l| l.ends_with(exe.to_str().unwrap()))
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let start = u64::from_str_radix(f.next()?.split('-').next()?, 16).ok()?;
                let offset = u64::from_str_radix(f.nth(1)?, 16).ok()?;
                Some(start - offset)
            })
            .min()
            .unwrap();
        let file = SampleFile {
            modules: vec![(exe.to_string_lossy().into_owned(), base)],
            samples: vec![Sample {
                region: 0,
                module: 0,
                address: here,
            }],
            ..SampleFile::default()
        };
        let mut symbols = Symbolizer::new(&file);
        let place = symbols.place(0, here);
        assert!(place.function.ends_with("a_function_to_find"), "{place:?}");
        assert!(place.file.ends_with("symbols.rs"), "{place:?}");
        assert!(place.line > 0, "{place:?}");
        assert_eq!(a_function_to_find(), 7);
    }
}
