//! Reading the few figures the stack wants out of a Prometheus text
//! exposition (a gateway's or a host's `/metrics`): a family's samples,
//! summed, optionally only those whose labels pass a filter. Histograms'
//! `_bucket`, `_sum` and `_count` series are other names, never summed in.

/// The sum of family `name`'s samples in `text` whose label set (the text
/// between the braces, empty when none) passes `keep`; `None` when the
/// family has no sample there.
pub(crate) fn sum_where(text: &str, name: &str, keep: impl Fn(&str) -> bool) -> Option<f64> {
    let mut total = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let (labels, value) = match rest.as_bytes().first() {
            Some(b'{') => match rest.split_once('}') {
                Some((labels, value)) => (&labels[1..], value),
                None => continue,
            },
            Some(b' ') => ("", rest),
            _ => continue,
        };
        let Some(value) = value
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        else {
            continue;
        };
        if keep(labels) {
            *total.get_or_insert(0.0) += value;
        }
    }
    total
}

/// The sum of every sample of family `name` (0 when it has none).
pub(crate) fn sum(text: &str, name: &str) -> f64 {
    sum_where(text, name, |_| true).unwrap_or(0.0)
}

/// Whether a label set holds a `status` of 500 or above.
pub(crate) fn server_error(labels: &str) -> bool {
    labels
        .split(',')
        .filter_map(|l| l.strip_prefix("status=\""))
        .filter_map(|s| s.trim_end_matches('"').parse::<u16>().ok())
        .any(|s| s >= 500)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# HELP hightick_matches Matches hosted.
# TYPE hightick_matches gauge
hightick_matches 3
hightick_matches_total 99
hightick_late_ticks_total{mode=\"5v5\"} 4
hightick_late_ticks_total{mode=\"duel\"} 1.5
hightick_tick_duration_seconds_bucket{mode=\"5v5\",le=\"0.001\"} 7
hightick_gateway_requests_total{route=\"/v1/a\",status=\"200\"} 10
hightick_gateway_requests_total{route=\"/v1/a\",status=\"503\"} 2
hightick_gateway_requests_total{route=\"/v1/b\",status=\"500\"} 1
";

    #[test]
    fn families_sum_over_their_labels_and_never_take_a_longer_name() {
        assert_eq!(sum(TEXT, "hightick_matches"), 3.0);
        assert_eq!(sum(TEXT, "hightick_late_ticks_total"), 5.5);
        assert_eq!(sum(TEXT, "hightick_tick_duration_seconds"), 0.0);
        assert_eq!(sum_where(TEXT, "hightick_absent", |_| true), None);
        assert_eq!(
            sum_where(TEXT, "hightick_gateway_requests_total", server_error),
            Some(3.0)
        );
    }
}
