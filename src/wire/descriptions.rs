//! Tool descriptions (spec/surface.md §17.5).
