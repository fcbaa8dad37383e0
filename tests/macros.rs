//! `#[profile]`, `#[profile_all]` and `profile_all_items!`, every form,
//! expanded and run with real recording: names, counts and nesting.
//!
//! `deny(warnings)`: an expansion that made a warning appear in user code
//! (`unused_braces`, `unused_mut`, unreachable code...) fails the build.

#![deny(warnings)]

use std::collections::BTreeMap;

use integration_tests::{calls_per_region, count_map, event_range, serial, start_in_memory};
use scope_profiler::{self as sp, Options, Profile, profile, profile_all};

#[path = "macros_file_items.rs"]
mod file_items;

fn calls(name: &str) -> u64 {
    sp::get_region(name).map_or(0, |r| r.num_calls())
}

/// One recorded call: its region, id and parent id.
#[derive(Clone, Debug)]
struct Call {
    region: String,
    id: i64,
    parent: i64,
}

fn recorded_calls(profile: &Profile) -> Vec<Call> {
    let mut out = Vec::new();
    for row in &profile.rows {
        let region = &profile.region_names[row.region_id as usize];
        for i in event_range(row) {
            out.push(Call {
                region: region.clone(),
                id: profile.events.call_ids[i],
                parent: profile.events.parent_ids[i],
            });
        }
    }
    out
}

/// For each call of `region`, the region of its parent call ("" for a root).
fn parents_of(profile: &Profile, region: &str) -> Vec<String> {
    let all = recorded_calls(profile);
    let by_id: BTreeMap<i64, &Call> = all.iter().map(|c| (c.id, c)).collect();
    all.iter()
        .filter(|c| c.region == region)
        .map(|c| {
            by_id
                .get(&c.parent)
                .map_or(String::new(), |p| p.region.clone())
        })
        .collect()
}

// ---- #[profile] and its names ---------------------------------------------

#[profile]
fn solve(x: u32) -> u32 {
    x + 1
}

#[profile("solver")]
fn solve_with_name(x: u32) -> u32 {
    x * 2
}

#[profile(name = "solver")]
fn solve_with_name_value(x: u32) -> u32 {
    x * 3
}

#[test]
fn profile_is_named_after_the_function() {
    let _s = start_in_memory();
    assert_eq!(solve(1), 2);
    assert_eq!(solve(2), 3);
    assert_eq!(calls("solve"), 2);
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    assert_eq!(profile.region_names, ["solve"]);
    // The call site is the function's line, in this file.
    let row = &profile.rows[0];
    assert!(
        row.source_file.ends_with("macros.rs"),
        "{}",
        row.source_file
    );
    let line = include_str!("macros.rs")
        .lines()
        .position(|l| l.starts_with("fn solve(x: u32)"))
        .unwrap() as i64
        + 1;
    assert_eq!(row.source_line, line);
}

#[test]
fn explicit_names_share_one_region_with_sp_region() {
    let _s = start_in_memory();
    assert_eq!(solve_with_name(1), 2);
    assert_eq!(solve_with_name_value(1), 3);
    sp::region("solver").run(|| ());
    {
        let _g = sp::region("solver").enter();
    }
    assert_eq!(calls("solver"), 4);
    let results = sp::finalize().unwrap();
    assert_eq!(results.profile().unwrap().region_names, ["solver"]);
}

// ---- recursive entrypoints and traced functions: the seed example ---------

#[profile("solve_entry", recursive)]
fn solve_entry(b: &[f64]) -> f64 {
    pipeline::run_pipeline(b)
}

#[profile(recursive)]
fn solve_unnamed_entry(b: &[f64]) -> f64 {
    helper_not_traced(b)
}

/// Not instrumented: traced functions reached through it still record.
fn helper_not_traced(b: &[f64]) -> f64 {
    pipeline::run_pipeline(b) + traced_free_fn()
}

#[profile(traced)]
fn traced_free_fn() -> f64 {
    1.0
}

#[profile_all]
mod pipeline {
    pub fn run_pipeline(b: &[f64]) -> f64 {
        b.iter().map(|x| stages::scale(*x)).sum()
    }

    pub mod stages {
        pub fn scale(x: f64) -> f64 {
            x * 1.0
        }
    }
}

#[test]
fn seed_example_entrypoint_records_traced_functions() {
    let _s = start_in_memory();
    // Outside any entrypoint: nothing.
    assert_eq!(pipeline::run_pipeline(&[1.0]), 1.0);
    assert_eq!(traced_free_fn(), 1.0);
    assert!(sp::recorded_regions().is_empty());

    assert_eq!(solve_entry(&[1.0, 2.0]), 3.0);
    // Outside again: still nothing more.
    pipeline::run_pipeline(&[1.0]);

    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    assert_eq!(
        profile.region_names,
        [
            "solve_entry",
            "macros::pipeline::run_pipeline",
            "macros::pipeline::stages::scale"
        ]
    );
    let counts = calls_per_region(profile);
    assert_eq!(counts["solve_entry"], 1);
    assert_eq!(counts["macros::pipeline::run_pipeline"], 1);
    assert_eq!(counts["macros::pipeline::stages::scale"], 2);
    assert_eq!(
        parents_of(profile, "macros::pipeline::run_pipeline"),
        ["solve_entry"]
    );
    assert_eq!(
        parents_of(profile, "macros::pipeline::stages::scale"),
        ["macros::pipeline::run_pipeline"; 2]
    );
    assert_eq!(parents_of(profile, "solve_entry"), [""]);
}

#[test]
fn entrypoint_reaches_traced_functions_through_plain_ones() {
    let _s = start_in_memory();
    assert_eq!(solve_unnamed_entry(&[2.0]), 3.0);
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let counts = calls_per_region(profile);
    assert_eq!(counts["solve_unnamed_entry"], 1);
    assert_eq!(counts["macros::pipeline::run_pipeline"], 1);
    assert_eq!(counts["macros::traced_free_fn"], 1);
    // helper_not_traced is not a region: the traced calls hang off the entrypoint.
    assert_eq!(
        parents_of(profile, "macros::traced_free_fn"),
        ["solve_unnamed_entry"]
    );
}

#[profile(recursive)]
fn outer_entry() -> u32 {
    traced_free_fn();
    inner_entry() + 1
}

#[profile("inner", recursive)]
fn inner_entry() -> u32 {
    traced_free_fn();
    1
}

#[test]
fn nested_entrypoints_just_work() {
    let _s = start_in_memory();
    assert_eq!(outer_entry(), 2);
    // After the outer entrypoint has ended, tracing is off again.
    traced_free_fn();
    assert_eq!(inner_entry(), 1);
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let counts = calls_per_region(profile);
    assert_eq!(counts["outer_entry"], 1);
    assert_eq!(counts["inner"], 2);
    assert_eq!(counts["macros::traced_free_fn"], 3);
    assert_eq!(parents_of(profile, "inner"), ["outer_entry", ""]);
    let mut parents = parents_of(profile, "macros::traced_free_fn");
    parents.sort();
    assert_eq!(parents, ["inner", "inner", "outer_entry"]);
}

#[test]
fn tracing_is_per_thread() {
    #[profile(recursive)]
    fn spawn_from_entry() {
        // Another thread is outside the entrypoint.
        std::thread::spawn(traced_free_fn).join().unwrap();
        traced_free_fn();
    }
    let _s = start_in_memory();
    spawn_from_entry();
    assert_eq!(calls("macros::traced_free_fn"), 1);
    sp::finalize().unwrap();
}

// ---- profile_all over impl blocks, traits, generics -----------------------

#[profile_all]
mod geometry {
    use std::fmt;

    pub trait Mesh {
        fn cells(&self) -> usize;
        /// A default method with a body: instrumented.
        fn describe(&self) -> String {
            format!("{} cells", self.cells())
        }
    }

    #[derive(Clone, Debug, Default)]
    pub struct Grid<T> {
        pub values: Vec<T>,
    }

    impl<T: Copy + Default> Grid<T> {
        pub fn new(n: usize) -> Self {
            Grid {
                values: vec![T::default(); n],
            }
        }

        /// Doc comments and attributes stay.
        #[inline]
        #[must_use]
        pub fn refine(&self) -> Grid<T> {
            let mut values = self.values.clone();
            values.extend_from_slice(&self.values);
            Grid { values }
        }

        pub fn push(&mut self, v: T) -> &mut Self {
            self.values.push(v);
            self
        }

        pub fn into_values(self) -> Vec<T> {
            self.values
        }

        #[allow(clippy::boxed_local)]
        pub fn boxed_len(self: Box<Self>) -> usize {
            self.values.len()
        }

        pub fn rc_len(self: std::rc::Rc<Self>) -> usize {
            self.values.len()
        }

        pub fn pinned_len(self: std::pin::Pin<&mut Self>) -> usize {
            self.values.len()
        }

        pub fn mut_self(mut self, v: T) -> Self {
            self.values.push(v);
            self
        }

        /// Skipped: const.
        pub const fn zero() -> usize {
            0
        }
    }

    impl<T> Mesh for Grid<T> {
        fn cells(&self) -> usize {
            self.values.len()
        }
    }

    impl<T> fmt::Display for Grid<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "grid of {}", self.values.len())
        }
    }

    pub struct Unit;

    /// Uses the default `describe`.
    impl Mesh for Unit {
        fn cells(&self) -> usize {
            1
        }
    }
}

#[profile(recursive)]
fn geometry_entry() -> String {
    use geometry::{Grid, Mesh, Unit};
    let mut grid: Grid<u8> = Grid::new(2);
    grid.push(1).push(2);
    let refined = grid.refine();
    let float = Grid::<f64>::new(1).refine(); // another instantiation, same region
    let text = format!("{} / {} / {}", refined.describe(), Unit.describe(), float);
    let n = Box::new(refined.clone()).boxed_len()
        + std::rc::Rc::new(refined.clone()).rc_len()
        + std::pin::pin!(refined.clone()).as_mut().pinned_len()
        + refined.mut_self(9).into_values().len();
    const ZERO: usize = Grid::<u8>::zero(); // still a const fn
    format!("{text} / {n} / {ZERO}")
}

#[test]
fn profile_all_names_methods_by_type_and_trait() {
    let _s = start_in_memory();
    assert_eq!(geometry_entry(), "8 cells / 1 cells / grid of 2 / 33 / 0");
    let results = sp::finalize().unwrap();
    let counts = calls_per_region(results.profile().unwrap());
    let expected = [
        ("geometry_entry", 1),
        ("macros::geometry::Grid::new", 2),
        ("macros::geometry::Grid::push", 2),
        ("macros::geometry::Grid::refine", 2),
        ("macros::geometry::Mesh::describe", 2),
        ("macros::geometry::<Grid as Mesh>::cells", 1),
        ("macros::geometry::<Unit as Mesh>::cells", 1),
        ("macros::geometry::<Grid as Display>::fmt", 1),
        ("macros::geometry::Grid::boxed_len", 1),
        ("macros::geometry::Grid::rc_len", 1),
        ("macros::geometry::Grid::pinned_len", 1),
        ("macros::geometry::Grid::mut_self", 1),
        ("macros::geometry::Grid::into_values", 1),
    ];
    assert_eq!(counts, count_map(&expected));
}

pub struct Solver {
    pub tolerance: f64,
}

/// `#[profile_all]` on an inherent impl block outside any module.
#[profile_all(always)]
impl Solver {
    pub fn iterate(&mut self) -> f64 {
        self.tolerance /= 2.0;
        self.tolerance
    }

    #[profile("solver_reset")]
    pub fn reset(&mut self) {
        self.tolerance = 1.0;
    }

    #[profile(skip)]
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }
}

pub trait Step {
    fn step(&mut self) -> u32;
}

/// `#[profile_all]` on a trait impl block.
#[profile_all(always)]
impl Step for Solver {
    fn step(&mut self) -> u32 {
        self.iterate();
        1
    }
}

#[test]
fn profile_all_always_records_without_an_entrypoint() {
    let _s = start_in_memory();
    let mut solver = Solver { tolerance: 1.0 };
    solver.iterate();
    solver.step();
    solver.reset();
    assert_eq!(solver.tolerance(), 1.0);
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let counts = calls_per_region(profile);
    let expected = count_map(&[
        ("macros::Solver::iterate", 2),
        ("macros::<Solver as Step>::step", 1),
        ("solver_reset", 1),
    ]);
    assert_eq!(counts, expected);
    assert_eq!(
        parents_of(profile, "macros::Solver::iterate"),
        ["", "macros::<Solver as Step>::step"]
    );
}

/// A traced trait, instrumented at its definition: default methods only.
#[profile_all(always)]
pub trait Named {
    fn name(&self) -> String;
    fn greeting(&self) -> String {
        format!("hello {}", self.name())
    }
}

impl Named for Solver {
    fn name(&self) -> String {
        "solver".to_owned()
    }
}

#[test]
fn profile_all_on_a_trait_instruments_default_methods() {
    let _s = start_in_memory();
    assert_eq!(Solver { tolerance: 0.0 }.greeting(), "hello solver");
    assert_eq!(sp::recorded_regions(), ["macros::Named::greeting"]);
    sp::finalize().unwrap();
}

// ---- inside a profile_all scope: own attributes, skip, const, nested fns --

#[profile_all]
mod scoped {
    use scope_profiler::profile;

    /// Keeps its explicit region, instrumented once.
    #[profile("scoped_explicit")]
    pub fn explicit() -> u32 {
        inner_fn_not_instrumented() + 1
    }

    #[scope_profiler::profile]
    pub fn plain() -> u32 {
        2
    }

    #[profile(recursive)]
    pub fn entry() -> u32 {
        traced() + explicit() + skipped() + plain() + CONST_VALUE as u32 + nested::deep()
    }

    pub fn traced() -> u32 {
        1
    }

    #[profile(skip)]
    pub fn skipped() -> u32 {
        10
    }

    pub const fn const_fn() -> u64 {
        100
    }

    pub const CONST_VALUE: u64 = const_fn();

    fn inner_fn_not_instrumented() -> u32 {
        // Functions nested in a body are not visited.
        fn nested_helper() -> u32 {
            0
        }
        nested_helper()
    }

    #[profile(skip)]
    pub mod nested {
        pub fn deep() -> u32 {
            1000
        }
    }

    pub mod explicit_traced {
        use scope_profiler::profile;

        pub struct Widget;

        impl Widget {
            /// `traced` inside a scope: named after its path, type included.
            #[profile(traced)]
            pub fn spin(&self) -> u32 {
                3
            }
        }
    }
}

#[test]
fn own_attributes_inside_a_scope_decide() {
    let _s = start_in_memory();
    assert_eq!(scoped::plain(), 2); // plain #[profile]: records outside entrypoints
    assert_eq!(scoped::entry(), 1 + 1 + 10 + 2 + 100 + 1000);
    #[profile(recursive)]
    fn spin_entry() -> u32 {
        scoped::explicit_traced::Widget.spin()
    }
    assert_eq!(spin_entry(), 3);
    let results = sp::finalize().unwrap();
    let counts = calls_per_region(results.profile().unwrap());
    let expected = count_map(&[
        ("plain", 2),
        ("entry", 1),
        ("macros::scoped::traced", 1),
        // Instrumented, unlike the function nested in its body.
        ("macros::scoped::inner_fn_not_instrumented", 1),
        ("scoped_explicit", 1),
        ("spin_entry", 1),
        ("macros::scoped::explicit_traced::Widget::spin", 1),
    ]);
    assert_eq!(counts, expected);
}

// ---- every kind of function ------------------------------------------------

#[profile]
fn generic<T: std::fmt::Debug>(value: T) -> String {
    format!("{value:?}")
}

#[profile]
fn impl_trait_in_and_out(items: impl IntoIterator<Item = u32>) -> impl Iterator<Item = u32> {
    items.into_iter().map(|x| x + 1)
}

#[profile]
fn early_return(x: i32) -> &'static str {
    if x < 0 {
        return "negative";
    }
    "positive"
}

#[profile]
fn question_mark(text: &str) -> Result<u32, std::num::ParseIntError> {
    let value: u32 = text.parse()?;
    Ok(value)
}

#[profile]
fn boxed_error(text: &str) -> Result<u32, Box<dyn std::error::Error>> {
    let value: u32 = text.parse()?;
    if value == 0 {
        Err("zero")?;
    }
    Ok(value)
}

/// # Safety
/// `p` must be valid for reads.
#[profile]
unsafe fn read_raw(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { *p }
}

#[profile]
extern "C" fn c_abi(x: i32) -> i32 {
    x * 2
}

#[profile]
fn panics(really: bool) -> u32 {
    if really {
        panic!("boom");
    }
    0
}

#[profile]
fn with_lifetimes<'a>(a: &'a str, _b: &str) -> &'a str {
    a
}

#[profile]
fn mut_and_patterns(mut count: u32, (a, b): (u32, u32), [first, ..]: [u32; 3]) -> u32 {
    count += a + b + first;
    count
}

#[profile]
fn hygiene(__sp_guard: u32) -> u32 {
    // User names like the generated ones do not clash.
    static __SP_SITE: u32 = 5;
    let __sp_site = 1;
    __sp_guard + __SP_SITE + __sp_site
}

#[profile]
pub(crate) fn never_returns_normally() -> ! {
    panic!("diverges")
}

#[profile]
fn body_with_inner_attribute() -> u32 {
    #![allow(unused_variables, clippy::needless_return)]
    let unused = 1;
    return 7;
}

#[test]
fn every_kind_of_function() {
    let _s = start_in_memory();
    assert_eq!(generic(1u8), "1");
    assert_eq!(generic("x"), "\"x\"");
    assert_eq!(generic(vec![2.5]), "[2.5]");
    assert_eq!(impl_trait_in_and_out([1, 2]).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(early_return(-1), "negative");
    assert_eq!(early_return(1), "positive");
    assert_eq!(question_mark("12"), Ok(12));
    assert!(question_mark("x").is_err());
    assert!(boxed_error("0").is_err());
    assert_eq!(boxed_error("5").unwrap(), 5);
    let value = 9;
    // SAFETY: a valid reference.
    assert_eq!(unsafe { read_raw(&value) }, 9);
    let c: extern "C" fn(i32) -> i32 = c_abi;
    assert_eq!(c(4), 8);
    let unsafe_ptr: unsafe fn(*const u32) -> u32 = read_raw;
    // SAFETY: a valid reference.
    assert_eq!(unsafe { unsafe_ptr(&value) }, 9);
    assert_eq!(with_lifetimes("a", &String::from("b")), "a");
    assert_eq!(mut_and_patterns(1, (2, 3), [4, 5, 6]), 10);
    assert_eq!(hygiene(1), 7);
    assert_eq!(body_with_inner_attribute(), 7);

    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    assert!(std::panic::catch_unwind(|| panics(true)).is_err());
    assert!(std::panic::catch_unwind(|| never_returns_normally()).is_err());
    std::panic::set_hook(hook);
    assert_eq!(panics(false), 0);

    let expected = [
        ("generic", 3), // one region for every instantiation
        ("impl_trait_in_and_out", 1),
        ("early_return", 2),
        ("question_mark", 2),
        ("boxed_error", 2),
        ("read_raw", 2),
        ("c_abi", 1),
        ("with_lifetimes", 1),
        ("mut_and_patterns", 1),
        ("hygiene", 1),
        ("body_with_inner_attribute", 1),
        ("panics", 2), // the panicking call is recorded during unwinding
        ("never_returns_normally", 1),
    ];
    for (name, count) in expected {
        assert_eq!(calls(name), count, "{name}");
    }
    sp::finalize().unwrap();
}

// ---- impls of one trait with other arguments ---------------------------------

pub struct Level(pub u64);

#[profile_all(always)]
impl From<u8> for Level {
    fn from(v: u8) -> Self {
        Level(v.into())
    }
}

#[profile_all(always)]
impl From<std::primitive::u16> for Level {
    fn from(v: u16) -> Self {
        Level(v.into())
    }
}

#[profile_all(always)]
impl<'a> From<&'a [u8]> for Level {
    fn from(v: &'a [u8]) -> Self {
        Level(v.len() as u64)
    }
}

#[test]
fn impls_of_one_trait_with_other_arguments_are_other_regions() {
    let _s = start_in_memory();
    let total = Level::from(1u8).0 + Level::from(2u16).0 + Level::from(2u16).0;
    assert_eq!(total + Level::from(&[0u8; 4][..]).0, 9);
    let results = sp::finalize().unwrap();
    let counts = calls_per_region(results.profile().unwrap());
    let expected = count_map(&[
        ("macros::<Level as From<u8>>::from", 1),
        ("macros::<Level as From<u16>>::from", 2),
        ("macros::<Level as From<&[u8]>>::from", 1),
    ]);
    assert_eq!(counts, expected);
}

// ---- record_outcome on bodies that diverge -----------------------------------

#[profile(record_outcome)]
fn outcome_todo(really: bool) -> u32 {
    if really {
        todo!()
    }
    1
}

#[profile(record_outcome)]
fn outcome_only_panics() -> u32 {
    todo!()
}

#[profile(record_outcome)]
fn outcome_unit_panics() {
    panic!("boom");
}

#[profile(record_outcome)]
fn outcome_never() -> ! {
    panic!("never returns")
}

#[profile(record_outcome)]
fn outcome_opaque(fail: bool) -> impl std::fmt::Debug {
    // A declared `impl Trait` says nothing of the value: ok, even an `Err`.
    if fail { Err::<u8, u8>(1) } else { Ok(2) }
}

#[profile(record_outcome)]
fn outcome_opaque_panics() -> impl std::fmt::Debug {
    unimplemented!()
}

/// The `status` of each call of `region`, in the row's order.
fn statuses(profile: &Profile, region: &str) -> Vec<String> {
    let row = profile
        .rows
        .iter()
        .find(|r| profile.region_names[r.region_id as usize] == region)
        .unwrap_or_else(|| panic!("no row {region}"));
    assert_eq!(row.event_metadata.len() as u64, row.event_count, "{region}");
    row.event_metadata
        .iter()
        .map(|call| match call.iter().find(|(k, _)| k == "status") {
            Some((_, sp::Value::Str(s))) => s.clone(),
            other => panic!("{region}: status {other:?}"),
        })
        .collect()
}

#[test]
fn diverging_record_outcome_fns_record_their_panics() {
    let _s = start_in_memory();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    assert!(std::panic::catch_unwind(|| outcome_todo(true)).is_err());
    assert!(std::panic::catch_unwind(outcome_only_panics).is_err());
    assert!(std::panic::catch_unwind(outcome_unit_panics).is_err());
    assert!(std::panic::catch_unwind(|| outcome_never()).is_err());
    assert!(std::panic::catch_unwind(outcome_opaque_panics).is_err());
    std::panic::set_hook(hook);
    assert_eq!(outcome_todo(false), 1);
    assert_eq!(format!("{:?}", outcome_opaque(true)), "Err(1)");
    assert_eq!(format!("{:?}", outcome_opaque(false)), "Ok(2)");
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let mut todo = statuses(profile, "outcome_todo");
    todo.sort();
    assert_eq!(todo, ["ok", "panic"]);
    assert_eq!(statuses(profile, "outcome_only_panics"), ["panic"]);
    assert_eq!(statuses(profile, "outcome_unit_panics"), ["panic"]);
    assert_eq!(statuses(profile, "outcome_never"), ["panic"]);
    assert_eq!(statuses(profile, "outcome_opaque"), ["ok", "ok"]);
    assert_eq!(statuses(profile, "outcome_opaque_panics"), ["panic"]);
}

#[profile(record_outcome)]
fn outcome_every_seventh(i: u32) -> Result<u32, std::num::TryFromIntError> {
    if i % 7 == 3 {
        u8::try_from(300 + i).map(u32::from)
    } else {
        Ok(i)
    }
}

/// An ok outcome is a flag of the call's record (nothing else is stored),
/// an error the call's metadata: both reach the file, in memory and when
/// the records spill (the flag in the spilled depth's low bit), and at the
/// chunk boundaries, where the record goes the slow way.
#[test]
fn ok_outcomes_ride_in_the_records_and_reach_the_file_spilled_or_not() {
    const N: u32 = 200_000;
    let expected: Vec<&str> = (0..N)
        .map(|i| if i % 7 == 3 { "error" } else { "ok" })
        .collect();
    for limit in [None, Some(1 << 20)] {
        let _s = integration_tests::serial();
        let mut options = Options::new().in_memory().verbose(false);
        if let Some(bytes) = limit {
            options = options.memory_limit(bytes);
        }
        sp::setup(options).unwrap();
        let mut sum = 0u64;
        for i in 0..N {
            sum += u64::from(outcome_every_seventh(i).unwrap_or(0));
        }
        assert!(sum > 0);
        let results = sp::finalize().unwrap();
        assert_eq!(
            results.health().spilled_bytes > 0,
            limit.is_some(),
            "spilled under {limit:?}"
        );
        let profile = results.profile().unwrap();
        assert_eq!(
            statuses(profile, "outcome_every_seventh"),
            expected,
            "{limit:?}"
        );
    }
}

pub struct Counter(u32);

impl Counter {
    #[profile]
    pub fn by_ref(&self) -> u32 {
        self.0
    }

    #[profile("counter_bump")]
    pub fn by_mut(&mut self) -> &mut Self {
        self.0 += 1;
        self
    }

    #[profile]
    pub fn by_value(self) -> u32 {
        self.0
    }

    #[profile(traced)]
    pub fn traced_method(&self) -> u32 {
        self.0
    }
}

#[test]
fn methods_with_any_receiver() {
    let _s = start_in_memory();
    let mut counter = Counter(0);
    counter.by_mut().by_mut();
    assert_eq!(counter.by_ref(), 2);
    assert_eq!(counter.by_value(), 2);
    #[profile(recursive)]
    fn entry() -> u32 {
        Counter(5).traced_method()
    }
    assert_eq!(entry(), 5);
    assert_eq!(calls("counter_bump"), 2);
    assert_eq!(calls("by_ref"), 1);
    assert_eq!(calls("by_value"), 1);
    // A method-level attribute cannot see its impl block's type.
    assert_eq!(calls("macros::traced_method"), 1);
    sp::finalize().unwrap();
}

// ---- attributes kept ---------------------------------------------------------

#[profile]
#[cfg(any())]
fn configured_out() -> u32 {
    compile_error!("this function is configured out")
}

#[profile]
#[cfg(test)]
#[must_use = "the result matters"]
#[inline(never)]
#[doc = "Documented."]
pub fn configured_in() -> u32 {
    1
}

#[profile]
#[track_caller]
fn caller_line() -> u32 {
    std::panic::Location::caller().line()
}

#[test]
fn user_attributes_and_signature_are_kept() {
    let _s = start_in_memory();
    assert_eq!(configured_in(), 1);
    let line = line!() + 1;
    assert_eq!(caller_line(), line);
    let f: fn() -> u32 = configured_in;
    assert_eq!(f(), 1);
    assert_eq!(calls("configured_in"), 2);
    sp::finalize().unwrap();
}

// ---- the stable whole-file form ---------------------------------------------

#[test]
fn profile_all_items_covers_a_file_module() {
    let _s = start_in_memory();
    assert_eq!(file_items::entry(), 6);
    file_items::helper(); // outside the entrypoint
    file_items::always::tick();
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let counts = calls_per_region(profile);
    let expected = count_map(&[
        ("file_entry", 1),
        ("macros::file_items::helper", 1),
        ("macros::file_items::<Circle as Shape>::area", 2),
        ("macros::file_items::<Bits as From<u8>>::from", 1),
        ("macros::file_items::<Bits as From<u16>>::from", 1),
        ("macros::file_items::nested::inner", 1),
        ("macros::file_items::always::tick", 1),
    ]);
    assert_eq!(counts, expected);
    assert_eq!(
        parents_of(profile, "macros::file_items::nested::inner"),
        ["macros::file_items::helper"]
    );
}

#[test]
fn without_a_session_nothing_records() {
    let _s = serial();
    assert_eq!(solve(1), 2);
    assert_eq!(solve_entry(&[1.0]), 1.0);
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    assert!(sp::recorded_regions().is_empty());
    sp::finalize().unwrap();
}

/// Issue 29, item 7b: functions instrumented whole (`profile_all_items!`,
/// here the file-items module's `Circle::area`) record only under an
/// entrypoint or with `trace_all`; a session in which they all ran outside
/// one records nothing, and says why and how to turn them on.
#[test]
fn a_session_whose_traced_functions_ran_outside_any_entrypoint_says_why() {
    use file_items::Shape;
    let _s = start_in_memory();
    assert!(file_items::Circle(1.0).area() > 3.0);
    let results = sp::finalize().unwrap();
    assert!(results.statistics().is_empty(), "{results}");
    let name = results.health().traced_outside_entrypoints.clone();
    assert!(
        name.as_deref().is_some_and(|n| n.ends_with("area")),
        "{name:?}"
    );
    let shown = results.to_string();
    assert!(
        shown.contains("No calls were recorded")
            && shown.contains("area")
            && shown.contains("#[profile(recursive)]")
            && shown.contains("trace_all"),
        "{shown}"
    );
    // The next session forgets it; one that records says nothing of it.
    let _ = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    sp::region("plain").run(|| ());
    let results = sp::finalize().unwrap();
    assert_eq!(results.health().traced_outside_entrypoints, None);
    assert!(!results.to_string().contains("No calls were recorded"));
}
