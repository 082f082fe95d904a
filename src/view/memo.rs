//! A warm server's per-document memo of derived read models (spec/store.md §17 rule 1,
//! spec/surface.md §14.6 rule 10): the section indexes of [`crate::view::index`] and the link
//! targets of [`crate::view::edges`]. What is derived from one document is a pure function of
//! its bytes and its path or id, so it is kept by [`DocKey`] (content digest and name) and a
//! changed file costs one new entry; nothing is rebuilt wholesale.
//!
//! Bounded by a byte budget fixed at construction: when an insertion would pass it, the
//! entries no call used since the last [`Memo::begin`] are dropped first; an entry that still
//! does not fit is not kept. Pure apart from the memo's own table.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The key of a document's derived model: its content digest (SHA-256) and the name the model
/// depends on (a concept id, or a bundle-relative path).
pub type DocKey = ([u8; 32], Box<str>);

/// What a memo entry costs, in estimated heap bytes.
pub trait Cost {
    /// Estimated bytes held, allocations and their headers included.
    fn cost(&self) -> usize;
}

/// The fixed cost of one entry besides its value and its name: the table slot, the digest and
/// the tick.
const ENTRY_BYTES: usize = 48;

/// Derived models of documents by [`DocKey`], within a byte budget (see the module docs).
#[derive(Debug)]
pub struct Memo<V> {
    budget: usize,
    table: Mutex<Table<V>>,
}

#[derive(Debug)]
struct Table<V> {
    entries: HashMap<DocKey, (Arc<V>, u64)>,
    bytes: usize,
    tick: u64,
}

fn entry_cost<V: Cost>(key: &DocKey, value: &V) -> usize {
    value.cost() + key.1.len() + ENTRY_BYTES
}

impl<V: Cost> Memo<V> {
    /// An empty memo holding at most `budget` bytes (estimated).
    #[must_use]
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            table: Mutex::new(Table {
                entries: HashMap::new(),
                bytes: 0,
                tick: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table<V>> {
        // Every update replaces whole entries, so a poisoned table is consistent.
        self.table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a call: returns the entries of `keys` that are held (marked used by it), in the
    /// order of `keys`.
    #[must_use]
    pub fn begin(&self, keys: &[DocKey]) -> Vec<Option<Arc<V>>> {
        let mut t = self.lock();
        t.tick += 1;
        let tick = t.tick;
        keys.iter()
            .map(|k| {
                t.entries.get_mut(k).map(|(v, used)| {
                    *used = tick;
                    Arc::clone(v)
                })
            })
            .collect()
    }

    /// Keeps the entries a call built (see the module docs for the bound); returns how many
    /// did not fit.
    pub fn keep(&self, built: Vec<(DocKey, Arc<V>)>) -> usize {
        let mut refused = 0usize;
        let mut t = self.lock();
        let tick = t.tick;
        for (key, value) in built {
            let cost = entry_cost(&key, &*value);
            if t.bytes + cost > self.budget {
                let mut freed = 0usize;
                t.entries.retain(|k, (v, used)| {
                    let keep = *used == tick;
                    if !keep {
                        freed += entry_cost(k, &**v);
                    }
                    keep
                });
                t.bytes -= freed.min(t.bytes);
                if t.bytes + cost > self.budget {
                    refused += 1;
                    continue;
                }
            }
            t.bytes += cost;
            if let Some((old, _)) = t.entries.get(&key) {
                let old_cost = entry_cost(&key, &**old);
                t.bytes -= old_cost.min(t.bytes);
            }
            t.entries.insert(key, (value, tick));
        }
        refused
    }

    /// `(entries held, their estimated bytes)`.
    #[must_use]
    pub fn usage(&self) -> (usize, usize) {
        let t = self.lock();
        (t.entries.len(), t.bytes)
    }
}
