use hightick_engine::ReplicationSource;

#[derive(ReplicationSource)]
struct Game {
    runners: Vec<u8>,
}

fn main() {}
