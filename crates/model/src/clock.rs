//! The clock evaluation runs on: the system clock when serving, a manual one
//! the demo and tests advance through the evaluation windows.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};

#[derive(Clone, Debug)]
pub enum Clock {
    System,
    Manual(Arc<AtomicI64>),
}

impl Clock {
    pub fn manual(start: DateTime<Utc>) -> Clock {
        Clock::Manual(Arc::new(AtomicI64::new(start.timestamp_millis())))
    }

    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Clock::System => Utc::now(),
            Clock::Manual(ms) => DateTime::from_timestamp_millis(ms.load(Ordering::SeqCst))
                .expect("clock holds a valid timestamp"),
        }
    }

    /// Move a manual clock forward to `to` (never backwards). No-op for the system clock.
    pub fn advance_to(&self, to: DateTime<Utc>) {
        if let Clock::Manual(ms) = self {
            ms.fetch_max(to.timestamp_millis(), Ordering::SeqCst);
        }
    }
}
