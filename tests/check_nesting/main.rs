//! `sp-check-nesting FILE|DIR...`: checks that every call of each profile
//! (a directory: every `.h5` and `.json` in it) lies within its parent's
//! span ([`integration_tests::nesting`]). Prints, per file and in all, the
//! calls checked and the violations with their shapes. Exit 0: none; 1:
//! violations; 2: a file could not be read or no file was given.

use std::path::PathBuf;
use std::process::ExitCode;

use integration_tests::nesting::check_nesting;

fn main() -> ExitCode {
    let mut files: Vec<PathBuf> = Vec::new();
    for arg in std::env::args_os().skip(1) {
        let path = PathBuf::from(arg);
        if path.is_dir() {
            let Ok(entries) = std::fs::read_dir(&path) else {
                eprintln!("sp-check-nesting: cannot read {}", path.display());
                return ExitCode::from(2);
            };
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "h5" || x == "json"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path);
        }
    }
    if files.is_empty() {
        eprintln!("sp-check-nesting: no profile to check");
        return ExitCode::from(2);
    }
    let (mut calls, mut in_tasks, mut violations, mut broken) = (0u64, 0u64, 0u64, 0usize);
    for file in &files {
        match check_nesting(file) {
            Ok(report) => {
                calls += report.calls;
                in_tasks += report.in_tasks;
                violations += report.violation_count();
                if report.violation_count() > 0 {
                    broken += 1;
                    print!("{}: {report}", file.display());
                }
            }
            Err(error) => {
                eprintln!("sp-check-nesting: {}: {error}", file.display());
                return ExitCode::from(2);
            }
        }
    }
    println!(
        "{} files, {calls} calls checked ({in_tasks} in async tasks), {violations} violations \
         (in {broken} files)",
        files.len()
    );
    if violations > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
