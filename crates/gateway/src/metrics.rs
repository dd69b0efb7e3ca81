//! What `/metrics` shows beside the admission queue's and the matchmaker's
//! own figures: requests by route template and status, written with the
//! workspace's one Prometheus writer (`hightick_telemetry::prometheus::text`).

use std::collections::BTreeMap;
use std::fmt::{self, Write};

use hightick_telemetry::prometheus::text::{Exposition, Kind};
use parking_lot::Mutex;

/// Requests answered, by route template and status code. Routes are the
/// router's templates (`/v1/matchmaking/{ticket}`) or `unmatched`, never a
/// raw path, so the label stays bounded.
#[derive(Debug, Default)]
pub struct RequestCounts {
    counts: Mutex<BTreeMap<(String, u16), u64>>,
}

impl RequestCounts {
    /// Counts one answered request.
    pub fn record(&self, route: &str, status: u16) {
        let mut map = self.counts.lock();
        if let Some(n) = map.get_mut(&(route.to_owned(), status)) {
            *n += 1;
        } else {
            map.insert((route.to_owned(), status), 1);
        }
    }

    /// How many requests to `route` were answered with `status`.
    pub fn get(&self, route: &str, status: u16) -> u64 {
        self.counts
            .lock()
            .get(&(route.to_owned(), status))
            .copied()
            .unwrap_or(0)
    }

    /// Writes the counters as the family `hightick_gateway_requests_total`.
    pub fn render<W: Write>(&self, m: &mut Exposition<'_, W>) -> fmt::Result {
        let name = "hightick_gateway_requests_total";
        m.family(
            name,
            Kind::Counter,
            "HTTP requests answered, by route and status.",
        )?;
        for ((route, status), n) in self.counts.lock().iter() {
            let status = status.to_string();
            m.sample(name, &[("route", route), ("status", &status)], n)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_counts_group_by_route_and_status() {
        let c = RequestCounts::default();
        c.record("/v1/me/profile", 200);
        c.record("/v1/me/profile", 200);
        c.record("/v1/me/profile", 401);
        assert_eq!(c.get("/v1/me/profile", 200), 2);
        let mut text = String::new();
        c.render(&mut Exposition::new(&mut text)).unwrap();
        assert!(
            text.contains(
                "hightick_gateway_requests_total{route=\"/v1/me/profile\",status=\"401\"} 1"
            ),
            "{text}"
        );
    }
}
