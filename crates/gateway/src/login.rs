//! What an auth worker does: guest login by device id, password sign-up and
//! password login, each ending in a fresh session (a store record plus a
//! signed token). argon2id runs on a blocking thread; the admission pool's
//! permit bounds how many run at once.
//!
//! Each login carries a [`TicketId`]; its session's store `token_id` is
//! derived from it, so a gateway that did not queue the login answers its
//! ticket by reading that one session ([`Logins::elsewhere`]).

use std::sync::OnceLock;
use std::time::Duration;

use hightick_store::clock::now_ms;
use hightick_store::{GuestLogin, Store, StoreError, password};

use crate::admission::{Issued, Work};
use crate::session::{SessionClaims, SessionSigner};
use crate::ticket::{LoginTicket, TicketId, TicketSigner};

/// One login to work on, and the id its ticket and session are named by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginJob {
    /// Names the ticket (if it queues) and the session it creates.
    pub id: TicketId,
    /// What to do.
    pub login: Login,
}

impl LoginJob {
    /// `login` under a fresh random id.
    pub fn new(login: Login) -> Self {
        Self {
            id: TicketId::random(),
            login,
        }
    }
}

/// A login (already checked for shape by the API).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// Guest account for a device, created on first use.
    Guest {
        /// The device id.
        device_id: String,
    },
    /// A new named account.
    SignUp {
        /// Account name.
        name: String,
        /// Password (hashed with argon2id).
        password: String,
    },
    /// A named account's password login.
    Password {
        /// Account name.
        name: String,
        /// Password.
        password: String,
    },
}

/// A successful login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The account.
    pub account_id: i64,
    /// Session token for `Authorization: Bearer ...`.
    pub session_token: String,
    /// Expiry, unix milliseconds.
    pub expires_at_ms: i64,
}

impl Grant {
    /// The ticket route's (and the login routes') JSON body for it.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({
            "status": "admitted",
            "account_id": self.account_id,
            "session_token": self.session_token,
            "expires_at_ms": self.expires_at_ms,
        })
    }
}

/// What a login comes to.
pub type LoginOutcome = Result<Grant, LoginError>;

/// Why a login failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoginError {
    /// Sign-up: an account with this name exists.
    #[error("an account with this name exists")]
    NameTaken,
    /// Password login: no such name, or another password.
    #[error("wrong name or password")]
    WrongPassword,
    /// The store made no session (it answered with none).
    #[error("no session")]
    NoSession,
    /// The password hashing thread stopped.
    #[error("password worker stopped")]
    WorkerStopped,
    /// The store failed (shared by every login of a batch).
    #[error(transparent)]
    Store(std::sync::Arc<StoreError>),
}

impl From<StoreError> for LoginError {
    fn from(e: StoreError) -> Self {
        Self::Store(std::sync::Arc::new(e))
    }
}

/// Where a ticket issued by another gateway stands, as far as the store and
/// the ticket's own signed data tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elsewhere {
    /// Its session exists: a token for it.
    Admitted(Grant),
    /// No session yet: the estimate from the ticket's data.
    Queued {
        /// Estimated position (at least 1).
        position: u64,
        /// Estimated wait left, milliseconds.
        estimate_ms: u64,
    },
}

/// The auth workers' work: store plus session signing.
#[derive(Debug, Clone)]
pub struct Logins {
    store: Store,
    signer: SessionSigner,
    tickets: TicketSigner,
    session_ttl: Duration,
    ticket_ttl: Duration,
}

impl Logins {
    /// Logins against `store`, sessions signed by `signer` lasting
    /// `session_ttl`, tickets signed by `tickets` and answered by other
    /// gateways until `ticket_ttl` past their estimated wait.
    pub fn new(
        store: Store,
        signer: SessionSigner,
        tickets: TicketSigner,
        session_ttl: Duration,
        ticket_ttl: Duration,
    ) -> Self {
        Self {
            store,
            signer,
            tickets,
            session_ttl,
            ticket_ttl,
        }
    }

    /// The signer (API calls verify tokens with it).
    pub fn signer(&self) -> &SessionSigner {
        &self.signer
    }

    /// The ticket signer (a ticket this gateway does not hold is checked
    /// with it).
    pub fn tickets(&self) -> &TicketSigner {
        &self.tickets
    }

    /// Where `ticket`, issued by any gateway sharing the key, stands at
    /// `now_ms`: one indexed read of the session it names, no write. `None`
    /// once it is past answering (or its session was revoked).
    pub async fn elsewhere(
        &self,
        ticket: &LoginTicket,
        now_ms: i64,
    ) -> Result<Option<Elsewhere>, LoginError> {
        if now_ms > ticket.answered_until_ms(self.ticket_ttl) {
            return Ok(None);
        }
        match self.store.session(&self.tickets.token_id(&ticket.id)).await {
            Ok(s) if s.is_valid_at(now_ms) => Ok(Some(Elsewhere::Admitted(self.signed(
                s.account_id,
                s.token_id,
                s.expires_at_ms,
            )))),
            Ok(_) => Ok(None),
            Err(StoreError::NotFound { .. }) => {
                let (position, estimate_ms) = ticket.estimate_at(now_ms);
                Ok(Some(Elsewhere::Queued {
                    position,
                    estimate_ms,
                }))
            }
            Err(e) => Err(e.into()),
        }
    }

    fn expiry(&self) -> i64 {
        let ttl_ms = i64::try_from(self.session_ttl.as_millis()).unwrap_or(i64::MAX / 2);
        now_ms().saturating_add(ttl_ms)
    }

    fn signed(&self, account_id: i64, token_id: String, expires_at_ms: i64) -> Grant {
        let claims = SessionClaims {
            account_id,
            token_id,
            expires_at_ms,
        };
        Grant {
            account_id,
            session_token: self.signer.sign(&claims),
            expires_at_ms,
        }
    }

    async fn grant(&self, id: &TicketId, account_id: i64) -> LoginOutcome {
        let token_id = self.tickets.token_id(id);
        let expires_at_ms = self.expiry();
        self.store
            .create_session(&token_id, account_id, expires_at_ms)
            .await?;
        Ok(self.signed(account_id, token_id, expires_at_ms))
    }

    async fn sign_up(&self, id: &TicketId, name: &str, secret: String) -> LoginOutcome {
        let hash = on_blocking_thread(move || password::hash_password(&secret)).await?;
        let account = self
            .store
            .create_named_account(name, &hash)
            .await
            .map_err(|e| match e {
                StoreError::Conflict { .. } => LoginError::NameTaken,
                other => other.into(),
            })?;
        self.grant(id, account.id).await
    }

    async fn password_login(&self, id: &TicketId, name: &str, secret: String) -> LoginOutcome {
        let (account_id, phc) = match self.store.account_by_name(name).await {
            Ok(a) => (Some(a.id), a.password_hash.unwrap_or_default()),
            // Hash anyway so an unknown name takes as long as a wrong password.
            Err(StoreError::NotFound { .. }) => (None, dummy_hash().to_owned()),
            Err(e) => return Err(e.into()),
        };
        let ok = on_blocking_thread(move || password::verify_password(&secret, &phc)).await?;
        match account_id {
            Some(account) if ok => self.grant(id, account).await,
            _ => Err(LoginError::WrongPassword),
        }
    }
}

impl Work for Logins {
    type Job = LoginJob;
    type Outcome = LoginOutcome;
    /// Guest logins waiting side by side share one transaction (on a single
    /// writer database this is what keeps a stampede moving).
    const BATCH: usize = 64;

    fn batchable(&self, job: &LoginJob) -> bool {
        matches!(job.login, Login::Guest { .. })
    }

    fn ticket(&self, job: &LoginJob, issued: Issued) -> String {
        self.tickets.sign(&LoginTicket {
            id: job.id,
            issued_at_ms: now_ms(),
            position: u32::try_from(issued.position).unwrap_or(u32::MAX),
            estimate_ms: u32::try_from(issued.estimate_ms).unwrap_or(u32::MAX),
        })
    }

    async fn run_batch(&self, jobs: Vec<LoginJob>) -> Vec<LoginOutcome> {
        let expires_at_ms = self.expiry();
        let mut logins = Vec::with_capacity(jobs.len());
        for job in jobs {
            if let Login::Guest { device_id } = job.login {
                logins.push(GuestLogin {
                    device_id,
                    token_id: self.tickets.token_id(&job.id),
                    expires_at_ms,
                });
            }
        }
        match self.store.guest_logins(&logins).await {
            Ok(sessions) => sessions
                .into_iter()
                .map(|s| Ok(self.signed(s.account_id, s.token_id, s.expires_at_ms)))
                .collect(),
            Err(e) => {
                let e = LoginError::from(e);
                logins.iter().map(|_| Err(e.clone())).collect()
            }
        }
    }

    async fn run(&self, job: LoginJob) -> LoginOutcome {
        let id = job.id;
        match job.login {
            Login::Guest { device_id } => {
                let token_id = self.tickets.token_id(&id);
                let login = GuestLogin {
                    device_id,
                    token_id,
                    expires_at_ms: self.expiry(),
                };
                let session = self
                    .store
                    .guest_logins(std::slice::from_ref(&login))
                    .await?
                    .pop()
                    .ok_or(LoginError::NoSession)?;
                Ok(self.signed(session.account_id, session.token_id, session.expires_at_ms))
            }
            Login::SignUp { name, password } => self.sign_up(&id, &name, password).await,
            Login::Password { name, password } => self.password_login(&id, &name, password).await,
        }
    }
}

/// A hash nobody's password matches, made once.
fn dummy_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        password::hash_password("no account has this password").unwrap_or_else(|_| {
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$\
             aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
                .to_owned()
        })
    })
}

async fn on_blocking_thread<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, LoginError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(LoginError::from),
        Err(_) => Err(LoginError::WorkerStopped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn logins(ticket_ttl: Duration) -> Logins {
        let store = Store::open("sqlite::memory:").await.expect("store opens");
        Logins::new(
            store,
            SessionSigner::new(&[5; 32]),
            TicketSigner::new(&[5; 32]),
            Duration::from_secs(3_600),
            ticket_ttl,
        )
    }

    fn guest(id: TicketId, device: &str) -> LoginJob {
        LoginJob {
            id,
            login: Login::Guest {
                device_id: device.to_owned(),
            },
        }
    }

    #[tokio::test]
    async fn another_gateway_sees_queued_then_admitted_then_nothing() {
        let logins = logins(Duration::from_secs(10)).await;
        let now = now_ms();
        let ticket = LoginTicket {
            id: TicketId::random(),
            issued_at_ms: now,
            position: 10,
            estimate_ms: 1_000,
        };
        assert_eq!(
            logins.elsewhere(&ticket, now + 500).await.unwrap(),
            Some(Elsewhere::Queued {
                position: 5,
                estimate_ms: 500
            })
        );
        let grant = logins
            .run(guest(ticket.id, "dev-1"))
            .await
            .expect("admitted");
        let Ok(Some(Elsewhere::Admitted(found))) = logins.elsewhere(&ticket, now + 600).await
        else {
            panic!("the session is found")
        };
        assert_eq!(found.account_id, grant.account_id);
        let claims = logins.signer().verify(&found.session_token, now).unwrap();
        assert_eq!(claims.token_id, logins.tickets().token_id(&ticket.id));
        // Past four times the estimate plus the TTL: not answered any more.
        let late = now + 4_000 + 10_000 + 1;
        assert_eq!(logins.elsewhere(&ticket, late).await.unwrap(), None);
        // A revoked session is not handed out again.
        logins.store.revoke_session(&claims.token_id).await.unwrap();
        assert_eq!(logins.elsewhere(&ticket, now + 600).await.unwrap(), None);
    }

    #[tokio::test]
    async fn batched_guests_get_the_sessions_their_tickets_name() {
        let logins = logins(Duration::from_secs(10)).await;
        let ids: Vec<TicketId> = (0..3).map(|_| TicketId::random()).collect();
        let jobs = ids
            .iter()
            .enumerate()
            .map(|(i, id)| guest(*id, &format!("batch-{i}")))
            .collect();
        let outcomes = logins.run_batch(jobs).await;
        for (id, outcome) in ids.iter().zip(outcomes) {
            let grant = outcome.expect("admitted");
            let claims = logins.signer().verify(&grant.session_token, 0).unwrap();
            assert_eq!(claims.token_id, logins.tickets().token_id(id));
        }
    }
}
