//! Order-preserving map over a slice on up to two threads (the machine budget of this
//! product: 2 cores). Pure: no I/O, no shared mutable state.

/// Below this many items a map stays on the calling thread (a thread costs ~tens of µs).
pub const PARALLEL_MIN_ITEMS: usize = 64;

/// The CPUs this process may use (`std::thread::available_parallelism`, at least 1), read
/// once per process: on Linux each reading opens and parses the cgroup CPU quota files.
#[must_use]
pub fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// `items.iter().map(f).collect()`, with the second half of the slice mapped on a scoped
/// worker thread when there are at least [`PARALLEL_MIN_ITEMS`] items and the host has at
/// least two CPUs. Output order equals input order.
pub fn map<I: Sync, O: Send>(items: &[I], f: impl Fn(&I) -> O + Sync) -> Vec<O> {
    if items.len() < PARALLEL_MIN_ITEMS || cpus() < 2 {
        return items.iter().map(&f).collect();
    }
    let (first, second) = items.split_at(items.len() / 2);
    std::thread::scope(|s| {
        let other = s.spawn(|| second.iter().map(&f).collect::<Vec<_>>());
        let mut out: Vec<O> = first.iter().map(&f).collect();
        match other.join() {
            Ok(rest) => out.extend(rest),
            // `f` is total on every input in this crate; should the worker fail anyway, the
            // calling thread redoes its half rather than lose items.
            Err(_) => out.extend(second.iter().map(&f)),
        }
        out
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order_on_both_paths() {
        for n in [0usize, 3, 63, 64, 65, 1000] {
            let v: Vec<usize> = (0..n).collect();
            assert_eq!(
                super::map(&v, |x| x * 2),
                v.iter().map(|x| x * 2).collect::<Vec<_>>()
            );
        }
    }
}
