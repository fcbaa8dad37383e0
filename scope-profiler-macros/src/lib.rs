//! Attribute macros of [scope-profiler](https://docs.rs/scope-profiler):
//! `#[profile]` for one function, `#[profile_all]` and `profile_all_items!`
//! for every function of a module, impl block, trait or file.
//!
//! Use them through the runtime crate, which re-exports them:
//! `#[scope_profiler::profile]`, `use scope_profiler::{profile, profile_all};`.
//! The expansion names the runtime as `::scope_profiler`; a crate that
//! renames the dependency in `Cargo.toml` says where it is with
//! `crate = path` (`#[profile(crate = sp)]`, `#[profile_all(crate = sp)]`,
//! `profile_all_items! { crate = sp; ... }`). Every path of the expansion,
//! the built-in macros included, goes through that crate's hidden
//! `__private` module, so it resolves in every edition (an edition-2015 crate
//! names the runtime with `extern crate scope_profiler;`).
//!
//! ```
//! use scope_profiler::{self as sp, profile, profile_all};
//!
//! #[profile("solve", recursive)]
//! fn solve(b: &[f64]) -> f64 {
//!     pipeline::run_pipeline(b)
//! }
//!
//! #[profile_all]
//! mod pipeline {
//!     pub fn run_pipeline(b: &[f64]) -> f64 {
//!         b.iter().sum()
//!     }
//! }
//!
//! sp::setup(sp::Options::new().in_memory().verbose(false))?;
//! assert_eq!(solve(&[1.0, 2.0]), 3.0);
//! pipeline::run_pipeline(&[1.0]); // outside any entrypoint: not recorded
//! let results = sp::finalize()?;
//! let names = &results.profile().unwrap().region_names;
//! assert!(names.iter().any(|n| n == "solve"));
//! assert!(names.iter().any(|n| n.ends_with("::pipeline::run_pipeline")));
//! assert_eq!(sp::get_region("solve").unwrap().num_calls(), 1);
//! # let run_pipeline = names.iter().find(|n| n.ends_with("run_pipeline")).unwrap();
//! # assert_eq!(sp::get_region(run_pipeline).unwrap().num_calls(), 1);
//! # Ok::<(), sp::Error>(())
//! ```
//!
//! # The forms
//!
//! | written | region name | records |
//! | --- | --- | --- |
//! | `#[profile]` | the function's name, `"solve"` | whenever a session is active |
//! | `#[profile("solver")]`, `#[profile(name = "solver")]` | `"solver"`, shared with `sp::region("solver")` | whenever a session is active |
//! | `#[profile(recursive)]`, `#[profile("solve", recursive)]` | its own name | always, and makes traced functions record while it runs on this thread |
//! | `#[profile(traced)]` | `crate::module::function` | only inside a recursive entrypoint on the same thread |
//! | `#[profile_all]` scope | `crate::module::f`, `crate::module::Type::method`, `crate::module::<Type as Trait>::method`, `crate::module::Trait::default_method` | only inside a recursive entrypoint (traced) |
//! | `#[profile_all(always)]` scope | as above | whenever a session is active |
//! | `#[profile(skip)]` | — | opts a function (or a nested module, impl or trait) out of its scope |
//!
//! Names start with the crate's name (`module_path!()`), not `crate::`.
//! A type or trait is named by its own name, the last segment of its path,
//! however the impl spells it: `impl super::Engine<u8> for x::Grid<T>` gives
//! `<Grid as Engine<u8>>::config`. The implementing type's generic
//! arguments and all lifetimes are left out, so that every instantiation of
//! a generic function or impl shares one region; the trait's arguments are
//! kept (each named the same way, paths by their last segment), so that
//! `impl From<u8> for B` and `impl From<u16> for B` are two regions,
//! `<B as From<u8>>::from` and `<B as From<u16>>::from`. An inherent impl
//! on a type that is not a path is bracketed: `impl dyn Shape` gives
//! `<dyn Shape>::area`, `impl [u8]` gives `<[u8]>::f`.
//! Nested recursive entrypoints simply nest. Outside any entrypoint, a traced
//! function records nothing and costs one thread-local check.
//!
//! Every attribute expands to a call-site cached region: a `static` inside
//! the function resolves the region once per session, so a call never looks
//! a name up. A synchronous function gets a guard, and its own statements
//! follow unchanged:
//!
//! ```text
//! fn solve(b: &[f64]) -> f64 {
//!     let __sp_guard = {
//!         // CallSite, file! and line! named through ::scope_profiler::__private
//!         static __SP_SITE: CallSite = CallSite::new("solve", file!(), line!());
//!         __SP_SITE.enter() // enter_entrypoint() for recursive, enter_traced() for traced
//!     };
//!     /* the original statements */
//! }
//! ```
//!
//! The guard ends the call when it is dropped, so early `return`, `?` and
//! panics (during unwinding) end it too. An `async fn` records its future
//! from the first poll to completion, its body becoming
//! `__SP_SITE.instrument(Mode::Plain, async move { /* body */ }).await`; the
//! future stays `Send` whenever the unannotated one is. A function that is
//! not `async` but returns `Box::pin(async move { ... })` or an `async`
//! block (the shape `#[async_trait]` produces) has that future instrumented.
//!
//! User attributes, docs, visibility and signature are kept; generated names
//! are hygienic (`Span::mixed_site()`), and the original statements are
//! spliced, never nested, so no new warning appears in user code. Clippy
//! wants `partial_cmp` on an `Ord` type as `Some(self.cmp(other))` and
//! `clone` on a `Copy` type as `*self`, a shape the guard breaks: when a
//! `profile_all` scope instruments such a canonical body, it allows that
//! one lint on the impl block (where clippy reads its level); a body that
//! was not canonical keeps its lint. `#[profile]` on such a method alone
//! cannot reach the impl block; it gives the braces of a canonical body the
//! attribute's span instead (the statements keep theirs), and clippy skips
//! a body whose block comes from a macro.
//!
//! A function with its own `#[profile(...)]` inside a `profile_all` scope
//! gets what only the scope knows (its path, `crate = path`, its line) in a
//! hidden attribute the scope puts right after it,
//! `#[::scope_profiler::__private::profile_scope(...)]`, which the
//! `#[profile]` expansion reads and removes.
//!
//! # `profile_all` on a whole file: three forms
//!
//! 1. **`#[profile_all] mod m { ... }`** (also on `impl Type`,
//!    `impl Trait for Type` and `trait` items): stable, real spans, rustfmt
//!    formats the items. Only inline modules: on `mod m;` the compiler
//!    refuses to hand the macro the file (E0658, rust-lang/rust#54727).
//! 2. **`#![scope_profiler::profile_all]`** as the first line of a module
//!    file (or inside an inline module): keeps the file as it is, but inner
//!    macro attributes are unstable (rust-lang/rust#54726), so it needs
//!    nightly with `#![feature(custom_inner_attributes, proc_macro_hygiene)]`
//!    at the crate root. It does not work at the crate root itself.
//!    **Spans:** for a module *file*, rustc hands the attribute the file's
//!    tokens re-parsed, every one of them at the parent's `mod x;` line
//!    (only the attribute itself keeps its place). The attribute reads the
//!    file back and writes each call site's file and line itself, so the
//!    recorded `source_files`/`source_lines` are right; but rustc's own
//!    errors, warnings, panic locations and backtraces for code in that file
//!    point at `mod x;`, and no macro can give the tokens their spans back.
//!    Form 3 keeps every span. (Functions of a nested `#[profile_all]` item
//!    inside such a file also record the `mod x;` line.)
//! 3. **`scope_profiler::profile_all_items! { ...the file's items... }`**:
//!    stable and covers a whole file, at the cost of one indentation level,
//!    rustfmt leaving the items inside the macro unformatted, and the file's
//!    inner attributes and `//!` docs having to stay before the macro. Write
//!    `profile_all_items! { always; ... }` for the `always` variant (and
//!    `crate = path;`, `always, crate = path;`). On an error it still returns
//!    the items, so that only the error is shown. (It cannot be called
//!    `profile_all!`: an attribute macro and a function-like macro cannot
//!    share one name in a module.) A `#[macro_export] macro_rules!` that
//!    names itself by path (`$crate::m!`) must stay outside it: rustc
//!    refuses paths to an exported macro another macro defined, and the
//!    macro says so (`crate::m!` from elsewhere gets rustc's own error).
//!    So must `extern crate x as y;`: at the crate root rustc refuses a
//!    macro-expanded `extern crate` whose name is also passed with
//!    `--extern` (a dev-dependency's under `cargo test`), so the macro
//!    refuses a renaming one anywhere, pointing at it (`extern crate x;`
//!    stays).
//!
//! Forms 1 and 3 hand doc comments through a macro, which turns `///` into
//! `#[doc = "..."]` attributes: clippy's markdown lints on *multi-line* doc
//! comments (`doc_lazy_continuation`, ...) cannot map those back to the
//! source and stay silent there, as under any attribute macro; single-line
//! docs and every other lint are checked as before.
//!
//! # What is not instrumented
//!
//! - `const fn`: `#[profile]` on one is a compile error, `profile_all` skips it.
//! - Trait methods without a body: `#[profile]` on one is a compile error,
//!   `profile_all` skips them (and instruments default methods).
//! - Functions nested inside function bodies, and items produced by macro
//!   invocations (including `include!`), are not visited by `profile_all`:
//!   it sees a `macro_rules!` definition and its invocations as tokens,
//!   never the functions they expand to (in a parser that generates its
//!   functions by macro, that can be a third of them). To reach those,
//!   write the instrumentation in the macro's body: wrap the items it
//!   expands to in `scope_profiler::profile_all_items! { always; ... }`
//!   (or without `always;` for traced mode), which names them as the
//!   enclosing scope would (`crate::module::f`), or put
//!   `#[scope_profiler::profile]` on the function there (a region named
//!   after the function). `scope!` in a generated body works as anywhere.
//!   Or let the scope do the first: with the argument `macro_rules`
//!   (`#[profile_all(always, macro_rules)]`, `profile_all_items! { always,
//!   macro_rules; ... }`), each rule of the scope's own `macro_rules!` whose
//!   body is items with functions (`fn`, `impl`, `trait` or `mod` among its
//!   top-level tokens, no `let`) gets its body wrapped in
//!   `profile_all_items!` with the scope's mode, so its functions are
//!   instrumented wherever it expands, named after that module. It is
//!   opt-in because the body is told by its tokens: a macro of that shape
//!   used where an expression is expected would no longer compile.
//!   `#[macro_export]` macros are left alone (the crates using them need not
//!   depend on the runtime).
//! - A function carrying its own `#[profile(...)]` inside a `profile_all`
//!   scope is left to that attribute: it keeps its own region and is
//!   instrumented once (`#[profile(skip)]`: not at all). The attribute must
//!   resolve where it is written (`use scope_profiler::profile;` in the
//!   module, or the full path). A nested module, impl block or trait with
//!   its own `#[profile_all]` or `#[profile(skip)]` is likewise left alone.
//!   Attributes are recognised by their last path segment (`profile`,
//!   `sp::profile`, `scope_profiler::profile`).
//!
//! `#[profile]` on its own sees only the function, not its impl block: a
//! `#[profile(traced)]` method outside any scope is named
//! `crate::module::method`. Inside a `profile_all` scope the scope passes the
//! type on, giving `crate::module::Type::method`.
//!
//! # The `enabled` feature
//!
//! The runtime's `enabled` feature (on by default) turns on this crate's.
//! Without it every attribute still checks its arguments, then expands to
//! the item unchanged.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

use proc_macro::TokenStream;

mod args;
mod diag;
mod expand;
mod file_lines;
mod macro_bodies;
mod names;
mod profile_all;
mod source;

/// Records each call of a function as a region.
///
/// `#[profile]` names the region after the function; `#[profile("solver")]`
/// or `#[profile(name = "solver")]` gives it a name, shared with any
/// `sp::region("solver")`. `recursive` makes the function a recursive
/// entrypoint; `traced` makes it record only inside one (under its
/// fully-qualified name); `skip` opts it out of a `profile_all` scope.
/// See the [crate docs](crate) for the expansion.
///
/// ```
/// use scope_profiler::{self as sp, profile};
///
/// #[profile]
/// fn solve(x: f64) -> f64 { x * 2.0 }
///
/// #[profile("solver")]
/// fn solve_named(x: f64) -> f64 { x / 2.0 }
///
/// #[profile(recursive)]
/// fn run() -> u32 { step() + step() }
///
/// #[profile(traced)]
/// fn step() -> u32 { 1 }
///
/// sp::setup(sp::Options::new().in_memory().verbose(false))?;
/// solve(1.0);
/// solve_named(1.0);
/// sp::region("solver").run(|| ()); // the same region as the attribute's
/// step(); // outside the entrypoint: not recorded
/// assert_eq!(run(), 2);
/// assert_eq!(sp::get_region("solve").unwrap().num_calls(), 1);
/// assert_eq!(sp::get_region("solver").unwrap().num_calls(), 2);
/// let step_name = sp::recorded_regions().into_iter().find(|n| n.ends_with("::step")).unwrap();
/// assert_eq!(sp::get_region(&step_name).unwrap().num_calls(), 2);
/// sp::finalize()?;
/// # Ok::<(), sp::Error>(())
/// ```
///
/// A dependency renamed in `Cargo.toml` is named with `crate = path`:
///
/// ```
/// use scope_profiler as profiler; // as `profiler = { package = "scope-profiler", ... }`
///
/// #[profiler::profile(crate = profiler)]
/// fn renamed() -> u32 { 1 }
///
/// profiler::setup(profiler::Options::new().in_memory().verbose(false))?;
/// renamed();
/// assert_eq!(profiler::get_region("renamed").unwrap().num_calls(), 1);
/// profiler::finalize()?;
/// # Ok::<(), profiler::Error>(())
/// ```
///
/// `async fn` works too: the call lasts from the first poll to completion.
///
/// ```
/// #[scope_profiler::profile]
/// async fn fetch(id: u32) -> Result<u32, std::num::ParseIntError> {
///     let parsed: u32 = "41".parse()?;
///     Ok(parsed + id)
/// }
/// fn assert_send<T: Send>(_: &T) {}
/// assert_send(&fetch(1));
/// ```
#[proc_macro_attribute]
pub fn profile(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand_profile(args.into(), item.into(), cfg!(feature = "enabled")).into()
}

/// Instruments every function of an inline module, an impl block or a
/// trait, recursively: nested modules, impl blocks and trait default
/// methods included.
///
/// The functions are *traced*: they record only while a recursive
/// entrypoint (`#[profile(recursive)]`) runs on the same thread, under
/// fully-qualified names. `#[profile_all(always)]` makes them record
/// whenever a session is active; `#[profile_all(macro_rules)]` also
/// instruments the functions its `macro_rules!` generate (see the crate
/// docs). Works as an inner attribute
/// `#![profile_all]` on nightly; see the [crate docs](crate) for the three
/// forms and what is skipped.
///
/// ```
/// use scope_profiler::{self as sp, profile_all};
///
/// pub struct Grid(Vec<f64>);
///
/// #[profile_all(always)]
/// impl Grid {
///     pub fn refine(&mut self) {
///         self.0.push(0.0);
///     }
///     pub const fn empty() -> Grid { Grid(Vec::new()) } // skipped: const
/// }
///
/// sp::setup(sp::Options::new().in_memory().verbose(false))?;
/// let mut grid = Grid::empty();
/// grid.refine();
/// let name = concat!(module_path!(), "::Grid::refine");
/// assert_eq!(sp::get_region(name).unwrap().num_calls(), 1);
/// sp::finalize()?;
/// # Ok::<(), sp::Error>(())
/// ```
#[proc_macro_attribute]
pub fn profile_all(args: TokenStream, item: TokenStream) -> TokenStream {
    profile_all::expand_profile_all(args.into(), item.into(), cfg!(feature = "enabled")).into()
}

/// `profile_all` over a list of items: the stable way to instrument a whole
/// module file. Put the file's items inside; `always;` first selects
/// `#[profile_all(always)]`. Inner attributes and `//!` docs stay outside.
///
/// ```
/// use scope_profiler as sp;
///
/// mod physics {
///     scope_profiler::profile_all_items! {
///         always;
///         pub fn gravity(m: f64) -> f64 { 9.81 * m }
///         pub mod fluids {
///             pub fn drag(v: f64) -> f64 { 0.5 * v * v }
///         }
///     }
/// }
///
/// sp::setup(sp::Options::new().in_memory().verbose(false))?;
/// physics::gravity(1.0);
/// physics::fluids::drag(2.0);
/// assert_eq!(sp::recorded_regions().len(), 2);
/// assert!(sp::recorded_regions()[1].ends_with("physics::fluids::drag"));
/// sp::finalize()?;
/// # Ok::<(), sp::Error>(())
/// ```
#[proc_macro]
pub fn profile_all_items(input: TokenStream) -> TokenStream {
    profile_all::expand_profile_all_items(input.into(), cfg!(feature = "enabled")).into()
}

/// What a `profile_all` scope hands to a function carrying its own
/// `#[profile(...)]`: written by the scope after that attribute, which reads
/// and removes it. Not a public API. Left alone (the function's `profile`
/// is another crate's attribute), it removes itself.
#[doc(hidden)]
#[proc_macro_attribute]
pub fn __profile_scope(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// The examples of the crate's README (what crates.io shows), compiled as
/// doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
struct ReadmeDoctests;
