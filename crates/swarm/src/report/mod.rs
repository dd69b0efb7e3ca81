//! Reports of a [`RunResult`](crate::result::RunResult): the summary table,
//! the self-contained HTML report with SVG charts, and the comparison of
//! two runs.

mod chart;
mod compare;
mod html;
mod table;

pub use compare::{Difference, differences, render_comparison};
pub use html::render_html;
pub use table::render_table;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::Aggregate;
    use crate::interval::{ErrorKind, Interval};
    use crate::scenario::Scenario;
    use std::time::Duration;

    fn result(slow: u64) -> crate::result::RunResult {
        let text = "users = 5\nduration = \"2s\"\n[targets]\nt = \"http://127.0.0.1:1\"\n[[setup]]\nname = \"login\"\nurl = \"/login\"\n[[behaviour]]\nname = \"b\"\n[[behaviour.step]]\nname = \"read <b>\"\nurl = \"/r\"\n[[threshold]]\nmetric = \"p99\"\nmax = \"20ms\"\n";
        let s = Scenario::parse(text, "t.toml").unwrap();
        let mut agg = Aggregate::new(&s, 1);
        for t in 1..=3 {
            let mut i = Interval::new(2);
            for k in 0..50 {
                i.record_ok(0, 1_000 + k);
                i.record_ok(1, slow + k);
            }
            i.record_error(1, ErrorKind::Timeout, 10_000);
            i.users = 5;
            agg.push(Duration::from_secs(t), &i);
        }
        agg.finish(Duration::from_secs(3))
    }

    #[test]
    fn the_table_and_html_say_what_happened() {
        let r = result(30_000);
        let table = render_table(&r);
        assert!(
            table.contains("login") && table.contains("read <b>"),
            "{table}"
        );
        assert!(table.contains("FAIL p99 <= 20.00 ms"), "{table}");
        assert!(table.contains("timeout 3"), "{table}");
        let html = render_html(&r).unwrap();
        assert!(html.to_ascii_lowercase().starts_with("<!doctype html>"));
        assert!(html.contains("read &lt;b&gt;") && !html.contains("read <b>"));
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.contains("class=\"fail\""));
    }

    #[test]
    fn a_comparison_shows_per_step_changes() {
        let a = result(10_000);
        let b = result(20_000);
        let d = differences(&a, &b);
        let p50 = d
            .iter()
            .find(|d| d.step == "read <b>" && d.metric == "p50 ms")
            .unwrap();
        assert!(
            (p50.change_percent().unwrap() - 100.0).abs() < 2.0,
            "{p50:?}"
        );
        let login = d
            .iter()
            .find(|d| d.step == "login" && d.metric == "p50 ms")
            .unwrap();
        assert!(login.change_percent().unwrap().abs() < 1.0);
        let text = render_comparison(&a, &b);
        assert!(text.contains("read <b>") && text.contains('%'), "{text}");
    }
}
