use hightick_engine::Archetype;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Archetype)]
enum Thing {
    Crate,
}

fn main() {}
