//! One trait implemented three times, with three arguments, its path spelled
//! `Engine`, `super::Engine` and `crate::engine::Engine` (and the type
//! `GeneralPurpose` and `super::GeneralPurpose`), and methods on `dyn Shape`.

pub mod engine;
pub mod forms;

#[cfg(test)]
mod tests {
    use crate::engine::{Engine, GeneralPurpose};
    use crate::forms::shapes::{Circle, Shape};
    use scope_profiler as sp;

    /// One session at a time: the tests of this crate run in parallel.
    static SESSION: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn names(run: impl FnOnce()) -> Vec<(String, u64)> {
        let _one = SESSION.lock().unwrap_or_else(|e| e.into_inner());
        sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        run();
        let results = sp::finalize().unwrap();
        let profile = results.profile().unwrap();
        let mut names: Vec<(String, u64)> = profile
            .rows
            .iter()
            .map(|r| {
                let name = &profile.region_names[r.region_id as usize];
                (name.clone(), r.event_count)
            })
            .collect();
        names.sort();
        names
    }

    /// Three impls of one trait with other arguments are three regions
    /// (issue 29, item 7a), however the trait and its arguments are spelled.
    #[test]
    fn one_trait_spelled_three_ways_is_named_alike_per_argument() {
        let recorded = names(|| {
            let engine = GeneralPurpose;
            let total = Engine::<u8>::config(&engine)
                + Engine::<u16>::config(&engine)
                + Engine::<u32>::config(&engine);
            assert_eq!(total, 6);
            let mut grid = crate::engine::Grid(vec![0; 2]);
            grid[1] = 5;
            assert_eq!(grid.0, [0, 5]);
        });
        let expected = [
            (
                "real_names::engine::impls::<GeneralPurpose as Engine<u16>>::config",
                1,
            ),
            (
                "real_names::engine::impls::<GeneralPurpose as Engine<u32>>::config",
                1,
            ),
            (
                "real_names::engine::impls::<GeneralPurpose as Engine<u8>>::config",
                1,
            ),
            (
                "real_names::engine::impls::<Grid as IndexMut<usize>>::index_mut",
                1,
            ),
        ];
        let expected: Vec<(String, u64)> = expected.map(|(n, c)| (n.to_owned(), c)).into();
        assert_eq!(recorded, expected);
    }

    #[test]
    fn methods_on_a_trait_object_are_named_after_dyn_trait() {
        let recorded = names(|| {
            let shape: &dyn Shape = &Circle(1.0);
            assert_eq!(shape.dyn_area(), 3.0);
        });
        assert_eq!(
            recorded,
            [
                (
                    "real_names::forms::shapes::<Circle as Shape>::area".to_owned(),
                    1
                ),
                (
                    "real_names::forms::shapes::<dyn Shape>::dyn_area".to_owned(),
                    1
                ),
            ]
        );
    }
}
