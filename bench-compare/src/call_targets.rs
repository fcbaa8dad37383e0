//! The targets of issue 36 in RESULTS.md: async calls, outcomes and
//! metadata at the cost of a plain call, and the plain call itself.

use std::fmt::Write as _;

use crate::micro::{MicroResult, Variant};

/// Writes the rows of the targets table: `floor` and `prof` are
/// the floor's and `#[profile]`'s ns per call, `mark` a verdict's word.
pub fn write(
    w: &mut String,
    m: &MicroResult,
    floor: f64,
    prof: f64,
    mark: fn(bool) -> &'static str,
) {
    let (lo, hi) = m.iqr(Variant::Profile);
    let (flo, fhi) = m.iqr(Variant::Fastrace);
    let fastrace = m.overhead(Variant::Fastrace);
    let spread = (hi - lo).max(fhi - flo);
    let _ = writeln!(
        w,
        "| `#[profile]` <= floor + 3 ns | {prof:.1} ns vs floor {floor:.1} + 3 = {:.1} | {} |",
        floor + 3.0,
        mark(prof <= floor + 3.0)
    );
    let _ = writeln!(
        w,
        "| `#[profile]` ahead of fastrace `#[trace]` by more than the rounds' IQR | {prof:.1} ns vs {fastrace:.1} ns: {:.1} ns ahead; IQRs {:.1} (ours {lo:.1}-{hi:.1}) and {:.1} (fastrace {flo:.1}-{fhi:.1}) | {} |",
        fastrace - prof,
        hi - lo,
        fhi - flo,
        mark(fastrace - prof > spread)
    );
    for (what, v, slack) in [
        (
            "`#[profile] async fn` polled once (a task's first poll)",
            Variant::AsyncTask,
            25.0,
        ),
        (
            "`#[profile] async fn` polled once inside a task's poll (a frame)",
            Variant::AsyncNested,
            25.0,
        ),
        (
            "`#[profile(record_outcome)]` returning `Ok`",
            Variant::Outcome,
            8.0,
        ),
        (
            "`#[profile]` in a `call_metadata` scope of one integer of its own",
            Variant::MetadataPerCall,
            25.0,
        ),
    ] {
        let x = m.overhead(v);
        let _ = writeln!(
            w,
            "| {what} <= floor + {slack:.0} ns | {x:.1} ns vs floor {floor:.1} + {slack:.0} = {:.1} | {} |",
            floor + slack,
            mark(x <= floor + slack)
        );
    }
    // Each further poll: a task polled 20 times against one polled 10
    // times (the first poll's and the end's shares cancel), over the same
    // future uninstrumented; and, for the record, the average over 10
    // polls with a tenth of the first (which, for a task that waits,
    // includes its conversion from a speculative first poll) and its end.
    let polls = crate::ours::POLLS as f64;
    let plain = m.median_of(Variant::PlainPolls);
    let (ten, twenty) = (
        m.median_of(Variant::AsyncPolls),
        m.median_of(Variant::AsyncPollsLong),
    );
    let further = (2.0 * polls * twenty - polls * ten) / polls - plain;
    let averaged = ten - plain;
    let _ = writeln!(
        w,
        "| each further poll of a `#[profile] async fn` <= floor + 10 ns | {further:.1} ns a poll over the uninstrumented future's (a task polled 20 times against 10 times) vs floor {floor:.1} + 10 = {:.1}; averaged over 10 polls with the first poll's and the end's share: {averaged:.1} ns | {} |",
        floor + 10.0,
        mark(further <= floor + 10.0)
    );
    let (cheapest_v, cheapest) = [
        Variant::HotpathAsync,
        Variant::FastraceAsync,
        Variant::TracingAsync,
    ]
    .into_iter()
    .map(|v| (v, m.overhead(v)))
    .min_by(|a, b| a.1.total_cmp(&b.1))
    .expect("async peers");
    let task = m.overhead(Variant::AsyncTask);
    let _ = writeln!(
        w,
        "| `#[profile] async fn` polled once <= the cheapest async peer | {task:.1} ns vs {cheapest:.1} ns ({}) | {} |",
        cheapest_v.label(),
        mark(task <= cheapest)
    );
}
