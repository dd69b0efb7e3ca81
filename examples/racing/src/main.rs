//! The racing binary: every hightick subcommand, for racing.
//!
//! Run with: `cargo run --release -p hightick-example-racing -- demo`
//! (or `serve`, `swarm run ...`, `lab sweep`; `--help` lists them).

#[global_allocator]
static ALLOCATOR: hightick_cli::Allocator = hightick_cli::Allocator;

fn main() -> std::process::ExitCode {
    hightick_cli::run::<hightick_example_racing::Race>()
}
