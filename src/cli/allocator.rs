//! The binary's allocator is mimalloc (`src/main.rs`), not glibc's malloc,
//! which kept the pages bursts of work freed in per-thread arenas (docs/store.md,
//! "Memory: the allocator and sled's cache"). The library, and so its tests,
//! keep the system allocator; this module only sets mimalloc's options.

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (the Rust crate
/// leaves it out); `tests::the_purge_delay_option_is_the_one_named_and_set_to_zero`
/// checks it.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Return freed pages to the system at once rather than after mimalloc's
/// default 1,000 ms: measured at 1M outputs, 428 MiB held against 472 MiB,
/// at no measured cost per event. `MIMALLOC_PURGE_DELAY` in the environment wins.
pub fn purge_freed_pages_at_once() {
    if !crate::settings::is_set(&crate::settings::MIMALLOC_PURGE_DELAY) {
        // SAFETY: sets one integer option; mimalloc reads options atomically.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
}

/// `mi_option_allow_thp` in mimalloc.h's `mi_option_e` (the Rust crate
/// leaves it out); `tests::the_huge_pages_option_is_the_one_named_and_huge_pages_are_off`
/// checks it.
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// Keep the process's memory in 4 KiB pages. mimalloc asks the kernel for
/// transparent huge pages on its arenas (`madvise(MADV_HUGEPAGE)`, its
/// `allow_thp` option, on by default), and on a kernel whose THP setting is
/// `madvise` a 2 MiB huge page is resident whole once any byte of it is
/// touched, and the pages mimalloc purges inside it stay resident until
/// the kernel splits it. Measured at 1M outputs (`bench scale`), 255.8 MiB
/// held without huge pages against 305.6 MiB with them (docs/store.md, "Memory").
/// `PR_SET_THP_DISABLE` covers the whole process, the mappings mimalloc
/// made before `main` included; `MIMALLOC_ALLOW_THP` in the environment wins.
pub fn no_transparent_huge_pages() {
    if !crate::settings::is_set(&crate::settings::MIMALLOC_ALLOW_THP) {
        // SAFETY: sets one integer option, then one flag of this process
        // (`prctl(2)`: PR_SET_THP_DISABLE takes 1 and three zeros).
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0);
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mimalloc's documented default purge delay is 1,000 ms: an option with
    /// that default at our index is the one we mean to set; and setting it
    /// makes it 0. (Only this test touches the option in the test binary,
    /// whose allocator is the system's.)
    #[test]
    fn the_purge_delay_option_is_the_one_named_and_set_to_zero() {
        if crate::settings::is_set(&crate::settings::MIMALLOC_PURGE_DELAY) {
            return;
        }
        // SAFETY: reads one integer option.
        let read = || unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(read(), 1000);
        purge_freed_pages_at_once();
        assert_eq!(read(), 0);
    }

    /// mimalloc's documented defaults around `allow_thp` (43): 32 for the
    /// option before it (`page_cross_thread_max_reclaim`), 1 for it on
    /// Linux, 0 for the one after (`minimal_purge_size`). Setting it makes
    /// it 0, and the kernel then keeps the process out of huge pages.
    #[test]
    fn the_huge_pages_option_is_the_one_named_and_huge_pages_are_off() {
        if crate::settings::is_set(&crate::settings::MIMALLOC_ALLOW_THP) {
            return;
        }
        // SAFETY: reads one integer option.
        let read = |o| unsafe { libmimalloc_sys::mi_option_get(o) };
        assert_eq!(read(MI_OPTION_ALLOW_THP - 1), 32);
        assert_eq!(read(MI_OPTION_ALLOW_THP + 1), 0);
        assert_eq!(read(MI_OPTION_ALLOW_THP), 1);
        no_transparent_huge_pages();
        assert_eq!(read(MI_OPTION_ALLOW_THP), 0);
        assert!(crate::bench::huge_pages_off());
    }
}
