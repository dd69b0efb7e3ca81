//! [`Proxy`]: the [`Emulator`] on real UDP sockets, on a thread of its own.
//!
//! Clients send to one of the proxy's listening sockets, one per route
//! (a route is a listening address and the server behind it); each client
//! source address gets its own upstream socket connected to the route's
//! server, so the server sees one distinct client per flow. One thread
//! serves every route. The thread sleeps in `ppoll` on every
//! socket until one is readable or the next datagram is due, takes in what
//! arrived, sends what is due, forgets idle flows once a second, and
//! publishes its report ten times a second. It wakes at most once per
//! time slice ([`ProxyConfig::slice`]), since on a VM a wake-up costs as
//! much as a handful of datagrams: what the link decided is exact, what the
//! sockets see is that give or take a slice. Its own CPU time is measured on
//! the thread (`CLOCK_THREAD_CPUTIME_ID`), so the process it runs in can
//! report it apart from anything else.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::delay_line::MAX_DATAGRAM;
use crate::emulator::{Emulator, EmulatorReport, Limits};
use crate::error::NetemError;
use crate::flows::{FlowId, FlowKey};
use crate::profile::Direction;
use crate::profile::LinkProfile;
use hightick_process::thread_cpu_time;

/// Longest the thread sleeps without looking at its stop flag.
const MAX_WAIT: Duration = Duration::from_millis(20);
/// How often idle flows are looked for.
const EXPIRE_EVERY: Duration = Duration::from_secs(1);
/// How often the report is published.
const REPORT_EVERY: Duration = Duration::from_millis(100);
/// Receive buffer: any UDP datagram.
const RECV_BYTES: usize = 65_536;

/// Where clients send (port 0: any free port), and the server their
/// datagrams go on to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The proxy's listening address.
    pub listen: SocketAddr,
    /// The server behind it.
    pub upstream: SocketAddr,
}

/// What a proxy does and where.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Its routes (at least one).
    pub routes: Vec<Route>,
    /// The link it emulates.
    pub profile: LinkProfile,
    /// The seed of its decisions.
    pub seed: u64,
    /// How many flows and datagrams it holds.
    pub limits: Limits,
    /// The thread wakes at most once per slice (default
    /// [`DEFAULT_SLICE`]): a datagram is taken in up to a slice after it
    /// arrived, and sent at the last wake-up before its decided time, up
    /// to a slice early, so on average it takes its decided delay, give or
    /// take a slice. Shorter is more exact and costs more wake-ups.
    pub slice: Duration,
}

/// The proxy's default time slice: a millisecond, small beside the delays
/// of the links worth emulating, and twenty datagrams a wake-up at the
/// demo's traffic (a wake-up costs about as much as ten datagrams).
pub const DEFAULT_SLICE: Duration = Duration::from_millis(1);

impl ProxyConfig {
    /// A proxy of `profile` from `listen` to `upstream` deciding from
    /// `seed`, with default limits and slice.
    pub fn new(listen: SocketAddr, upstream: SocketAddr, profile: LinkProfile, seed: u64) -> Self {
        Self {
            routes: vec![Route { listen, upstream }],
            profile,
            seed,
            limits: Limits::default(),
            slice: DEFAULT_SLICE,
        }
    }
}

/// What a proxy did, with its own cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProxyReport {
    /// The emulator's counts and decided delays.
    pub emulator: EmulatorReport,
    /// CPU seconds the proxy's thread used.
    pub cpu_s: f64,
    /// Wall seconds it ran.
    pub wall_s: f64,
    /// CPU nanoseconds per datagram taken in (both directions): the whole
    /// cost of the thread (polls, receives, decisions, sends) divided out.
    pub ns_per_datagram: f64,
    /// Datagrams longer than any the emulator holds, dropped on arrival.
    pub oversized: u64,
    /// Datagrams a socket refused to send, and upstream sockets that could
    /// not be opened.
    pub send_errors: u64,
}

impl ProxyReport {
    /// CPU cores the proxy used on average.
    pub fn cpu_cores(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.cpu_s / self.wall_s
        } else {
            0.0
        }
    }
}

#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    report: Mutex<ProxyReport>,
}

/// A running proxy. Dropping it stops its thread. See the [module docs](self).
#[derive(Debug)]
pub struct Proxy {
    listening: Vec<SocketAddr>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Result<(), NetemError>>>,
}

impl Proxy {
    /// Binds the listening sockets and starts the proxy's thread.
    pub fn start(config: ProxyConfig) -> Result<Self, NetemError> {
        config.profile.validate()?;
        if config.limits.max_flows == 0 || config.limits.max_flows > 65_536 {
            return Err(NetemError::Config {
                field: "max_flows",
                reason: "must be in 1..=65536".to_owned(),
            });
        }
        if config.routes.is_empty() || config.routes.len() > 1024 {
            return Err(NetemError::Config {
                field: "routes",
                reason: "must be 1 to 1024".to_owned(),
            });
        }
        let mut listening = Vec::with_capacity(config.routes.len());
        let mut routes = Vec::with_capacity(config.routes.len());
        for route in &config.routes {
            let socket = UdpSocket::bind(route.listen)
                .map_err(NetemError::io(format!("binding {}", route.listen)))?;
            socket
                .set_nonblocking(true)
                .map_err(NetemError::io("making a listening socket non-blocking"))?;
            listening.push(
                socket
                    .local_addr()
                    .map_err(NetemError::io("reading a listening address"))?,
            );
            routes.push((socket, route.upstream));
        }
        let shared = Arc::new(Shared::default());
        let emulator = Emulator::new(config.profile, config.seed, config.limits);
        if config.slice > Duration::from_millis(10) {
            return Err(NetemError::Config {
                field: "slice",
                reason: "at most 10 ms".to_owned(),
            });
        }
        let mut relay = Relay::new(routes, emulator, shared.clone());
        relay.slice = config.slice;
        let thread = std::thread::Builder::new()
            .name("hightick-netem".to_owned())
            .spawn(move || relay.run())
            .map_err(NetemError::io("starting the proxy thread"))?;
        Ok(Self {
            listening,
            shared,
            thread: Some(thread),
        })
    }

    /// The address clients of the first route send to.
    pub fn local_addr(&self) -> SocketAddr {
        self.listening[0]
    }

    /// The address clients of each route send to, in route order.
    pub fn listening(&self) -> &[SocketAddr] {
        &self.listening
    }

    /// The report as last published (at most a tenth of a second old).
    pub fn report(&self) -> ProxyReport {
        self.shared
            .report
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Stops the thread and returns its final report.
    pub fn stop(mut self) -> Result<ProxyReport, NetemError> {
        self.join()?;
        Ok(self.report())
    }

    fn join(&mut self) -> Result<(), NetemError> {
        self.shared.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(NetemError::Io {
                what: "the proxy thread".to_owned(),
                source: io::Error::other("it panicked"),
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// The proxy thread's state.
struct Relay {
    /// Each route's listening socket and server.
    routes: Vec<(UdpSocket, SocketAddr)>,
    emulator: Emulator,
    shared: Arc<Shared>,
    /// Upstream socket of each flow slot.
    sockets: Vec<Option<(FlowId, UdpSocket)>>,
    /// The poll set: the listening sockets, then each upstream socket.
    fds: Vec<libc::pollfd>,
    /// The flow slot of each poll entry after the listening sockets.
    fd_slots: Vec<usize>,
    fds_stale: bool,
    recv: Box<[u8]>,
    out: Box<[u8]>,
    closed: Vec<FlowId>,
    oversized: u64,
    send_errors: u64,
    cpu_start: Duration,
    wall_start: Instant,
    slice: Duration,
    last_wake: Instant,
}

impl Relay {
    fn new(routes: Vec<(UdpSocket, SocketAddr)>, emulator: Emulator, shared: Arc<Shared>) -> Self {
        Self {
            routes,
            emulator,
            shared,
            sockets: Vec::new(),
            fds: Vec::new(),
            fd_slots: Vec::new(),
            fds_stale: true,
            recv: vec![0; RECV_BYTES].into_boxed_slice(),
            out: vec![0; MAX_DATAGRAM].into_boxed_slice(),
            closed: Vec::new(),
            oversized: 0,
            send_errors: 0,
            cpu_start: Duration::ZERO,
            wall_start: Instant::now(),
            slice: DEFAULT_SLICE,
            last_wake: Instant::now(),
        }
    }

    fn run(&mut self) -> Result<(), NetemError> {
        self.cpu_start = thread_cpu_time();
        self.wall_start = Instant::now();
        let mut next_expire = self.wall_start + EXPIRE_EVERY;
        let mut next_report = self.wall_start + REPORT_EVERY;
        while !self.shared.stop.load(Ordering::Relaxed) {
            self.wait()?;
            self.receive();
            let now = Instant::now();
            self.send_due(now + self.slice);
            if now >= next_expire {
                self.expire(now);
                next_expire = now + EXPIRE_EVERY;
            }
            if now >= next_report {
                self.publish();
                next_report = now + REPORT_EVERY;
            }
        }
        self.publish();
        Ok(())
    }

    /// Sleeps until a socket is readable, the next datagram is due, or
    /// [`MAX_WAIT`] has passed, but at least until a slice after the last
    /// wake-up.
    fn wait(&mut self) -> Result<(), NetemError> {
        if self.fds_stale {
            self.rebuild_poll_set();
        }
        let slice_end = self.last_wake + self.slice;
        let now = Instant::now();
        if slice_end > now {
            std::thread::sleep(slice_end - now);
        }
        let now = Instant::now();
        let wait = self
            .emulator
            .poll_timeout()
            .map_or(MAX_WAIT, |t| t.saturating_duration_since(now + self.slice))
            .min(MAX_WAIT);
        if wait.is_zero() {
            self.last_wake = now;
            return Ok(());
        }
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: wait.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `fds` is a valid array of `fds.len()` pollfds and
        // `timeout` a valid timespec; both outlive the call.
        let rc = unsafe {
            libc::ppoll(
                self.fds.as_mut_ptr(),
                self.fds.len() as libc::nfds_t,
                &timeout,
                std::ptr::null(),
            )
        };
        self.last_wake = Instant::now();
        if rc < 0 {
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(NetemError::io("waiting on the proxy's sockets")(err));
            }
        }
        Ok(())
    }

    fn rebuild_poll_set(&mut self) {
        let entry = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        self.fds.clear();
        self.fd_slots.clear();
        for (socket, _) in &self.routes {
            self.fds.push(entry(socket.as_raw_fd()));
        }
        for (slot, s) in self.sockets.iter().enumerate() {
            if let Some((_, socket)) = s {
                self.fds.push(entry(socket.as_raw_fd()));
                self.fd_slots.push(slot);
            }
        }
        self.fds_stale = false;
    }

    /// Takes in every datagram waiting on the sockets poll found readable.
    fn receive(&mut self) {
        let routes = self.routes.len();
        for route in 0..routes {
            if self.fds[route].revents != 0 {
                self.receive_from_clients(route);
            }
        }
        for i in routes..self.fds.len() {
            if self.fds[i].revents != 0 {
                self.receive_from_server(self.fd_slots[i - routes]);
            }
        }
        for fd in &mut self.fds {
            fd.revents = 0;
        }
    }

    fn receive_from_clients(&mut self, route: usize) {
        loop {
            let (n, from) = match self.routes[route].0.recv_from(&mut self.recv) {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => continue, // ICMP errors and the like
            };
            let now = Instant::now();
            if n > MAX_DATAGRAM {
                self.oversized += 1;
                continue;
            }
            let Some(flow) = self.emulator.flow(now, FlowKey::new(route, from)) else {
                continue;
            };
            if !self.has_socket(flow) && !self.open_upstream(flow, self.routes[route].1) {
                continue;
            }
            self.emulator
                .handle_datagram(now, flow, Direction::Up, &self.recv[..n]);
        }
    }

    fn receive_from_server(&mut self, slot: usize) {
        let Some(Some((flow, socket))) = self.sockets.get(slot) else {
            return;
        };
        let flow = *flow;
        loop {
            let n = match socket.recv(&mut self.recv) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => continue,
            };
            if n > MAX_DATAGRAM {
                self.oversized += 1;
                continue;
            }
            self.emulator
                .handle_datagram(Instant::now(), flow, Direction::Down, &self.recv[..n]);
        }
    }

    fn has_socket(&self, flow: FlowId) -> bool {
        matches!(self.sockets.get(flow.slot()), Some(Some((f, _))) if *f == flow)
    }

    /// Opens `flow`'s upstream socket, connected to `server`.
    fn open_upstream(&mut self, flow: FlowId, server: SocketAddr) -> bool {
        let any: SocketAddr = match server {
            SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
            SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
        };
        let opened = UdpSocket::bind(any).and_then(|s| {
            s.connect(server)?;
            s.set_nonblocking(true)?;
            Ok(s)
        });
        let Ok(socket) = opened else {
            self.send_errors += 1;
            return false;
        };
        if self.sockets.len() <= flow.slot() {
            self.sockets.resize_with(flow.slot() + 1, || None);
        }
        self.sockets[flow.slot()] = Some((flow, socket));
        self.fds_stale = true;
        true
    }

    /// Sends every datagram due by `until`.
    fn send_due(&mut self, until: Instant) {
        while let Some(r) = self.emulator.poll_transmit(until, &mut self.out) {
            let bytes = &self.out[..r.len];
            let sent = match r.direction {
                Direction::Up => match self.sockets.get(r.flow.slot()) {
                    Some(Some((flow, socket))) if *flow == r.flow => socket.send(bytes),
                    _ => continue,
                },
                Direction::Down => match self.emulator.key(r.flow) {
                    Some(key) => self.routes[key.route].0.send_to(bytes, key.client),
                    None => continue,
                },
            };
            if sent.is_err() {
                self.send_errors += 1;
            }
        }
    }

    /// Forgets idle flows and closes their upstream sockets.
    fn expire(&mut self, now: Instant) {
        self.closed.clear();
        self.emulator.expire_idle(now, &mut self.closed);
        for flow in &self.closed {
            if let Some(s) = self.sockets.get_mut(flow.slot()) {
                *s = None;
                self.fds_stale = true;
            }
        }
    }

    fn publish(&mut self) {
        let cpu_s = thread_cpu_time()
            .saturating_sub(self.cpu_start)
            .as_secs_f64();
        let datagrams = self.emulator.datagrams();
        let report = ProxyReport {
            emulator: self.emulator.report(),
            cpu_s,
            wall_s: self.wall_start.elapsed().as_secs_f64(),
            ns_per_datagram: if datagrams > 0 {
                cpu_s * 1e9 / datagrams as f64
            } else {
                0.0
            },
            oversized: self.oversized,
            send_errors: self.send_errors,
        };
        if let Ok(mut r) = self.shared.report.lock() {
            *r = report;
        }
    }
}
