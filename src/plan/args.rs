//! What the request decoders of every workflow share (spec/surface.md §9.2, §11): the
//! serialised-argument cap and the measure it is checked with. Pure.

use serde_json::Value;

/// Serialised-argument cap of the patch tools: 16 MiB (spec/surface.md §9.2, §11).
pub const MAX_SERIALISED_ARGS: usize = 16 * 1024 * 1024;

/// Byte length of the compact serde_json serialisation of `v`, without building it.
#[must_use]
pub fn serialised_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Serialising a `Value` into an infallible writer cannot fail; on the impossible error
    // the count is treated as over the cap.
    match serde_json::to_writer(&mut c, v) {
        Ok(()) => c.0,
        Err(_) => usize::MAX,
    }
}
