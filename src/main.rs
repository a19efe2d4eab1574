//! The `simstore` command. Each subcommand lives in its own file under `cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
