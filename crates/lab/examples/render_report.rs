//! Renders a run summary JSON file (as written by `hightick demo --json`) into the
//! table, the FIGURE lines and a self-contained HTML report.
//!
//! `cargo run -p hightick-lab --example render_report -- summary.json report.html`

use hightick_lab::{RunSummary, render_html};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(input), Some(output)) = (args.next(), args.next()) else {
        return Err("usage: render_report SUMMARY.json REPORT.html".into());
    };
    let run = RunSummary::from_json(&std::fs::read_to_string(&input)?)?;
    print!("{}", run.render_table());
    for line in run.figures() {
        println!("{line}");
    }
    std::fs::write(&output, render_html(&run)?)?;
    println!("wrote {output}");
    Ok(())
}
