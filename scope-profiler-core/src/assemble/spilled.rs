//! Spilled blocks for the two walks: each decoded, and its times
//! converted, once per finalize, by one walk that hands it on to the other.

#![forbid(unsafe_code)]

use super::walk::WalkInput;
use crate::record::Record;

/// A decoded spilled block: its records and each one's start and duration
/// in nanoseconds.
#[derive(Default)]
pub(super) struct Block {
    pub(super) records: Vec<Record>,
    pub(super) times: Vec<(i64, i64)>,
}

/// A decoded block, as a walk sends it to another walk.
type DecodedBlock = std::io::Result<Block>;

/// Where a walk gets the records of spilled segments: each is decoded, and
/// its times converted, once per finalize, by the call paths' walk, which
/// hands each decoded block on to the placing walk (decoding had been a
/// sixth of each walk, converting the times a visible share).
pub(super) enum Spilled {
    /// Reads and decodes them; with `to`, hands each decoded block on, in
    /// walk order, once walked, taking its buffers back from `back`.
    Decode {
        buffers: crate::spill::Buffers,
        block: Block,
        to: Option<(
            std::sync::mpsc::SyncSender<DecodedBlock>,
            std::sync::mpsc::Receiver<Block>,
        )>,
    },
    /// Receives them from a walk that decodes, in walk order, and gives
    /// each buffer back once walked.
    Receive {
        from: std::sync::mpsc::Receiver<DecodedBlock>,
        back: std::sync::mpsc::Sender<Block>,
        block: Block,
    },
}

impl Spilled {
    /// Decodes by itself.
    pub(super) fn decode() -> Spilled {
        Spilled::Decode {
            buffers: Default::default(),
            block: Block::default(),
            to: None,
        }
    }

    /// A walk that decodes and one that receives its decoded blocks.
    pub(super) fn pair() -> (Spilled, Spilled) {
        // Two blocks in flight, so that at most five are decoded at once
        // (each at most a chunk: 1/64 of the memory limit): those, the one
        // each walk is on, and one on its way back.
        let (to, from) = std::sync::mpsc::sync_channel(2);
        let (back, returned) = std::sync::mpsc::channel();
        (
            Spilled::Decode {
                buffers: Default::default(),
                block: Block::default(),
                to: Some((to, returned)),
            },
            Spilled::Receive {
                from,
                back,
                block: Block::default(),
            },
        )
    }

    /// The decoded block of the spilled segment `(offset, len, bytes)`.
    pub(super) fn block(
        &mut self,
        input: &WalkInput,
        segment: (u64, usize, u32),
    ) -> std::io::Result<&Block> {
        match self {
            Spilled::Decode { buffers, block, to } => {
                if let Err(e) = input
                    .store
                    .read_spilled(segment, buffers, &mut block.records)
                {
                    if let Some((to, _)) = to {
                        let _ = to.send(Err(std::io::Error::new(e.kind(), e.to_string())));
                    }
                    return Err(e);
                }
                block.times.clear();
                block.times.extend(block.records.iter().map(|r| {
                    let start = input.conv.ns(r.start);
                    (start, input.conv.ns(r.end) - start)
                }));
                Ok(block)
            }
            Spilled::Receive { from, block, .. } => {
                *block = from.recv().map_err(|_| {
                    std::io::Error::other("the walk that decodes spilled records ended early")
                })??;
                if block.records.len() != segment.1 || block.times.len() != segment.1 {
                    return Err(std::io::Error::other(
                        "a decoded block of spilled records out of order",
                    ));
                }
                Ok(block)
            }
        }
    }

    /// The last block of [`Spilled::block`] has been walked.
    ///
    /// # Errors
    /// A walk that hands blocks on and finds the other walk gone (it
    /// stopped on an error of its own, which is the one reported): this
    /// walk's result is not needed.
    pub(super) fn walked(&mut self) -> std::io::Result<()> {
        match self {
            Spilled::Decode {
                block,
                to: Some((to, returned)),
                ..
            } => {
                let spare = returned.try_recv().unwrap_or_default();
                to.send(Ok(std::mem::replace(block, spare)))
                    .map_err(|_| std::io::Error::other("the placing walk stopped"))
            }
            Spilled::Decode { to: None, .. } => Ok(()),
            Spilled::Receive { back, block, .. } => {
                // The other walk may be done with its buffers.
                let _ = back.send(std::mem::take(block));
                Ok(())
            }
        }
    }
}
