//! The `simstore` command. Each subcommand lives in its own file under `cli/`.

mod cli;

/// The binary allocates with mimalloc rather than the system's allocator: a request to
/// `serve` or a record of `import` makes a hundred or so small short-lived allocations,
/// and glibc's malloc and free were ~11 % of a `serve` `check_and_insert`'s instructions
/// (docs/benchmarks.md). RocksDB's own C++ allocations are left to the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
