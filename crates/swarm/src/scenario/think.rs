//! [`ThinkTime`]: how long a virtual player waits after a step, as a
//! distribution. In a scenario file:
//!
//! ```toml
//! think = "7.5s"                        # constant
//! think = { uniform = ["5s", "10s"] }   # uniform between the two
//! think = { exponential = "7.5s" }      # exponential with this mean
//! ```

use std::time::Duration;

use rand::Rng;

use super::duration::parse_duration;

/// A think-time distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThinkTime {
    /// Always the same.
    Constant(Duration),
    /// Uniform in `[min, max]`.
    Uniform {
        /// Shortest.
        min: Duration,
        /// Longest.
        max: Duration,
    },
    /// Exponential with this mean (memoryless: arrivals of many such
    /// players form a Poisson process). Draws are capped at 20 means.
    Exponential {
        /// The mean.
        mean: Duration,
    },
}

impl Default for ThinkTime {
    fn default() -> Self {
        Self::Constant(Duration::ZERO)
    }
}

impl ThinkTime {
    /// Draws one wait.
    pub fn sample(&self, rng: &mut impl Rng) -> Duration {
        match *self {
            Self::Constant(d) => d,
            Self::Uniform { min, max } => {
                if max <= min {
                    min
                } else {
                    min + (max - min).mul_f64(rng.random::<f64>())
                }
            }
            Self::Exponential { mean } => {
                let u: f64 = rng.random();
                mean.mul_f64((-(1.0 - u).ln()).min(20.0))
            }
        }
    }

    /// The mean wait.
    pub fn mean(&self) -> Duration {
        match *self {
            Self::Constant(d) => d,
            Self::Uniform { min, max } => (min + max.max(min)) / 2,
            Self::Exponential { mean } => mean,
        }
    }
}

impl<'de> serde::Deserialize<'de> for ThinkTime {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = ThinkTime;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a duration (\"7.5s\") or one of { uniform = [\"5s\", \"10s\"] }, { exponential = \"7.5s\" }",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ThinkTime, E> {
                parse_duration(v)
                    .map(ThinkTime::Constant)
                    .map_err(E::custom)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ThinkTime, A::Error> {
                use serde::de::Error;
                let key: String = map
                    .next_key()?
                    .ok_or_else(|| A::Error::custom("empty table: say uniform or exponential"))?;
                let think = match key.as_str() {
                    "uniform" => {
                        let [a, b]: [String; 2] = map.next_value()?;
                        let min = parse_duration(&a).map_err(A::Error::custom)?;
                        let max = parse_duration(&b).map_err(A::Error::custom)?;
                        if max < min {
                            return Err(A::Error::custom(
                                "uniform: the second bound is below the first",
                            ));
                        }
                        ThinkTime::Uniform { min, max }
                    }
                    "exponential" => {
                        let mean: String = map.next_value()?;
                        ThinkTime::Exponential {
                            mean: parse_duration(&mean).map_err(A::Error::custom)?,
                        }
                    }
                    "constant" => {
                        let d: String = map.next_value()?;
                        ThinkTime::Constant(parse_duration(&d).map_err(A::Error::custom)?)
                    }
                    other => {
                        return Err(A::Error::unknown_field(
                            other,
                            &["constant", "uniform", "exponential"],
                        ));
                    }
                };
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(A::Error::custom(format!(
                        "one distribution per think time; `{extra}` is one too many"
                    )));
                }
                Ok(think)
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[derive(Debug, serde::Deserialize)]
    struct Doc {
        think: ThinkTime,
    }

    fn read(text: &str) -> Result<ThinkTime, String> {
        toml::from_str::<Doc>(text)
            .map(|d| d.think)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_the_three_forms() {
        assert_eq!(
            read(r#"think = "7.5s""#),
            Ok(ThinkTime::Constant(Duration::from_millis(7_500)))
        );
        assert_eq!(
            read(r#"think = { uniform = ["1s", "3s"] }"#),
            Ok(ThinkTime::Uniform {
                min: Duration::from_secs(1),
                max: Duration::from_secs(3)
            })
        );
        assert_eq!(
            read(r#"think = { exponential = "2s" }"#),
            Ok(ThinkTime::Exponential {
                mean: Duration::from_secs(2)
            })
        );
        assert!(
            read(r#"think = { poisson = "2s" }"#)
                .unwrap_err()
                .contains("poisson")
        );
        assert!(read(r#"think = { uniform = ["3s", "1s"] }"#).is_err());
        assert!(read("think = 7").is_err());
    }

    #[test]
    fn samples_stay_in_range_and_average_to_the_mean() {
        let mut rng = SmallRng::seed_from_u64(3);
        let u = ThinkTime::Uniform {
            min: Duration::from_secs(1),
            max: Duration::from_secs(3),
        };
        let e = ThinkTime::Exponential {
            mean: Duration::from_secs(2),
        };
        let n = 20_000;
        let (mut su, mut se) = (0.0, 0.0);
        for _ in 0..n {
            let a = u.sample(&mut rng);
            assert!(a >= Duration::from_secs(1) && a <= Duration::from_secs(3));
            su += a.as_secs_f64();
            se += e.sample(&mut rng).as_secs_f64();
        }
        assert!((su / n as f64 - 2.0).abs() < 0.05, "{}", su / n as f64);
        assert!((se / n as f64 - 2.0).abs() < 0.1, "{}", se / n as f64);
        assert_eq!(u.mean(), Duration::from_secs(2));
    }
}
