//! A restart on the same DATA_DIR waits for the previous instance to let go of
//! the store instead of failing, and a store held for good is a clear error.

use std::time::Duration;

use safe_outcomes::app::App;
use safe_outcomes::model::clock::Clock;

#[test]
fn a_restart_waits_for_the_previous_instance_to_release_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let first = App::start(dir.path(), Clock::System).unwrap();
    let path = dir.path().to_path_buf();
    // The old instance is still shutting down when the new one starts.
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        first.shutdown();
    });
    let second = App::start(&path, Clock::System).expect("the store is taken over once released");
    stopper.join().unwrap();
    second.shutdown();
}

#[test]
fn a_store_held_by_a_running_instance_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let first = App::start(dir.path(), Clock::System).unwrap();
    let err = App::start(dir.path(), Clock::System)
        .err()
        .expect("the lock is held");
    let message = format!("{err:#}");
    assert!(message.contains("opening store in"), "{message}");
    assert!(message.contains("lock"), "{message}");
    first.shutdown();
}
