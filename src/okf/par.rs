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

/// Outputs a [`stream`] computes ahead of the one its consumer waits for, at most: the
/// memory of a stream beyond `consume`'s own is this many outputs.
pub const STREAM_WINDOW: usize = 8;

/// The shared state of a [`stream`].
struct StreamState<O> {
    /// Index of the next item nobody has claimed yet (items are claimed in order).
    next: usize,
    /// Outputs computed and not consumed yet, by index.
    done: std::collections::BTreeMap<usize, O>,
    /// Index of the next item the consumer takes.
    consumed: usize,
    /// The consumer left (finished or failed): the helper claims nothing more.
    stop: bool,
    /// The helper left, also by a panic: what it claimed and did not finish is computed by
    /// the calling thread.
    helper_gone: bool,
}

/// Marks the helper of a [`stream`] as gone when it leaves, also by unwinding.
struct HelperGone<'a, O>(&'a (std::sync::Mutex<StreamState<O>>, std::sync::Condvar));

impl<O> Drop for HelperGone<'_, O> {
    fn drop(&mut self) {
        let (m, cv) = self.0;
        m.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .helper_gone = true;
        cv.notify_all();
    }
}

/// `for (i, x) in items.iter().enumerate() { consume(i, x, f(x))? }`, with `f` computed on
/// the calling thread and one helper thread when there are at least [`PARALLEL_MIN_ITEMS`]
/// items and the host has at least two CPUs. `consume` always runs on the calling thread,
/// in input order, and the first error it returns ends the stream (with the error); at most
/// [`STREAM_WINDOW`] outputs are computed ahead of the one being consumed. `f` MUST be pure
/// (it may run for items after the one whose consumption failed, and is run again on the
/// calling thread for an item whose computation on the helper panicked).
///
/// # Errors
/// The first error of `consume`.
pub fn stream<'a, I: Sync, O: Send, E>(
    items: &'a [I],
    f: impl Fn(&'a I) -> O + Sync,
    mut consume: impl FnMut(usize, &'a I, O) -> Result<(), E>,
) -> Result<(), E> {
    use std::sync::{Condvar, Mutex, PoisonError};
    if items.len() < PARALLEL_MIN_ITEMS || cpus() < 2 {
        for (i, x) in items.iter().enumerate() {
            consume(i, x, f(x))?;
        }
        return Ok(());
    }
    let shared = (
        Mutex::new(StreamState {
            next: 0,
            done: std::collections::BTreeMap::new(),
            consumed: 0,
            stop: false,
            helper_gone: false,
        }),
        Condvar::new(),
    );
    let (m, cv) = &shared;
    let lock = || m.lock().unwrap_or_else(PoisonError::into_inner);
    let f = &f;
    std::thread::scope(|s| {
        let helper = || {
            let _gone = HelperGone(&shared);
            let mut st = lock();
            loop {
                if st.stop || st.next >= items.len() {
                    return;
                }
                if st.next >= st.consumed + STREAM_WINDOW {
                    st = cv.wait(st).unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
                let i = st.next;
                st.next += 1;
                drop(st);
                let o = f(&items[i]);
                st = lock();
                st.done.insert(i, o);
                cv.notify_all();
            }
        };
        let handle = std::thread::Builder::new().spawn_scoped(s, helper);
        if handle.is_err() {
            lock().helper_gone = true;
        }
        let mut result = Ok(());
        for (i, x) in items.iter().enumerate() {
            let mut st = lock();
            let o = loop {
                if let Some(o) = st.done.remove(&i) {
                    drop(st);
                    break o;
                }
                if st.next <= i || st.helper_gone {
                    // Not claimed yet, or claimed by a helper that is gone: computed here.
                    st.next = st.next.max(i + 1);
                    drop(st);
                    break f(x);
                }
                // In flight on the helper: compute a later item meanwhile, within the window.
                if st.next < items.len() && st.next < i + STREAM_WINDOW {
                    let j = st.next;
                    st.next += 1;
                    drop(st);
                    let o = f(&items[j]);
                    st = lock();
                    st.done.insert(j, o);
                    continue;
                }
                st = cv.wait(st).unwrap_or_else(PoisonError::into_inner);
            };
            if let Err(e) = consume(i, x, o) {
                result = Err(e);
                break;
            }
            lock().consumed = i + 1;
            cv.notify_all();
        }
        lock().stop = true;
        cv.notify_all();
        if let Ok(h) = handle {
            // A helper that panicked left its items to this thread, which computed them
            // again (`f` is pure): nothing is lost, so its panic is not re-raised.
            let _ = h.join();
        }
        result
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

    #[test]
    fn stream_consumes_in_order_and_stops_at_the_first_error() {
        for n in [0usize, 5, 64, 65, 1000] {
            let v: Vec<usize> = (0..n).collect();
            let mut seen = Vec::new();
            let r: Result<(), ()> = super::stream(
                &v,
                |x| x * 3,
                |i, x, o| {
                    assert_eq!((i, o), (*x, x * 3));
                    seen.push(i);
                    Ok(())
                },
            );
            assert!(r.is_ok());
            assert_eq!(seen, v);
            let mut last = None;
            let r = super::stream(
                &v,
                |x| *x,
                |i, _, _| {
                    last = Some(i);
                    if i == 40 {
                        Err(i)
                    } else {
                        Ok(())
                    }
                },
            );
            if n > 40 {
                assert_eq!((r, last), (Err(40), Some(40)));
            } else {
                assert!(r.is_ok());
            }
        }
    }

    #[test]
    fn stream_recomputes_what_a_panicking_helper_left() {
        // The helper panics on item 100 (if it takes it): the calling thread computes it
        // again, and the stream still yields every output once, in order.
        let v: Vec<usize> = (0..300).collect();
        let once = std::sync::atomic::AtomicBool::new(false);
        let main = std::thread::current().id();
        let mut seen = Vec::new();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::stream(
                &v,
                |x| {
                    if *x == 100
                        && std::thread::current().id() != main
                        && !once.swap(true, std::sync::atomic::Ordering::SeqCst)
                    {
                        panic!("helper");
                    }
                    *x
                },
                |i, _, o| {
                    assert_eq!(i, o);
                    seen.push(i);
                    Ok::<(), ()>(())
                },
            )
        }));
        assert!(matches!(r, Ok(Ok(()))), "{r:?}");
        assert_eq!(seen, v);
    }
}
