use hightick_engine::Replicated;

#[derive(Default, Replicated)]
struct Runner {
    #[group(0)]
    #[wire(varint)]
    position: [i32; 2],
    it: bool,
}

fn main() {}
