//! The `simstore` command. Each subcommand lives in its own file under `cli/`.

/// `std`'s `eprintln!`, but a note that cannot be written (stderr a closed pipe:
/// `simstore dedup ... 2>&1 | head -1`) is dropped instead of panicking halfway through a
/// command: the command's work and its exit status matter more than its notes. Shadows
/// the prelude's macro in every module of the binary.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;

/// The binary allocates with mimalloc rather than the system's allocator: a request to
/// `serve` or a record of `import` makes many small short-lived allocations, where glibc's
/// malloc and free cost more (measured: docs/benchmarks.md). RocksDB's own C++ allocations
/// are left to the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Makes the allocator give memory back to the OS `ms` milliseconds after it is freed,
/// rather than after mimalloc's default purge delay, which without further allocation
/// never comes: `serve` purges at once (large freed request bodies stayed resident,
/// tests/serve_limits.rs); a dedup of files after 100 ms (the buffers of one stage stayed
/// resident through the next, at no measurable cost in time: docs/benchmarks.md).
/// Left as it is when `MIMALLOC_PURGE_DELAY` is set in the environment.
pub(crate) fn purge_freed_memory_after(ms: std::ffi::c_long) {
    /// `mi_option_purge_delay`: its place in `mi_option_t` in mimalloc v2 and v3 alike.
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    unsafe extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mimalloc's own C function (linked in by the allocator above), called with
        // an option of its enum; options may be set at any time.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
    }
}

/// Gives the memory freed so far back to the OS now (mimalloc's `mi_collect(true)`).
pub(crate) fn release_freed_memory() {
    unsafe extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: mimalloc's own C function (linked in by the allocator above); safe to call
    // from any thread at any time.
    unsafe { mi_collect(true) }
}

/// Makes the process's memory fault in as the OS's small pages from now on: mimalloc asks
/// for transparent huge pages for its segments (`madvise`), and then one byte written in a
/// 2 MiB range makes the whole range resident. A dedup of files held 12 MiB more before its
/// first record and 16-34 MiB more at its peak for it, at no measurable gain in time
/// (docs/benchmarks.md). Left as it is when `MIMALLOC_ALLOW_THP` is set in the environment.
pub(crate) fn small_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // Failing (a kernel without the flag) leaves the pages as they were: only memory.
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
}

fn main() -> std::process::ExitCode {
    cli::main()
}
