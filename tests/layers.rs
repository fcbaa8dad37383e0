//! The runtime's modules form layers that only point down: a module uses
//! modules of its own layer or of the layers below it, and no two modules
//! use each other, directly or through others. The runtime is four crates
//! (ARCHITECTURE.md): `scope-profiler-core` (layers 1 to 6, its `pub mod`
//! lines), `scope-profiler-hdf5` (the module `hdf5` of layer 7, as a whole),
//! `scope-profiler-reader` (the module `reader` of layer 7, as a whole) and
//! `scope-profiler` (layers 7 and 8, its `mod` lines); the layers are
//! the groups of those lines in the core's `internal.rs` and the facade's
//! `lib.rs` (bottom first, each group headed by a `// N. name` comment).
//! Uses are read from the `crate::` paths of each module's code (comments
//! aside): the upper crates name the core's modules as their own
//! (`use scope_profiler_core::internal::sink;` at their root), so one path
//! names a module whichever crate holds it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The facade's sources (layers 7 and 8).
fn src() -> PathBuf {
    root().join("scope-profiler/src")
}

/// The core's sources (layers 1 to 6).
fn core_src() -> PathBuf {
    root().join("scope-profiler-core/src")
}

/// The HDF5 file's crate's sources (the module `hdf5`).
fn hdf5_src() -> PathBuf {
    root().join("scope-profiler-hdf5/src")
}

/// The reader's crate's sources (the module `reader`).
fn reader_src() -> PathBuf {
    root().join("scope-profiler-reader/src")
}

/// Every source directory of the runtime.
fn runtime_srcs() -> [PathBuf; 4] {
    [core_src(), hdf5_src(), reader_src(), src()]
}

/// Module name -> layer number, from the `mod` lines of a lib.rs (and the
/// `use scope_profiler_hdf5 as hdf5;` and `use scope_profiler_reader as
/// reader;` that name the HDF5 and the reader's crates).
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut layer = 0;
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("// ") {
            if let Some(n) = rest.split_once(". ").and_then(|(n, _)| n.parse().ok()) {
                layer = n;
            }
        } else if let Some(name) = line
            .strip_prefix("mod ")
            .or_else(|| line.strip_prefix("pub mod "))
            .or_else(|| line.strip_prefix("use scope_profiler_hdf5 as "))
            .or_else(|| line.strip_prefix("use scope_profiler_reader as "))
            .and_then(|m| m.strip_suffix(';'))
        {
            assert!(
                layer > 0,
                "mod {name} is declared before any `// N. layer` comment"
            );
            out.insert(name.to_owned(), layer);
        }
    }
    out
}

/// Every module of the runtime's three crates and its layer.
fn all_layers() -> BTreeMap<String, usize> {
    let core = layers(&std::fs::read_to_string(core_src().join("internal.rs")).unwrap());
    let facade = layers(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
    assert!(
        core.values().all(|&l| l <= 6) && facade.values().all(|&l| l >= 7),
        "the core holds layers 1 to 6, the facade 7 and 8: {core:?} {facade:?}"
    );
    assert_eq!(facade.get("hdf5"), Some(&7), "the HDF5 crate is layer 7");
    assert_eq!(
        facade.get("reader"),
        Some(&7),
        "the reader's crate is layer 7"
    );
    let mut all = core;
    all.extend(facade);
    all
}

/// The source files of module `name`: `name.rs`, or every file of `name/`,
/// in whichever crate holds it; for `hdf5`, every file of its crate.
fn files_of(name: &str) -> Vec<PathBuf> {
    if name == "hdf5" {
        return rust_files(&hdf5_src());
    }
    if name == "reader" {
        return rust_files(&reader_src());
    }
    let src = [core_src(), src()]
        .into_iter()
        .find(|s| s.join(format!("{name}.rs")).exists() || s.join(name).is_dir())
        .unwrap_or_else(|| panic!("module {name}: in no crate of the runtime"));
    // The module's file and every file of its folder, at any depth.
    let file = src.join(format!("{name}.rs"));
    let dir = src.join(name);
    let mut files: Vec<PathBuf> = if dir.is_dir() {
        rust_files(&dir)
    } else {
        Vec::new()
    };
    if file.exists() {
        files.push(file);
    }
    files.sort();
    files
}

/// The modules of `modules` that `code` names as `crate::module`, outside
/// comments.
fn uses(code: &str, modules: &BTreeMap<String, usize>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if modules.contains_key(&ident) {
                out.insert(ident);
            }
        }
        // `use crate::{a, b::c}` groups.
        if let Some(group) = code.trim_start().strip_prefix("use crate::{") {
            for item in group.split([',', '}']) {
                let ident = item.trim().split("::").next().unwrap_or("").trim();
                if modules.contains_key(ident) {
                    out.insert(ident.to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn runtime_modules_only_use_their_own_layer_or_lower_ones_without_cycles() {
    let layer = all_layers();
    assert!(
        layer.len() > 10,
        "too few modules found in lib.rs: {layer:?}"
    );
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut upward = Vec::new();
    for (module, &level) in &layer {
        let mut used = BTreeSet::new();
        for file in files_of(module) {
            used.extend(uses(&std::fs::read_to_string(&file).unwrap(), &layer));
        }
        used.remove(module);
        for target in &used {
            if layer[target] > level {
                upward.push(format!(
                    "{module} (layer {level}) uses {target} (layer {})",
                    layer[target]
                ));
            }
        }
        graph.insert(module.clone(), used);
    }
    assert!(
        upward.is_empty(),
        "modules using layers above their own:\n{}",
        upward.join("\n")
    );

    // No cycle: repeatedly remove modules that use nothing left.
    let mut left = graph.clone();
    while let Some(leaf) = left
        .iter()
        .find(|(_, used)| used.iter().all(|u| !left.contains_key(u)))
        .map(|(m, _)| m.clone())
    {
        left.remove(&leaf);
    }
    assert!(
        left.is_empty(),
        "import cycle among: {:?}",
        left.keys().collect::<Vec<_>>()
    );
}

#[test]
fn the_checker_sees_uses_and_ignores_comments() {
    let modules = BTreeMap::from([
        ("a".to_owned(), 1),
        ("b".to_owned(), 1),
        ("c".to_owned(), 1),
    ]);
    let code = "use crate::a::X;\n// crate::b in a comment\nuse crate::{c, Options};\nfn f() { crate::a::g(); }";
    assert_eq!(
        uses(code, &modules),
        BTreeSet::from(["a".to_owned(), "c".to_owned()])
    );
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// OS calls live in `platform/` alone (issue 24): no other module of any
/// of the runtime's crates names `libc` or an OS-specific part of std,
/// outside comments.
#[test]
fn only_the_platform_module_calls_the_os() {
    let platform = core_src().join("platform");
    let files: Vec<PathBuf> = runtime_srcs().iter().flat_map(|s| rust_files(s)).collect();
    assert!(files.len() > 40, "the runtime's sources: {}", files.len());
    assert!(
        files.iter().any(|f| f.starts_with(&platform)),
        "no platform module under {}",
        core_src().display()
    );
    let mut offenders = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&platform)) {
        let code = std::fs::read_to_string(file).unwrap();
        for (n, line) in code.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if ["libc::", "std::os::unix", "std::os::windows", "std::os::fd"]
                .iter()
                .any(|p| code.contains(p))
            {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "OS calls outside platform/:\n{}",
        offenders.join("\n")
    );
}

/// The names ARCHITECTURE.md gives as `module::item` (for modules of the
/// runtime) are defined in that module, and the `.rs` files it names exist:
/// the drift a review found (an item placed in the wrong module, a module
/// that moved) fails here (issue 29, item 4).
#[test]
fn architecture_names_items_where_they_are() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md"))
            .unwrap();
    let modules = all_layers();
    let quoted: Vec<&str> = doc.split('`').skip(1).step_by(2).collect();
    let (mut checked, mut wrong) = (0, Vec::new());
    for name in &quoted {
        if let Some((module, item)) = name.split_once("::") {
            if !modules.contains_key(module) || item.is_empty() || item.contains(':') {
                continue;
            }
            let code: String = files_of(module)
                .iter()
                .map(|f| std::fs::read_to_string(f).unwrap())
                .collect();
            let is_word = |line: &str| {
                line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == item)
            };
            let defined = code.lines().any(|line| {
                let line = line.trim_start();
                let definition = [
                    "struct", "enum", "fn", "trait", "type", "const", "static", "mod",
                ]
                .iter()
                .any(|kw| line.contains(&format!("{kw} {item}")));
                // A re-export (`pub(crate) use crate::x::Item;`) names it too.
                let reexport = (line.starts_with("pub use ")
                    || line.starts_with("pub(crate) use "))
                    && is_word(line);
                !line.starts_with("//") && (definition || reexport)
            });
            checked += 1;
            if !defined {
                wrong.push(format!("`{name}`: no {item} in {module}"));
            }
        } else if name.ends_with(".rs") && !name.contains(' ') {
            checked += 1;
            let roots = [
                "scope-profiler/src",
                "scope-profiler-core/src",
                "scope-profiler-hdf5/src",
                "scope-profiler-reader/src",
                "scope-profiler-macros/src",
                "scope-profiler-cli/src",
                "scope-profiler-tracing/src",
                "",
            ];
            let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            if !roots.iter().any(|r| base.join(r).join(name).exists()) {
                wrong.push(format!("`{name}`: no such file"));
            }
        }
    }
    assert!(
        checked >= 30,
        "only {checked} names checked: the parser lost them"
    );
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md is out of date:\n{}",
        wrong.join("\n")
    );
}

/// MPI (feature `mpi`) below the output layer only where ARCHITECTURE.md
/// says: the communicator, the handle in `options`, its configuration and
/// the error every rank agrees on.
#[test]
fn mpi_stays_where_the_architecture_says() {
    let modules = all_layers();
    let output = modules["results"];
    let allowed = ["comm", "options", "config", "error", "platform", "publish"];
    let mut found = Vec::new();
    for (module, layer) in &modules {
        if *layer >= output || allowed.contains(&module.as_str()) {
            continue;
        }
        for file in files_of(module) {
            let code = std::fs::read_to_string(&file).unwrap();
            if code.contains("feature = \"mpi\"") || code.contains("mpi::") {
                found.push(format!("{module} ({})", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "MPI below layer {output} outside {allowed:?}: {found:?}"
    );
}

/// The `[dependencies]` table of a crate's Cargo.toml: the names in it.
fn dependencies(krate: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap();
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]" || line.ends_with(".dependencies]");
            inside &= !line.contains("dev-dependencies");
        } else if inside && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.']).next().unwrap().trim();
            out.push(name.to_owned());
        }
    }
    out
}

/// The crate graph points down as the layers do (ARCHITECTURE.md): the
/// core depends on no crate of the runtime above it and on no C library;
/// the HDF5 crate on the core alone of ours; the reader's crate on those
/// two; the facade on the three.
#[test]
fn the_crates_depend_downwards() {
    let core = dependencies("scope-profiler-core");
    assert!(core.contains(&"quanta".to_owned()), "core: {core:?}");
    for name in &core {
        assert!(
            !name.starts_with("scope-profiler") && !name.ends_with("-sys") && name != "flate2",
            "scope-profiler-core depends on {name}: {core:?}"
        );
    }
    let hdf5 = dependencies("scope-profiler-hdf5");
    assert!(hdf5.contains(&"hdf5-sys".to_owned()), "hdf5: {hdf5:?}");
    let ours: Vec<&String> = hdf5
        .iter()
        .filter(|n| n.starts_with("scope-profiler"))
        .collect();
    assert_eq!(
        ours,
        ["scope-profiler-core"],
        "scope-profiler-hdf5's own crates"
    );
    let reader = dependencies("scope-profiler-reader");
    let ours: Vec<&String> = reader
        .iter()
        .filter(|n| n.starts_with("scope-profiler"))
        .collect();
    assert_eq!(
        ours,
        ["scope-profiler-core", "scope-profiler-hdf5"],
        "scope-profiler-reader's own crates"
    );
    let facade = dependencies("scope-profiler");
    for name in [
        "scope-profiler-core",
        "scope-profiler-hdf5",
        "scope-profiler-reader",
        "scope-profiler-macros",
    ] {
        assert!(
            facade.contains(&name.to_owned()),
            "scope-profiler lacks {name}"
        );
    }
    // The core's, the HDF5 crate's and the reader's code names no crate
    // above it (its unit tests neither: they would link a second copy of
    // the crate).
    for (dir, above) in [
        (
            core_src(),
            &[
                "scope_profiler_hdf5",
                "scope_profiler_reader",
                "scope_profiler::",
            ][..],
        ),
        (
            hdf5_src(),
            &["scope_profiler_reader", "scope_profiler::"][..],
        ),
        (reader_src(), &["scope_profiler::"][..]),
    ] {
        for file in rust_files(&dir) {
            let code = without_strings(&std::fs::read_to_string(&file).unwrap());
            for (n, line) in code.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                assert!(
                    !above.iter().any(|a| code.contains(a)),
                    "{}:{}: names a crate above its own: {}",
                    file.display(),
                    n + 1,
                    line.trim()
                );
            }
        }
    }
}

/// `code` with the contents of its string literals blanked (lines kept),
/// so a message that names a path is not taken for a use of it.
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // A char literal such as '"'.
            '\'' if chars.peek() == Some(&'"') => {
                out.push(c);
                out.push(chars.next().unwrap());
            }
            '"' => {
                out.push('"');
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        '\n' => out.push('\n'),
                        _ => {}
                    }
                }
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn the_string_blanker_keeps_code_and_lines() {
    let code = "let a = \"x::y\\\" z\";\nuse b::c; // '\"'\nlet d = \"1\n2\";";
    assert_eq!(
        without_strings(code),
        "let a = \"\";\nuse b::c; // '\"'\nlet d = \"\n\";"
    );
}

/// The crates built on the runtime (the CLI, the tracing layer) use its
/// public API (the facade's and the reader's): they name neither the inner
/// crates, nor the reader's `internal` door, nor the macros' hidden paths.
#[test]
fn the_cli_and_the_tracing_layer_use_the_public_api() {
    let mut checked = 0;
    for krate in ["scope-profiler-cli", "scope-profiler-tracing"] {
        assert!(
            !dependencies(krate)
                .iter()
                .any(|d| d == "scope-profiler-core" || d == "scope-profiler-hdf5"),
            "{krate} depends on an inner crate"
        );
        for file in rust_files(&root().join(krate).join("src")) {
            let code = std::fs::read_to_string(&file).unwrap();
            checked += 1;
            for (n, line) in code.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                assert!(
                    ![
                        "scope_profiler_core",
                        "scope_profiler_hdf5",
                        "scope_profiler_reader::internal",
                        "__private"
                    ]
                    .iter()
                    .any(|p| code.contains(p)),
                    "{}:{}: reaches past the public API: {}",
                    file.display(),
                    n + 1,
                    line.trim()
                );
            }
        }
    }
    assert!(checked >= 4, "only {checked} files read");
}

/// The crates whose modules ARCHITECTURE.md describes: the runtime's three,
/// the macros, the tracing layer and the command line (each `src/`).
const DESCRIBED_CRATES: [&str; 7] = [
    "scope-profiler-core",
    "scope-profiler-hdf5",
    "scope-profiler-reader",
    "scope-profiler",
    "scope-profiler-macros",
    "scope-profiler-tracing",
    "scope-profiler-cli",
];

/// Whether `path` (relative to a crate's `src/`) holds tests only: a
/// `tests.rs`, a `*_tests.rs`, anything under a `tests/` folder, and the
/// HDF5 crate's `test_support.rs` (`#[cfg(test)]`).
fn is_test_file(path: &Path) -> bool {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem == "tests"
        || stem.ends_with("_tests")
        || stem == "test_support"
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// The modules of a crate: each `.rs` file under its `src/` as its path
/// there without `.rs` (`thread/frames`; a `mod.rs` names its folder:
/// `config`), the crate roots (`lib.rs`, `main.rs`) and test files left
/// out.
fn modules_of(krate: &str) -> Vec<String> {
    let src = root().join(krate).join("src");
    let mut out: Vec<String> = rust_files(&src)
        .iter()
        .map(|f| f.strip_prefix(&src).unwrap().to_path_buf())
        .filter(|rel| {
            !is_test_file(rel) && rel != Path::new("lib.rs") && rel != Path::new("main.rs")
        })
        .map(|rel| {
            let name = rel.with_extension("").to_string_lossy().replace('\\', "/");
            name.strip_suffix("/mod").unwrap_or(&name).to_owned()
        })
        .collect();
    out.sort();
    out
}

/// A backquoted name of ARCHITECTURE.md as a module path: `crate/src/`,
/// `.rs`, `/mod.rs` and a trailing `/` taken off (`jsonfile/` and
/// `scope-profiler/src/jsonfile/mod.rs` are both `jsonfile`).
fn as_module_path(name: &str) -> String {
    let mut name = name.trim();
    for krate in DESCRIBED_CRATES {
        if let Some(rest) = name
            .strip_prefix(krate)
            .and_then(|r| r.strip_prefix("/src/"))
        {
            name = rest;
        }
    }
    let name = name.strip_suffix('/').unwrap_or(name);
    let name = name.strip_suffix(".rs").unwrap_or(name);
    name.strip_suffix("/mod").unwrap_or(name).to_owned()
}

/// The modules listed in the second column of ARCHITECTURE.md's table of
/// layers ("| 1 foundation | `platform` `clock` ... |"); a crate's name
/// there (`hdf5` (crate `scope-profiler-hdf5`)) is no module.
fn layer_table_modules(doc: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // ["", "1 foundation", "`platform` ...", "what it does", ""]
        let is_layer_row = cells.len() >= 4
            && cells[1]
                .split(' ')
                .next()
                .is_some_and(|n| n.parse::<usize>().is_ok());
        if is_layer_row {
            for name in cells[2].split('`').skip(1).step_by(2) {
                if !name.contains('-') {
                    out.insert(as_module_path(name));
                }
            }
        }
    }
    out
}

/// ARCHITECTURE.md and the tree agree on the modules (issue 38): the table
/// of layers lists exactly the runtime's modules (the `mod` lines of the
/// two lib.rs), every file or folder it names exists, and every module of
/// the seven crates (each `.rs` file under their `src/`, tests aside) is
/// named in it, in backquotes, by its path (`export/sort.rs`,
/// `scope-profiler-cli/src/report/`) or its own name (`encode`). A split
/// module's new files fail here until ARCHITECTURE.md says what they do.
#[test]
fn architecture_names_every_module_and_only_modules_that_exist() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut problems = Vec::new();

    // 1. The table of layers is the lib.rs files' list of modules.
    let table = layer_table_modules(&doc);
    let declared: BTreeSet<String> = all_layers().into_keys().collect();
    for name in declared.difference(&table) {
        problems.push(format!(
            "missing from the table of layers: `{name}` (declared in a lib.rs)"
        ));
    }
    for name in table.difference(&declared) {
        problems.push(format!(
            "extra in the table of layers: `{name}` (no such `mod` line in a lib.rs)"
        ));
    }

    // 2. Every file or folder it names (`x.rs`, `x/`) exists.
    let quoted: Vec<&str> = doc.split('`').skip(1).step_by(2).collect();
    let mut roots: Vec<PathBuf> = DESCRIBED_CRATES
        .iter()
        .map(|k| root().join(k).join("src"))
        .collect();
    roots.push(root());
    for name in &quoted {
        let is_path = (name.ends_with(".rs") || name.ends_with('/'))
            && !name.contains(' ')
            && !name.contains("::");
        if is_path && !roots.iter().any(|r| r.join(name).exists()) {
            problems.push(format!("extra: `{name}` names no file or folder"));
        }
    }

    // 3. Every module is named.
    let named: BTreeSet<String> = quoted.iter().map(|n| as_module_path(n)).collect();
    let mut count = 0;
    for krate in DESCRIBED_CRATES {
        for module in modules_of(krate) {
            count += 1;
            let last = module.rsplit('/').next().unwrap();
            if !named.contains(&module) && !named.contains(last) {
                problems.push(format!(
                    "missing: {krate}/src/{module} (`{module}.rs` or `{module}/`) is named nowhere"
                ));
            }
        }
    }
    assert!(count > 80, "only {count} modules found: the walk lost them");
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md and the tree disagree on {} module(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn module_paths_are_read_from_every_spelling() {
    for spelling in [
        "jsonfile/",
        "jsonfile/mod.rs",
        "scope-profiler/src/jsonfile/",
        "scope-profiler/src/jsonfile/mod.rs",
        "jsonfile",
    ] {
        assert_eq!(as_module_path(spelling), "jsonfile", "{spelling}");
    }
    assert_eq!(
        as_module_path("scope-profiler-hdf5/src/pure/dataset.rs"),
        "pure/dataset"
    );
    assert!(is_test_file(Path::new("thread/tests.rs")));
    assert!(is_test_file(Path::new("pure/h5py_tests.rs")));
    assert!(!is_test_file(Path::new("thread/frames.rs")));
    let table = "| layer | modules | what |\n| --- | --- | --- |\n| 1 foundation | `clock` `jsonfile/` (crate `a-crate`) | `not_a_module` |\n";
    assert_eq!(
        layer_table_modules(table),
        BTreeSet::from(["clock".to_owned(), "jsonfile".to_owned()])
    );
}

/// The longest a source file may be (issue 38): past it, a module is split
/// into a folder of smaller ones.
const MAX_SOURCE_LINES: usize = 800;

/// No source file of any crate of the workspace is longer than
/// [`MAX_SOURCE_LINES`] lines, tests aside (`tests.rs`, `*_tests.rs`,
/// files under `tests/`) and vendored assets (not `.rs`).
#[test]
fn no_source_file_is_over_800_lines() {
    let mut srcs: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(root()).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").exists() && dir.join("src").is_dir() {
            srcs.push(dir.join("src"));
        }
    }
    assert!(srcs.len() >= 6, "crates found: {srcs:?}");
    let (mut too_long, mut files) = (Vec::new(), 0);
    for src in &srcs {
        for file in rust_files(src) {
            let rel = file.strip_prefix(src).unwrap();
            if is_test_file(rel) {
                continue;
            }
            files += 1;
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            let name = file
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if lines > MAX_SOURCE_LINES {
                too_long.push(format!("{name}: {lines} lines (split it into a folder)"));
            }
        }
    }
    assert!(files > 100, "only {files} source files found");
    assert!(
        too_long.is_empty(),
        "source files over {MAX_SOURCE_LINES} lines:\n{}",
        too_long.join("\n")
    );
}

/// The one JSON reader of the workspace (issue 38): `json::Parser`, in
/// this file of the core.
fn json_reader() -> PathBuf {
    core_src().join("json.rs")
}

/// What only a JSON parser has, in `code` (comments and string literals
/// aside): a type named `Parser`, the surrogate range that decoding a
/// `\u` escape needs (`0xD800`), or the char that JSON's `\b` escape
/// stands for (`'\u{8}'`, `'\x08'`). Each one the parser holds, and each
/// one the second parser that `value.rs` held until issue 38 held too.
fn json_parser_markers(code: &str) -> Vec<&'static str> {
    let code = without_strings(code);
    let code: String = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
        .to_ascii_lowercase();
    let mut found = Vec::new();
    for (marker, spellings) in [
        ("struct Parser", &["struct parser"][..]),
        ("0xD800", &["0xd800", "0xd_800"][..]),
        ("'\\u{8}'", &["'\\u{8}'", "'\\u{08}'", "'\\x08'"][..]),
    ] {
        if spellings.iter().any(|s| code.contains(s)) {
            found.push(marker);
        }
    }
    found
}

#[test]
fn the_json_parser_markers_see_a_parser_and_not_a_writer() {
    // The heart of the parser value.rs had before issue 38.
    let old = r#"
        struct Parser<'a> { s: &'a [u8], i: usize }
        // 0xD800 in a comment is not code.
        fn string(&mut self) -> Option<String> {
            let c = match *self.s.get(self.i)? {
                b'b' => '\u{8}',
                b'u' => { let hi = self.hex4()?; if (0xD800..0xDC00).contains(&hi) {} }
            };
        }"#;
    assert_eq!(
        json_parser_markers(old),
        ["struct Parser", "0xD800", "'\\u{8}'"]
    );
    // A writer, comments and messages are not a parser.
    let writer = r#"
        // struct Parser, '\u{8}'
        fn escaped(c: char) -> String { format!("\\u{:04x} 0xD800 struct Parser", c as u32) }"#;
    assert!(json_parser_markers(writer).is_empty());
}

/// One JSON parser (issue 38): no source file of the workspace's crates
/// (every `src/` directory, the runtime's, the CLI's, the benches', the
/// fuzz targets') other than `json.rs` of the core defines one. The CLI
/// and tests may read JSON with `serde_json` (they are not linked into a
/// user's crate); the runtime's crates may not depend on a JSON crate at
/// all (ARCHITECTURE.md, Features and dependencies).
#[test]
fn one_json_parser() {
    let one = json_reader();
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|src| src.is_dir() && src.parent().unwrap().join("Cargo.toml").exists())
        .collect();
    srcs.sort();
    for krate in [
        "scope-profiler-core",
        "scope-profiler",
        "scope-profiler-cli",
    ] {
        assert!(
            srcs.contains(&root().join(krate).join("src")),
            "{krate}/src not among {srcs:?}"
        );
    }
    let files: Vec<PathBuf> = srcs.iter().flat_map(|s| rust_files(s)).collect();
    assert!(files.len() > 80, "the workspace's sources: {}", files.len());
    assert!(files.contains(&one), "{} is not read", one.display());
    let mut parsers = BTreeMap::new();
    for file in &files {
        let markers = json_parser_markers(&std::fs::read_to_string(file).unwrap());
        if !markers.is_empty() {
            parsers.insert(file.clone(), markers);
        }
    }
    // The one reader is found by every marker: the check sees a parser.
    assert_eq!(
        parsers.remove(&one),
        Some(vec!["struct Parser", "0xD800", "'\\u{8}'"]),
        "{} is no longer the JSON parser the check looks for",
        one.display()
    );
    assert!(
        parsers.is_empty(),
        "JSON parsers outside {} (use json::Parser): {parsers:#?}",
        one.display()
    );
    for krate in [
        "scope-profiler-core",
        "scope-profiler-hdf5",
        "scope-profiler-reader",
        "scope-profiler",
    ] {
        let deps = dependencies(krate);
        assert!(!deps.is_empty(), "{krate}: no dependencies read");
        for json in [
            "serde_json",
            "simd-json",
            "json",
            "sonic-rs",
            "jiter",
            "miniserde",
        ] {
            assert!(
                !deps.iter().any(|d| d == json),
                "{krate} depends on the JSON crate {json}"
            );
        }
    }
}

/// The files of the six crates whose code says `unsafe` (issue 38: unsafe
/// stays in the few modules that need it, behind small safe types): the
/// platform's OS calls, the recorder's lent slices and chunk pushes
/// (`thread/raw.rs`, `thread/hot.rs`, and `Cold`'s lending in `cold.rs`,
/// `tasks.rs`, `finish.rs`; a speculative first poll's records copied from
/// the spec chunk in `spec.rs`), the records' single-writer chunks (`record.rs`,
/// `lane.rs`), the TSC (`clock.rs`), leaked statics (`registry.rs`,
/// `callsite.rs`), the future a task polls (`task.rs`), the global
/// allocator (`counters.rs`), rsmpi's buffers (`comm.rs`), unlinked
/// scratch files (`scratch.rs`), the HDF5 C library (`h5/`, with `mpio`, and
/// its `H5Type` impls in `schema.rs`), and a chunk built by hand in a test.
/// Every other file is safe code: a new `unsafe` elsewhere fails here, as
/// does a listed file that no longer needs it.
const UNSAFE_FILES: [&str; 33] = [
    "scope-profiler-core/src/assemble/tests.rs",
    "scope-profiler-core/src/callsite.rs",
    "scope-profiler-core/src/clock.rs",
    "scope-profiler-core/src/comm.rs",
    "scope-profiler-core/src/counters.rs",
    "scope-profiler-core/src/lane.rs",
    "scope-profiler-core/src/platform/linux.rs",
    "scope-profiler-core/src/platform/linux/samples.rs",
    "scope-profiler-core/src/platform/mod.rs",
    "scope-profiler-core/src/platform/portable.rs",
    "scope-profiler-core/src/record.rs",
    "scope-profiler-core/src/registry.rs",
    "scope-profiler-core/src/scratch.rs",
    "scope-profiler-core/src/task.rs",
    "scope-profiler-core/src/thread/cold.rs",
    "scope-profiler-core/src/thread/finish.rs",
    "scope-profiler-core/src/thread/hot.rs",
    "scope-profiler-core/src/thread/lazy.rs",
    "scope-profiler-core/src/thread/raw.rs",
    "scope-profiler-core/src/thread/spec.rs",
    "scope-profiler-core/src/thread/tasks.rs",
    "scope-profiler-hdf5/src/h5/attributes.rs",
    "scope-profiler-hdf5/src/h5/checks.rs",
    "scope-profiler-hdf5/src/h5/dataset.rs",
    "scope-profiler-hdf5/src/h5/errors.rs",
    "scope-profiler-hdf5/src/h5/file.rs",
    "scope-profiler-hdf5/src/h5/group.rs",
    "scope-profiler-hdf5/src/h5/mod.rs",
    "scope-profiler-hdf5/src/h5/raw_chunks.rs",
    "scope-profiler-hdf5/src/h5/space.rs",
    "scope-profiler-hdf5/src/h5/strings.rs",
    "scope-profiler-hdf5/src/h5/types.rs",
    "scope-profiler-hdf5/src/schema.rs",
];

/// Whether `code` (comments and strings removed) uses the `unsafe` keyword.
fn says_unsafe(code: &str) -> bool {
    let code = without_strings(code);
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .any(|l| {
            l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "unsafe")
        })
}

#[test]
fn the_unsafe_check_sees_code_not_comments() {
    assert!(says_unsafe("let x = unsafe { f() };"));
    assert!(says_unsafe("pub unsafe fn f() {}"));
    assert!(!says_unsafe(
        "// SAFETY: unsafe in a comment\n/// unsafe { doc }\nlet s = \"unsafe\";"
    ));
    assert!(!says_unsafe("#![forbid(unsafe_code)]"));
}

/// `unsafe` only in [`UNSAFE_FILES`]; the crates with none forbid it at
/// their root.
#[test]
fn unsafe_stays_in_the_files_that_need_it() {
    let mut found = BTreeSet::new();
    let mut files = 0;
    for krate in DESCRIBED_CRATES {
        let src = root().join(krate).join("src");
        for file in rust_files(&src) {
            files += 1;
            let code = std::fs::read_to_string(&file).unwrap();
            if says_unsafe(&code) {
                let name = file
                    .strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                found.insert(name);
            }
        }
    }
    assert!(files > 120, "only {files} source files read");
    let listed: BTreeSet<String> = UNSAFE_FILES.iter().map(|s| s.to_string()).collect();
    let new: Vec<_> = found.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found).collect();
    assert!(
        new.is_empty() && stale.is_empty(),
        "unsafe code in files not in UNSAFE_FILES: {new:?}; listed but safe now: {stale:?}"
    );
    for root_file in [
        "scope-profiler-cli/src/main.rs",
        "scope-profiler-tracing/src/lib.rs",
        "scope-profiler-macros/src/lib.rs",
        "scope-profiler/src/lib.rs",
    ] {
        let code = std::fs::read_to_string(root().join(root_file)).unwrap();
        assert!(
            code.contains("#![forbid(unsafe_code)]"),
            "{root_file} does not forbid unsafe code"
        );
    }
}
