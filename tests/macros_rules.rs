//! Functions that a `macro_rules!` of an instrumented module generates:
//! `profile_all` sees the macro's definition and its invocations as tokens,
//! never the functions they expand to, so those are not instrumented. The
//! documented ways to reach them: `profile_all_items! { always; ... }` (or
//! without `always`) around the items of the macro's body, which names them
//! as the scope would, or `#[profile]` on the function in the body; or the
//! scope's argument `macro_rules`, which does the first for every macro of
//! the scope whose body is items.

use integration_tests::{calls_per_region, count_map, start_in_memory};
use scope_profiler as sp;

mod parser {
    scope_profiler::profile_all_items! {
        always;

        macro_rules! bare_getter {
            ($name:ident, $value:expr) => {
                pub fn $name() -> u32 {
                    $value
                }
            };
        }

        macro_rules! scoped_getter {
            ($name:ident, $value:expr) => {
                scope_profiler::profile_all_items! {
                    always;
                    pub fn $name() -> u32 {
                        $value
                    }
                }
            };
        }

        macro_rules! attributed_getter {
            ($name:ident, $value:expr) => {
                #[scope_profiler::profile]
                pub fn $name() -> u32 {
                    $value
                }
            };
        }

        bare_getter!(bare, 1);
        scoped_getter!(scoped, 2);
        attributed_getter!(attributed, 4);

        pub fn direct() -> u32 {
            bare() + scoped() + attributed()
        }
    }
}

mod lexer {
    scope_profiler::profile_all_items! {
        always, macro_rules;

        macro_rules! getter {
            ($name:ident, $value:expr) => {
                pub fn $name() -> u32 {
                    $value
                }
            };
        }

        macro_rules! methods {
            ($t:ident: $($name:ident),*) => {
                impl $t {
                    $(pub fn $name(&self) -> u32 { self.0 })*
                }
            };
        }

        // An expression body stays as it is: it still works where an
        // expression is expected.
        macro_rules! twice {
            ($e:expr) => {
                $e * 2
            };
        }

        pub struct Token(pub u32);

        getter!(one, 1);
        methods!(Token: width, kind);

        pub fn lex() -> u32 {
            let token = Token(3);
            twice!(one()) + token.width() + token.kind()
        }
    }
}

#[scope_profiler::profile_all(macro_rules)]
mod traced {
    macro_rules! getter {
        ($name:ident) => {
            pub fn $name() -> u32 {
                5
            }
        };
    }

    getter!(five);

    #[scope_profiler::profile(recursive)]
    pub fn entry() -> u32 {
        five()
    }
}

#[test]
fn the_macro_rules_argument_instruments_item_bodies() {
    let _s = start_in_memory();
    assert_eq!(lexer::lex(), 8);
    assert_eq!(traced::five(), 5); // outside the entrypoint: not recorded
    assert_eq!(traced::entry(), 5);
    let results = sp::finalize().unwrap();
    let counts = calls_per_region(results.profile().unwrap());
    let expected = count_map(&[
        ("macros_rules::lexer::lex", 1),
        ("macros_rules::lexer::one", 1),
        ("macros_rules::lexer::Token::width", 1),
        ("macros_rules::lexer::Token::kind", 1),
        ("entry", 1),
        ("macros_rules::traced::five", 1),
    ]);
    assert_eq!(counts, expected);
}

#[test]
fn macro_generated_functions_are_reached_only_from_the_macro_body() {
    let _s = start_in_memory();
    assert_eq!(parser::direct(), 7);
    let results = sp::finalize().unwrap();
    let counts = calls_per_region(results.profile().unwrap());
    // `bare` is not there: the scope never saw its function.
    let expected = count_map(&[
        ("macros_rules::parser::direct", 1),
        ("macros_rules::parser::scoped", 1),
        ("attributed", 1),
    ]);
    assert_eq!(counts, expected);
}
