//! `profile_all(macro_rules)`: macros whose bodies are items (free
//! functions, methods, trait impls, with `$vis` and repetitions) are
//! instrumented where they expand, without a warning; macros whose bodies
//! are expressions or statements, and exported ones, stay as they are.
#![deny(warnings)]
#![allow(dead_code)]

#[scope_profiler::profile_all(always, macro_rules)]
mod generated {
    macro_rules! getters {
        ($($(#[$meta:meta])* $vis:vis fn $name:ident -> $t:ty = $value:expr;)*) => {
            $($(#[$meta])* $vis fn $name() -> $t { $value })*
        };
    }

    macro_rules! display {
        ($t:ident) => {
            impl std::fmt::Display for $t {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    write!(f, "{}", stringify!($t))
                }
            }
        };
    }

    macro_rules! square {
        ($e:expr) => {
            $e * $e
        };
    }

    macro_rules! bind {
        ($name:ident = $e:expr) => {
            let $name = $e;
        };
    }

    #[macro_export]
    macro_rules! exported_getter {
        ($name:ident) => {
            pub fn $name() -> u8 {
                0
            }
        };
    }

    getters! {
        /// One.
        pub fn one -> u32 = 1;
        pub(crate) fn two -> u64 = 2;
        fn three -> u8 = 3;
    }

    pub struct Unit;
    display!(Unit);
    exported_getter!(zero);

    pub fn use_them() -> u64 {
        bind!(x = square!(3u64));
        x + u64::from(one()) + two() + u64::from(three()) + u64::from(zero())
            + Unit.to_string().len() as u64
    }
}

fn main() {
    assert_eq!(generated::use_them(), 9 + 1 + 2 + 3 + 4);
}
