//! The runtime's modules form layers that only point down: a module uses
//! modules of its own layer or of the layers below it, and no two modules
//! use each other, directly or through others. The layers are the groups of
//! `mod` lines in `scope-profiler/src/lib.rs` (bottom first, each group
//! headed by a `// N. name` comment); uses are read from the `crate::`
//! paths of each module's code (comments aside).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scope-profiler/src")
}

/// Module name -> layer number, from lib.rs.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut layer = 0;
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("// ") {
            if let Some(n) = rest.split_once(". ").and_then(|(n, _)| n.parse().ok()) {
                layer = n;
            }
        } else if let Some(name) = line.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            assert!(
                layer > 0,
                "mod {name} is declared before any `// N. layer` comment"
            );
            out.insert(name.to_owned(), layer);
        }
    }
    out
}

/// The source files of module `name`: `name.rs`, or every file of `name/`.
fn files_of(name: &str) -> Vec<PathBuf> {
    let file = src().join(format!("{name}.rs"));
    if file.exists() {
        return vec![file];
    }
    let dir = src().join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("module {name}: no {name}.rs and no {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
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
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let layer = layers(&lib);
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

/// OS calls live in `platform/` alone (issue 24): no other module names
/// `libc` or an OS-specific part of std, outside comments.
#[test]
fn only_the_platform_module_calls_the_os() {
    let platform = src().join("platform");
    let files = rust_files(&src());
    assert!(files.len() > 30, "the runtime's sources: {}", files.len());
    assert!(
        files.iter().any(|f| f.starts_with(&platform)),
        "no platform module under {}",
        src().display()
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
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let modules = layers(&lib);
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
            let roots = ["scope-profiler/src", ""];
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
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let modules = layers(&lib);
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
