//! Runs the host doctor on this machine and prints its table (or JSON with `--json`).
//!
//! `cargo run -p hightick-lab --example doctor [-- --json]`

use hightick_lab::doctor::{DoctorOptions, examine};

fn main() -> Result<(), hightick_lab::LabError> {
    let report = examine(&DoctorOptions::default())?;
    if std::env::args().any(|a| a == "--json") {
        println!("{}", report.to_json()?);
    } else {
        print!("{}", report.render_table());
    }
    Ok(())
}
