//! `hightick`: the arena's binary, with every subcommand (the gateway
//! among them). See the `hightick_cli` library for what each does.

#[global_allocator]
static ALLOCATOR: hightick_cli::Allocator = hightick_cli::Allocator;

fn main() -> std::process::ExitCode {
    hightick_cli::run::<hightick_arena::game::Arena>()
}
