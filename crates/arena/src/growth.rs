//! How a cost grows with the crowd: the exponent `k` of the power law
//! `cost = c * players^k` that fits measured points best (least squares on
//! their logarithms). `k = 1` is linear, `k = 2` is every player's cost
//! paid for every other player.
//!
//! ```
//! use hightick_arena::growth::exponent;
//!
//! let quadratic = [(50.0, 2_500.0), (100.0, 10_000.0), (400.0, 160_000.0)];
//! assert!((exponent(&quadratic).unwrap() - 2.0).abs() < 1e-9);
//! ```

/// The fitted exponent of `(players, cost)` points; `None` with fewer than
/// two distinct player counts or a point that is not positive.
pub fn exponent(points: &[(f64, f64)]) -> Option<f64> {
    if points.iter().any(|&(n, c)| !(n > 0.0 && c > 0.0)) {
        return None;
    }
    let logs: Vec<(f64, f64)> = points.iter().map(|&(n, c)| (n.ln(), c.ln())).collect();
    let count = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / count;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 1e-12).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_and_noisy_points_fit_their_slope() {
        let linear: Vec<_> = [50.0, 100.0, 200.0, 400.0]
            .iter()
            .map(|&n| (n, 3.0 * n))
            .collect();
        assert!((exponent(&linear).unwrap() - 1.0).abs() < 1e-9);
        // N^1.5 with +-5% noise stays within a few hundredths.
        let noisy = [
            (50.0, 50f64.powf(1.5) * 1.05),
            (100.0, 100f64.powf(1.5) * 0.95),
            (200.0, 200f64.powf(1.5) * 1.05),
            (400.0, 400f64.powf(1.5) * 0.95),
        ];
        let k = exponent(&noisy).unwrap();
        assert!((k - 1.5).abs() < 0.06, "{k}");
    }

    #[test]
    fn too_few_or_bad_points_fit_nothing() {
        assert_eq!(exponent(&[(50.0, 1.0)]), None);
        assert_eq!(exponent(&[(50.0, 1.0), (50.0, 2.0)]), None);
        assert_eq!(exponent(&[(50.0, 1.0), (100.0, 0.0)]), None);
        assert_eq!(exponent(&[]), None);
    }
}
