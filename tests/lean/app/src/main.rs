//! An application over `lean-lib`: its own session, its own region `step`,
//! the library's calls inside it; writes the file named on the command line
//! and checks, reading it back, that every call of the library's five
//! regions is there and nested under a `step` call.
//!   lean-app OUT.h5

use std::collections::HashMap;

use scope_profiler as sp;

const STEPS: u64 = 10;

#[sp::profile]
fn step(i: u64) -> u64 {
    let mut c = lean_lib::Counter(i);
    c.bump();
    lean_lib::parse("one two three") as u64
        + lean_lib::checksum(&[i, 1])
        + lean_lib::by_name()
        + c.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: lean-app OUT.h5")?;
    let run = sp::setup(sp::Options::new().file_path(&path).verbose(false))?;
    let total: u64 = (0..STEPS).map(step).sum();
    run.finalize()?;

    let profile = sp::read_profile(&path)?;
    let events = &profile.events;
    // Each call's region name and parent call, by call id.
    let mut calls: HashMap<i64, (&str, i64)> = HashMap::new();
    for row in &profile.rows {
        let name = profile.region_names[row.region_id as usize].as_str();
        let first = row.event_offset as usize;
        for e in first..first + row.event_count as usize {
            calls.insert(events.call_ids[e], (name, events.parent_ids[e]));
        }
    }
    let under_step = |mut id: i64| {
        while let Some(&(name, parent)) = calls.get(&id) {
            if name.ends_with("step") {
                return true;
            }
            id = parent;
        }
        false
    };
    let library = [
        "parse",
        "tokenize",
        "lean_lib::checksum",
        "lean_lib::by_name",
        "bump",
    ];
    for suffix in library {
        let ids: Vec<i64> = calls
            .iter()
            .filter(|(_, (name, _))| *name == suffix || name.ends_with(&format!("::{suffix}")))
            .map(|(&id, _)| id)
            .collect();
        if ids.len() as u64 != STEPS {
            return Err(format!("{suffix}: {} calls, expected {STEPS}", ids.len()).into());
        }
        if let Some(id) = ids.iter().find(|&&id| !under_step(id)) {
            return Err(format!("{suffix}: call {id} is not nested under a step call").into());
        }
    }
    println!(
        "lean-app: {path}: {} regions, {} calls; the library's {} regions x {STEPS} calls nested under step (total {total})",
        profile.region_names.len(),
        events.len(),
        library.len()
    );
    Ok(())
}
