//! Columns of numbers for the page: base64 of little-endian typed arrays,
//! tagged with the JavaScript array type the page decodes them into.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

fn tagged(kind: &str, bytes: &[u8]) -> Value {
    json!({ "t": kind, "b": STANDARD.encode(bytes) })
}

/// A `Float64Array`.
pub(crate) fn f64s(values: &[f64]) -> Value {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    tagged("f64", &bytes)
}

/// A `Float32Array`.
pub(crate) fn f32s(values: &[f32]) -> Value {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    tagged("f32", &bytes)
}

/// A `Uint32Array`.
pub(crate) fn u32s(values: &[u32]) -> Value {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    tagged("u32", &bytes)
}

/// A `Uint8Array`.
pub(crate) fn u8s(values: &[u8]) -> Value {
    tagged("u8", values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn little_endian_base64() {
        assert_eq!(u32s(&[1, 256])["b"], "AQAAAAABAAA=");
        assert_eq!(u8s(&[255])["t"], "u8");
        assert_eq!(f64s(&[1.0])["b"], "AAAAAAAA8D8=");
    }
}
