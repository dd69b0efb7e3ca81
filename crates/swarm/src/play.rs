//! A `play_match` step: one [`MatchBot`] playing until its match ends (the
//! server closes the connection), the step's time limit, or the run's end;
//! what it saw comes back as a [`MatchSample`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hightick_net::ConnectToken;

use crate::error::SwarmError;
use crate::interval::{MatchSample, record_us};
use crate::match_bot::{MatchBot, MatchBotConfig};
use crate::scenario::TokenEncoding;

/// Decodes a connect token as a response carried it.
pub fn decode_token(text: &str, encoding: TokenEncoding) -> Option<ConnectToken> {
    use base64::Engine as _;
    let text = text.trim();
    let bytes = match encoding {
        TokenEncoding::Base64 => {
            let e = base64::engine::general_purpose::STANDARD_NO_PAD;
            let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            let bare = text.trim_end_matches('=');
            e.decode(bare).or_else(|_| url.decode(bare)).ok()?
        }
        TokenEncoding::Hex => hex::decode(text).ok()?,
    };
    ConnectToken::decode(&bytes).ok()
}

/// Plays one match. `index` tells bots apart (seed mix).
pub async fn play_match(
    token: ConnectToken,
    index: u16,
    config: MatchBotConfig,
    tick_rate_hz: u32,
    limit: Duration,
    stop: Arc<AtomicBool>,
) -> Result<MatchSample, SwarmError> {
    let mut bot = MatchBot::bind(token, index, &config).await?;
    let period = Duration::from_nanos(1_000_000_000 / u64::from(tick_rate_hz.max(1)));
    let start = Instant::now();
    let end = start + limit;
    let mut next = start;
    let mut next_rtt = start + Duration::from_secs(1);
    let mut sample = MatchSample::empty();
    while !stop.load(Ordering::Relaxed) && !bot.is_disconnected() {
        next += period;
        let now = Instant::now();
        if next < now {
            next = now; // fell behind: skip ticks rather than bunch them
        }
        if next >= end {
            bot.tick(end).await?;
            break;
        }
        bot.tick(next).await?;
        if now >= next_rtt {
            next_rtt += Duration::from_secs(1);
            let core = bot.client().core();
            if core.is_connected() {
                record_us(
                    &mut sample.rtt,
                    core.net().endpoint().rtt().as_micros() as u64,
                );
            }
        }
    }
    let counters = bot.counters();
    let packets = bot.client().core().net().endpoint().stats();
    let _ = sample.interarrival.add(bot.interarrival());
    bot.disconnect();
    let finished = counters.match_ends() > 0;
    sample.started = 1;
    sample.finished = u64::from(finished);
    sample.snapshots = counters.snapshots;
    sample.desyncs = counters.desyncs;
    sample.decode_errors = counters.decode_errors;
    // Never connected, or dropped before the match ended and before the
    // step or the run did.
    let cut_short = counters.connected == 0 || (counters.disconnected > 0 && !finished);
    sample.disconnects = u64::from(cut_short);
    sample.packets_lost = packets.packets_lost;
    sample.packets_acked = packets.packets_acked;
    Ok(sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_decode_from_base64_and_hex_and_garbage_is_none() {
        assert_eq!(hex::decode("00ff10").ok(), Some(vec![0, 255, 16]));
        assert_eq!(hex::decode("0").ok(), None);
        assert_eq!(hex::decode("zz").ok(), None);
        assert_eq!(
            hex::decode("+f").ok(),
            None,
            "no sign, unlike from_str_radix"
        );
        assert!(decode_token("not a token", TokenEncoding::Base64).is_none());
        assert!(decode_token("abcd", TokenEncoding::Hex).is_none());
    }
}
