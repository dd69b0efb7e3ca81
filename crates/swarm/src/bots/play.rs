//! A `play_match` step: one [`MatchBot`] playing until its match ends (the
//! server closes the connection), the step's time limit, or the run's end;
//! what it saw comes back as a [`MatchSample`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hightick_engine::BotGame;
use hightick_net::ConnectToken;

use crate::bots::match_bot::{MatchBot, MatchBotConfig};
use crate::error::SwarmError;
use crate::interval::{MatchSample, record_us};
use crate::scenario::TokenEncoding;

/// Decodes a connect token as a response carried it.
pub(crate) fn decode_token(text: &str, encoding: TokenEncoding) -> Option<ConnectToken> {
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

/// One `play_match` step's match: the token, the bot's settings and limits.
#[derive(Debug)]
pub struct MatchTicket {
    /// The connect token the step got.
    pub token: ConnectToken,
    /// Tells the bots apart (seed mix).
    pub index: u16,
    /// How the bot plays and connects.
    pub config: MatchBotConfig,
    /// Bot ticks per second.
    pub tick_rate_hz: u32,
    /// The step's time limit.
    pub limit: Duration,
    /// Set when the run stops.
    pub stop: Arc<AtomicBool>,
}

type MatchFuture = Pin<Box<dyn Future<Output = Result<MatchSample, SwarmError>> + Send>>;

/// Which game a scenario's `play_match` steps play: one bot of game `G`
/// per step ([`MatchPlayer::of`]). Drivers and scenarios stay
/// game-agnostic; the binary picks the game.
#[derive(Clone, Copy)]
pub struct MatchPlayer {
    game: &'static str,
    play: fn(MatchTicket) -> MatchFuture,
}

impl fmt::Debug for MatchPlayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MatchPlayer")
            .field("game", &self.game)
            .finish()
    }
}

impl MatchPlayer {
    /// Bots of game `G`.
    pub fn of<G: BotGame>() -> Self {
        Self {
            game: G::NAME,
            play: |ticket| Box::pin(play_match::<G>(ticket)),
        }
    }

    /// The game's name.
    pub fn game(&self) -> &'static str {
        self.game
    }

    /// Plays the match of `ticket`.
    pub fn play(&self, ticket: MatchTicket) -> MatchFuture {
        (self.play)(ticket)
    }
}

/// Plays one match as a bot of game `G`.
pub async fn play_match<G: BotGame>(ticket: MatchTicket) -> Result<MatchSample, SwarmError> {
    let MatchTicket {
        token,
        index,
        config,
        tick_rate_hz,
        limit,
        stop,
    } = ticket;
    let mut bot = MatchBot::<G>::bind(token, index, &config).await?;
    let period = Duration::from_nanos(1_000_000_000 / u64::from(tick_rate_hz.max(1)));
    let start = Instant::now();
    let end = start + limit;
    let mut next = start;
    let mut next_rtt = start + Duration::from_secs(1);
    let mut sample = MatchSample::empty();
    while !stop.load(Ordering::Relaxed) && !bot.is_disconnected() {
        if !bot.tick_on_schedule(&mut next, period, end).await? {
            break;
        }
        let now = Instant::now();
        if now >= next_rtt {
            next_rtt += Duration::from_secs(1);
            let core = bot.core();
            if core.is_connected() {
                record_us(
                    &mut sample.rtt,
                    core.net().endpoint().rtt().as_micros() as u64,
                );
            }
        }
    }
    let counters = bot.counters();
    let packets = bot.core().net().endpoint().stats();
    let _ = sample.interarrival.add(bot.interarrival());
    bot.disconnect();
    let finished = bot.match_over();
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
