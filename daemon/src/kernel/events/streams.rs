//! Open event streams, counted per caller and capped (`limits.streams`): a caller (a device, the
//! socket's user, a session) that opens streams without end is refused past the cap with
//! `429 too_many_streams`, and each stream gives its place back when it ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::kernel::tools::Caller;

/// The open streams of every caller.
#[derive(Debug)]
pub struct Streams {
    max: usize,
    // std Mutex: held to count, never across an await.
    open: Mutex<HashMap<String, usize>>,
}

/// One open stream's place, given back when dropped.
#[derive(Debug)]
pub struct Place {
    streams: Arc<Streams>,
    key: String,
}

impl Streams {
    pub fn new(max: usize) -> Arc<Streams> {
        Arc::new(Streams {
            max,
            open: Mutex::new(HashMap::new()),
        })
    }

    /// The most streams one caller may have open.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A place for one more stream of `caller`, or `None` when it has [`Streams::max`] open.
    pub fn open(self: &Arc<Self>, caller: &Caller) -> Option<Place> {
        let key = caller.label();
        let mut open = self.open.lock().expect("streams");
        let n = open.entry(key.clone()).or_default();
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(Place {
            streams: self.clone(),
            key,
        })
    }

    /// How many streams `caller` has open.
    pub fn count(&self, caller: &Caller) -> usize {
        let open = self.open.lock().expect("streams");
        open.get(&caller.label()).copied().unwrap_or(0)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut open = self.streams.open.lock().expect("streams");
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_has_its_own_cap_and_gets_places_back() {
        let streams = Streams::new(2);
        let phone = Caller::Device {
            id: "d1".into(),
            name: "phone".into(),
            kind: "token".into(),
        };
        let me = Caller::Socket {
            uid: 1000,
            pid: None,
        };
        let a = streams.open(&phone).unwrap();
        let _b = streams.open(&phone).unwrap();
        assert!(streams.open(&phone).is_none(), "a third is refused");
        let _mine = streams.open(&me).expect("another caller is not");
        drop(a);
        assert_eq!(streams.count(&phone), 1);
        assert!(streams.open(&phone).is_some(), "a place came back");
    }
}
