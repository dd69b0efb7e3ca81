use hightick_engine::Wire;

#[derive(Wire)]
struct Stick {
    #[wire(float(range = 1.0..=-1.0, step = 0.1))]
    x: f32,
    #[wire(fixed)]
    z: u8,
}

fn main() {}
