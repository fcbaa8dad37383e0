//! Trait methods whose declared return type clippy finds too complex: the
//! trait allows `clippy::type_complexity` once, and its impls may not
//! (clippy does not check a trait impl's signature). The instrumented
//! bodies name that type again (the async fn's fake return, the outcome's
//! value), which must not bring the lint back.

use std::collections::HashMap;
use std::future::Future;

/// A value clippy scores as a very complex type.
#[allow(clippy::type_complexity)]
pub trait Source {
    /// Loads the table, as a future.
    fn load(
        &self,
    ) -> impl Future<
        Output = Result<Vec<HashMap<String, Vec<(u32, Box<dyn Fn(u8) -> Option<u16>>)>>>, String>,
    >;

    /// Loads the table, recording the outcome.
    fn load_checked(
        &self,
    ) -> impl Future<
        Output = Result<Vec<HashMap<String, Vec<(u32, Box<dyn Fn(u8) -> Option<u16>>)>>>, String>,
    >;

    /// Loads the table now.
    fn load_now(
        &self,
    ) -> Result<Vec<HashMap<String, Vec<(u32, Box<dyn Fn(u8) -> Option<u16>>)>>>, String>;
}

/// A source with one empty table.
pub struct Empty;

impl Source for Empty {
    #[scope_profiler::profile]
    async fn load(
        &self,
    ) -> Result<Vec<HashMap<String, Vec<(u32, Box<dyn Fn(u8) -> Option<u16>>)>>>, String> {
        Ok(vec![HashMap::new()])
    }

    #[scope_profiler::profile(record_outcome)]
    async fn load_checked(
        &self,
    ) -> Result<Vec<HashMap<String, Vec<(u32, Box<dyn Fn(u8) -> Option<u16>>)>>>, String> {
        Ok(vec![HashMap::new()])
    }

    #[scope_profiler::profile(record_outcome)]
    fn load_now(
        &self,
    ) -> Result<Vec<HashMap<String, Vec<(u32, Box<dyn Fn(u8) -> Option<u16>>)>>>, String> {
        Ok(vec![HashMap::new()])
    }
}

#[cfg(test)]
mod tests {
    use super::{Empty, Source};
    use scope_profiler as sp;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    /// Polls a future that never waits to its end.
    fn ready<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(value) => value,
            Poll::Pending => panic!("the future waited"),
        }
    }

    #[test]
    fn complex_returns_record() {
        let _serial = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        assert_eq!(ready(Empty.load()).unwrap().len(), 1);
        assert_eq!(ready(Empty.load_checked()).unwrap().len(), 1);
        assert_eq!(Empty.load_now().unwrap().len(), 1);
        let results = sp::finalize().unwrap();
        let mut names = results.profile().unwrap().region_names.clone();
        names.sort();
        assert_eq!(names, ["load", "load_checked", "load_now"]);
    }
}
