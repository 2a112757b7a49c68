//! A restart on the same DATA_DIR waits for the previous instance to let go of
//! the store instead of failing. A store held for good is a clear error naming
//! the directory and the holder's pid: `app::tests::a_held_data_dir_is_named_with_its_pid`.

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
