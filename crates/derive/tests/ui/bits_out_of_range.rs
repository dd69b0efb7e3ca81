use hightick_engine::Wire;

#[derive(Wire)]
struct Stick {
    #[wire(bits = 0)]
    x: u8,
}

fn main() {}
