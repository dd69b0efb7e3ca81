//! hightick-gateway: the front door. Players log in here, get a session,
//! use the meta-game API and queue for matches; server hosts register here
//! and post match results.
//!
//! What it is for:
//! - **Logins that survive a stampede** ([`admission`]): guest login by device
//!   id, password sign-up and login (argon2id on blocking threads). Every
//!   login runs on a bounded pool of auth workers; when they are all busy the
//!   login joins a FIFO queue and the caller gets `202` with a ticket, its
//!   position and an estimate, then polls (or long-polls) the ticket. Positions
//!   only ever decrease; load never turns into a 5xx or a dropped connection.
//!   Guest logins side by side in the queue share one transaction. Tickets
//!   ([`ticket`]) are signed and name the session the login will create, so
//!   any gateway sharing the session key and the store answers a poll, with
//!   no database write per waiting login.
//! - **Sessions** ([`session`]): HMAC-SHA256 signed tokens with an expiry; every
//!   API call checks the signature, the expiry and the store's revocation record.
//! - **Meta API** ([`api`]): profile, inventory, shop, purchases with an
//!   idempotency key (a retry never charges twice, a balance never goes
//!   negative), match history, leaderboard (top 100 and the caller's rank).
//! - **Matchmaking** ([`matchmaking`], [`hosts`]): a queue per mode; a full
//!   group becomes a match allocated through a host's admin API
//!   (`POST /v1/matches` on `hightick serve`), and each player receives a
//!   connect token sealed with the key the hosts share.
//! - **Agones** ([`agones`], with `[agones]` in the config): matches are
//!   allocated through the Agones allocator service instead (REST, mutual
//!   TLS), on GameServers with room on their `matches` Counter.
//! - **Servers' side**: hosts register and heartbeat with their capacity
//!   into the store's host registry (any gateway replica will do: every one
//!   allocates to every live host); results are posted with the server secret and stored idempotently by
//!   match id through the store's batching writer.
//! - `/metrics` (Prometheus: requests by route and status, login queue depth,
//!   admission latency and matchmaking wait histograms, auth workers busy), `/healthz`, and the
//!   OpenAPI document at `/openapi.json`, generated from the handlers' own
//!   types with the running config's limits ([`api::openapi_document`]).
//!   Per-IP rate limits answer `429` with `Retry-After`; a store that is
//!   down, `503` with `Retry-After`.
//! - **Slow clients** ([`listen`]): a header deadline, a body deadline, an
//!   idle timeout and an optional per-address connection cap on every HTTP
//!   connection.
//! - **Push** ([`push`]): `GET /v1/events` upgrades to a WebSocket that
//!   pushes a queued login's position and admission, matchmaking positions,
//!   a match found (with its connect token) and a cancel; the polling routes
//!   stay and read the same state.
//!
//! Every refusal is a JSON body `{"error", "message", "field"}` naming the
//! field at fault; bad input never reaches the database unchecked.
//!
//! What it is not: a game server (it never touches UDP game traffic), a
//! database (the `store` crate is), or a cluster manager (run several
//! gateways behind a load balancer over PostgreSQL with one session key; a
//! login waits in the queue of the gateway it reached, and the others answer
//! its ticket from the store once it is admitted).
//!
//! ```
//! use hightick_gateway::{Gateway, GatewayConfig, Secrets};
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let config = GatewayConfig {
//!     listen: "127.0.0.1:0".parse().unwrap(),
//!     database_url: Some("sqlite::memory:".into()),
//!     ..GatewayConfig::default()
//! };
//! let gateway = Gateway::start(&config, Secrets::generate()).await?;
//! println!("API on http://{}", gateway.address());
//! let player = gateway.store().guest_account("device-1").await?;
//! assert_eq!(gateway.store().balance(player.id).await?, 0);
//! gateway.shutdown().await?;
//! # Ok::<(), hightick_gateway::GatewayError>(())
//! # }).unwrap();
//! ```

pub mod access_log;
pub mod admission;
pub mod agones;
pub mod api;
pub mod config;
mod error;
mod faults;
mod gateway;
pub mod hosts;
pub mod listen;
pub mod login;
pub mod matchmaking;
pub mod metrics;
mod nofile;
pub mod push;
pub mod queue;
pub mod rate_limit;
pub mod secrets;
pub mod session;
pub mod ticket;

pub use config::GatewayConfig;
pub use error::GatewayError;
pub use faults::Faults;
pub use gateway::{Gateway, open_store, serve};
pub use secrets::Secrets;
