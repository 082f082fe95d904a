//! A tiny HTTP probe that counts connections (the payload tests: nothing may reach it).
//! Moved from `patch.rs`.

/// A tiny HTTP probe on 127.0.0.1 counting connections; stops with the guard.
pub(crate) struct Probe {
    pub(crate) addr: String,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Probe {
    pub(crate) fn start() -> Self {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.set_nonblocking(true).expect("nb");
        let addr = l.local_addr().expect("addr").to_string();
        let hits = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (h, s) = (hits.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            // Bounded: at most ~10 minutes of 10 ms polls, ends when the guard drops.
            for _ in 0..60_000 {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                if l.accept().is_ok() {
                    h.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        Self {
            addr,
            hits,
            stop,
            handle: Some(handle),
        }
    }
    pub(crate) fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
