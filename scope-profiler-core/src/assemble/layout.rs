//! The rows of the file and each region's first slot.

#![forbid(unsafe_code)]

/// The rows (the session region ids of the regions with calls, in
/// registration order) and each region's first slot (by session id).
pub(super) fn layout(regions: usize, counts: &[u64]) -> (Vec<u32>, Vec<u64>) {
    let used = counts.iter().filter(|&&n| n > 0).count();
    let mut rows = Vec::with_capacity(used);
    let mut row_offset = vec![0u64; regions];
    let mut offset = 0u64;
    for (region, (&count, first)) in counts.iter().zip(&mut row_offset).enumerate() {
        if count > 0 {
            *first = offset;
            rows.push(region as u32);
            offset += count;
        }
    }
    (rows, row_offset)
}
