//! The kernel's floor for one match's UDP traffic on loopback: what the
//! server's thread spends in `recvmmsg` / `sendmmsg` per match tick when it
//! does nothing else, on the server's real I/O path (`hightick_udp::bind`,
//! `ReceiveBatch::receive`, `SendBatch::buffer` / `commit` / `flush`).
//! `cargo bench -p hightick-lab --bench udp_floor` and `hightick lab
//! breakdown` both measure it with [`measure`].
//!
//! One match tick, as the server sees it with `clients` clients:
//!
//! - untimed: each client socket sends one datagram of `client_bytes` to
//!   the server socket (client cost, not server cost);
//! - timed, *receive*: `ReceiveBatch::receive` drains them (plus the
//!   `datagram(i)` reads a server does to get each sender);
//! - timed, *send*: one datagram of `server_bytes` to each client, written
//!   into one `SendBatch` and flushed with one `sendmmsg` (one per
//!   [`BATCH`](hightick_udp::BATCH) clients);
//! - untimed: the clients read their datagrams, so no buffer ever fills.
//!
//! On loopback the sender's `sendmmsg` also runs the receiver's delivery
//! (IP receive, UDP enqueue, waking whoever waits on the socket) in softirq
//! on the sender's CPU, so the send cost depends on the receiver:
//!
//! - *plain* ([`Floor::plain`]): the client sockets are plain non-blocking
//!   sockets, in no epoll, with no thread waiting on them; the server thread
//!   drains them after the tick, untimed. This is the floor.
//! - *woken* ([`Floor::woken`]): the client sockets are registered
//!   (`EPOLLIN | EPOLLET`) in one epoll instance and a second thread is
//!   blocked in `epoll_wait` on it, draining the sockets when woken: what a
//!   tokio-based bot process does. Between ticks the measurement waits
//!   (untimed) until that thread has read every datagram and is asleep again
//!   (state `S` in its `/proc/self/task/<tid>/stat`), as it would be during
//!   the milliseconds between real ticks, so every tick pays a real wake-up.
//!
//! Each figure is the median over the samples of `ticks_per_sample` ticks of
//! the server thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), minus the cost
//! of reading the clocks (measured the same way with no work between the
//! readings). Thread CPU time, not wall time, is the headline because the
//! machines we run on are shared: it does not count time the thread spends
//! preempted. It does count the loopback delivery softirq run in the
//! thread's context as long as the kernel is built without
//! `CONFIG_IRQ_TIME_ACCOUNTING`; with it, softirq time is kept apart and the
//! wall-time figures are the ones to trust. The server thread is pinned to
//! the first CPU and the waiting reader to the second (when two are
//! allowed; [`Floor`] says where they ran), so a wake-up is a cross-CPU one,
//! as when bots run in another process. Both are spawned from the caller's
//! thread: a thread inherits its parent's CPU mask.
//!
//! What it is not: a server. Nothing is sealed or parsed; the datagrams are
//! filler of the right sizes.

use std::fs::File;
use std::hint::black_box;
use std::io::{self, ErrorKind};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hightick_telemetry::bench::Stats;

use hightick_process::pin_to_core;
use hightick_udp::{ReceiveBatch, SendBatch};

/// Longest datagram a floor client reads.
const READ_BYTES: usize = 2048;
/// Most clients of one floor match (sockets of this process).
pub const MAX_CLIENTS: usize = 256;
/// How long an untimed wait for the other side may take before the
/// measurement gives up.
const PATIENCE: Duration = Duration::from_secs(10);

/// What one floor measurement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorPlan {
    /// Clients of the match (one datagram each way per tick), at most
    /// [`MAX_CLIENTS`]; past [`BATCH`](hightick_udp::BATCH) a tick takes more than one
    /// `recvmmsg` and `sendmmsg`, as the server's does.
    pub clients: usize,
    /// A client's input datagram, bytes.
    pub client_bytes: usize,
    /// The server's per-client datagram, bytes.
    pub server_bytes: usize,
    /// Ticks per sample.
    pub ticks_per_sample: usize,
    /// Measured samples per variant.
    pub samples: usize,
    /// Samples run first and thrown away (caches, socket buffers, the
    /// scheduler).
    pub warm_up_samples: usize,
}

impl FloorPlan {
    /// One 5v5 match tick (10 clients, 52 B in, 60 B out), 200 samples of
    /// 100 ticks after 10 thrown away: the bench's plan.
    pub const FIVE_V_FIVE: FloorPlan = FloorPlan {
        clients: 10,
        client_bytes: 52,
        server_bytes: 60,
        ticks_per_sample: 100,
        samples: 200,
        warm_up_samples: 10,
    };

    /// Every timed tick of one variant, warm-up included.
    pub fn ticks(&self) -> usize {
        (self.warm_up_samples + self.samples) * self.ticks_per_sample
    }

    fn validate(&self) -> io::Result<()> {
        let bad = |field: &str, what: String| {
            Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("floor plan: {field}: {what}"),
            ))
        };
        if self.clients == 0 || self.clients > MAX_CLIENTS {
            return bad(
                "clients",
                format!("1 to {MAX_CLIENTS}, not {}", self.clients),
            );
        }
        if !(5..=READ_BYTES).contains(&self.client_bytes) {
            return bad("client_bytes", format!("5 to {READ_BYTES}"));
        }
        if !(5..=READ_BYTES.min(hightick_udp::SEND_BYTES)).contains(&self.server_bytes) {
            return bad("server_bytes", format!("5 to {}", hightick_udp::SEND_BYTES));
        }
        if self.ticks_per_sample == 0 || self.samples == 0 {
            return bad("samples", "at least one sample of one tick".into());
        }
        Ok(())
    }
}

/// What [`measure`] found.
#[derive(Debug, Clone)]
pub struct Floor {
    /// The plan run.
    pub plan: FloorPlan,
    /// Nobody waits on the client sockets: the floor.
    pub plain: Costs,
    /// A thread sleeps in `epoll_wait` on them and each tick wakes it.
    pub woken: Costs,
    /// The cost of reading the clocks once, taken off every interval.
    pub overhead: Overhead,
    /// The CPU the server thread ran on (`None`: not pinned).
    pub server_cpu: Option<usize>,
    /// The CPU the waiting reader ran on (`None`: not pinned).
    pub reader_cpu: Option<usize>,
}

/// Per-tick costs of one variant (ns per tick, one entry per sample), after
/// the clock overhead is taken off.
#[derive(Debug, Clone)]
pub struct Costs {
    /// Draining the inputs.
    pub receive: Series,
    /// Writing and flushing the outputs.
    pub send: Series,
    /// Both.
    pub tick: Series,
    /// `receive` calls beyond the one per tick (datagrams not yet queued).
    pub extra_receives: usize,
    /// The server thread's scheduling over the whole variant.
    pub scheduling: Scheduling,
}

/// Wall and thread-CPU time of one part of the tick.
#[derive(Debug, Clone)]
pub struct Series {
    /// Wall time, ns per tick.
    pub wall: Stats,
    /// Thread CPU time, ns per tick.
    pub cpu: Stats,
}

/// The medians of one interval between two readings with nothing in between.
#[derive(Debug, Clone, Copy)]
pub struct Overhead {
    /// Wall ns.
    pub wall_ns: f64,
    /// Thread CPU ns.
    pub cpu_ns: f64,
}

/// How the scheduler treated the server thread: context switches (from
/// `getrusage`) and time spent runnable but waiting for a CPU (schedstat).
#[derive(Debug, Clone, Copy, Default)]
pub struct Scheduling {
    /// Voluntary context switches.
    pub voluntary: i64,
    /// Involuntary context switches.
    pub involuntary: i64,
    /// Nanoseconds runnable but off its CPU.
    pub wait_ns: u64,
}

impl Scheduling {
    fn now() -> io::Result<Self> {
        // SAFETY: all-zero is a valid rusage, which the call fills.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is writable; RUSAGE_THREAD is this thread.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // "<run ns> <wait ns> <slices>"; absent without CONFIG_SCHED_INFO.
        let wait_ns = std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0);
        Ok(Self {
            voluntary: usage.ru_nvcsw,
            involuntary: usage.ru_nivcsw,
            wait_ns,
        })
    }

    fn since(self, earlier: Self) -> Self {
        Self {
            voluntary: self.voluntary - earlier.voluntary,
            involuntary: self.involuntary - earlier.involuntary,
            wait_ns: self.wait_ns.saturating_sub(earlier.wait_ns),
        }
    }
}

/// An error of the measurement (a datagram lost on loopback, a thread that
/// never slept): the figures would be wrong, so there are none.
fn broken(what: String) -> io::Error {
    io::Error::other(format!("udp floor: {what}"))
}

/// Wall clock and this thread's CPU clock, read together.
#[derive(Clone, Copy)]
struct Reading {
    wall: Instant,
    cpu_ns: u64,
}

impl Reading {
    fn now() -> Self {
        let wall = Instant::now();
        let cpu = hightick_process::thread_cpu_time();
        Self {
            wall,
            cpu_ns: cpu.as_nanos() as u64,
        }
    }

    /// (wall ns, cpu ns) from `self` to `later`.
    fn until(self, later: Self) -> (u64, u64) {
        (
            later.wall.duration_since(self.wall).as_nanos() as u64,
            later.cpu_ns.saturating_sub(self.cpu_ns),
        )
    }
}

/// Nanoseconds per tick, one entry per sample, before the overhead is taken off.
#[derive(Default)]
struct Raw {
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

impl Raw {
    fn push(&mut self, wall_ns: u64, cpu_ns: u64, ticks: usize) {
        self.wall.push(wall_ns as f64 / ticks as f64);
        self.cpu.push(cpu_ns as f64 / ticks as f64);
    }

    /// With `intervals` clock readings' cost taken off every sample.
    fn series(&self, overhead: &Overhead, intervals: f64) -> Series {
        let less = |v: &[f64], o: f64| Stats::from_samples(v.iter().map(|x| x - o).collect());
        Series {
            wall: less(&self.wall, overhead.wall_ns * intervals),
            cpu: less(&self.cpu, overhead.cpu_ns * intervals),
        }
    }
}

/// One match's sockets and the server's batches.
struct FloorMatch {
    plan: FloorPlan,
    server: UdpSocket,
    server_address: SocketAddr,
    clients: Vec<UdpSocket>,
    client_addresses: Vec<SocketAddr>,
    receive: ReceiveBatch,
    send: SendBatch,
    input: Vec<u8>,
    /// Datagrams the server received / the kernel took from its sendmmsg.
    server_received: usize,
    server_sent: usize,
    extra_receives: usize,
    tick: u32,
}

impl FloorMatch {
    fn new(plan: FloorPlan) -> io::Result<Self> {
        let server = hightick_udp::bind("127.0.0.1:0".parse().expect("a literal address"))?;
        let server_address = server.local_addr()?;
        let mut clients = Vec::with_capacity(plan.clients);
        let mut client_addresses = Vec::with_capacity(plan.clients);
        for _ in 0..plan.clients {
            let client = UdpSocket::bind("127.0.0.1:0")?;
            client.set_nonblocking(true)?;
            client_addresses.push(client.local_addr()?);
            clients.push(client);
        }
        Ok(Self {
            plan,
            server,
            server_address,
            clients,
            client_addresses,
            receive: ReceiveBatch::new(),
            send: SendBatch::new(),
            input: vec![0; plan.client_bytes],
            server_received: 0,
            server_sent: 0,
            extra_receives: 0,
            tick: 0,
        })
    }

    /// Untimed: every client sends its input for this tick.
    fn clients_send(&mut self) -> io::Result<()> {
        self.tick = self.tick.wrapping_add(1);
        self.input[..4].copy_from_slice(&self.tick.to_le_bytes());
        for (i, client) in self.clients.iter().enumerate() {
            self.input[4] = i as u8;
            let sent = client.send_to(&self.input, self.server_address)?;
            if sent != self.plan.client_bytes {
                return Err(broken(format!("a client sent {sent} bytes")));
            }
        }
        Ok(())
    }

    /// Timed: the server drains the match's inputs.
    fn server_receive(&mut self) -> io::Result<()> {
        let mut got = 0;
        let mut calls = 0u32;
        while got < self.plan.clients {
            let n = self.receive.receive(&self.server)?;
            for i in 0..n {
                let (from, bytes) = self
                    .receive
                    .datagram(i)
                    .ok_or_else(|| broken("a sender that is not IPv4".into()))?;
                if bytes.len() != self.plan.client_bytes {
                    return Err(broken(format!("{} bytes from {from}", bytes.len())));
                }
                black_box((from, bytes[4]));
            }
            got += n;
            calls += 1;
            if calls >= 1_000_000 {
                return Err(broken(format!("the inputs never arrived: {got}")));
            }
        }
        if got != self.plan.clients {
            return Err(broken(format!("{got} inputs for {}", self.plan.clients)));
        }
        self.server_received += got;
        self.extra_receives += calls as usize - 1;
        Ok(())
    }

    /// Timed: the server sends one datagram to each client in one sendmmsg.
    fn server_send(&mut self) -> io::Result<()> {
        let len = self.plan.server_bytes;
        let (mut sent, mut bytes, mut dropped) = (0, 0, 0);
        for (i, &to) in self.client_addresses.iter().enumerate() {
            if self.send.is_full() {
                let flushed = self.send.flush(&self.server);
                (sent, bytes, dropped) = (
                    sent + flushed.sent,
                    bytes + flushed.bytes,
                    dropped + flushed.dropped,
                );
            }
            let buffer = self
                .send
                .buffer()
                .ok_or_else(|| broken("no room after a flush".into()))?;
            buffer[..4].copy_from_slice(&self.tick.to_le_bytes());
            buffer[4] = i as u8;
            buffer[5..len].fill(0x5A);
            self.send.commit(len, to);
        }
        let flushed = self.send.flush(&self.server);
        (sent, bytes, dropped) = (
            sent + flushed.sent,
            bytes + flushed.bytes,
            dropped + flushed.dropped,
        );
        if dropped != 0 || bytes != self.plan.clients * len {
            return Err(broken(format!(
                "a send lost datagrams: {sent} sent, {dropped} dropped, {bytes} bytes"
            )));
        }
        self.server_sent += sent;
        Ok(())
    }
}

/// Reads everything waiting on a non-blocking socket; returns how many
/// datagrams of `bytes` it read.
fn drain(socket: &UdpSocket, bytes: usize) -> io::Result<usize> {
    let mut buffer = [0u8; READ_BYTES];
    let mut n = 0;
    loop {
        match socket.recv(&mut buffer) {
            Ok(len) if len == bytes => n += 1,
            Ok(len) => return Err(broken(format!("a client read {len} bytes"))),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

type Step<'a, S> = &'a mut dyn FnMut(&mut S) -> io::Result<()>;

/// Runs warm-up and measured samples. Per tick: `before` (untimed), then
/// reading, `receive`, reading, `send`, reading, then `after` (untimed).
/// Returns the receive, send and whole-tick series.
fn run<S>(
    plan: &FloorPlan,
    state: &mut S,
    before: Step<'_, S>,
    receive: Step<'_, S>,
    send: Step<'_, S>,
    after: Step<'_, S>,
) -> io::Result<(Raw, Raw, Raw)> {
    let (mut receive_raw, mut send_raw, mut tick_raw) = <(Raw, Raw, Raw)>::default();
    let ticks = plan.ticks_per_sample;
    for sample in 0..plan.warm_up_samples + plan.samples {
        let mut sums = [0u64; 4]; // receive wall, cpu; send wall, cpu
        for _ in 0..ticks {
            before(state)?;
            let start = Reading::now();
            receive(state)?;
            let middle = Reading::now();
            send(state)?;
            let end = Reading::now();
            after(state)?;
            let (rw, rc) = start.until(middle);
            let (sw, sc) = middle.until(end);
            sums[0] += rw;
            sums[1] += rc;
            sums[2] += sw;
            sums[3] += sc;
        }
        if sample >= plan.warm_up_samples {
            receive_raw.push(sums[0], sums[1], ticks);
            send_raw.push(sums[2], sums[3], ticks);
            tick_raw.push(sums[0] + sums[2], sums[1] + sums[3], ticks);
        }
    }
    Ok((receive_raw, send_raw, tick_raw))
}

/// The cost of one interval of `run` with nothing in it.
fn clock_overhead(plan: &FloorPlan) -> io::Result<Overhead> {
    let nothing = &mut |_: &mut ()| Ok(());
    let (receive, _, _) = run(
        plan,
        &mut (),
        &mut |_| Ok(()),
        nothing,
        &mut |_| Ok(()),
        &mut |_| Ok(()),
    )?;
    Ok(Overhead {
        wall_ns: Stats::from_samples(receive.wall).median_ns(),
        cpu_ns: Stats::from_samples(receive.cpu).median_ns(),
    })
}

/// `run` over a match's ticks (clients send, the server receives, the server
/// sends, then `after`); checks the server moved every datagram both ways.
fn run_match(
    game: &mut FloorMatch,
    overhead: &Overhead,
    after: Step<'_, FloorMatch>,
) -> io::Result<Costs> {
    let plan = game.plan;
    let scheduling = Scheduling::now()?;
    let (receive, send, tick) = run(
        &plan,
        game,
        &mut FloorMatch::clients_send,
        &mut FloorMatch::server_receive,
        &mut FloorMatch::server_send,
        after,
    )?;
    let expected = plan.ticks() * plan.clients;
    if game.server_received != expected || game.server_sent != expected {
        return Err(broken(format!(
            "the server received {} and sent {} of {expected}",
            game.server_received, game.server_sent
        )));
    }
    Ok(Costs {
        receive: receive.series(overhead, 1.0),
        send: send.series(overhead, 1.0),
        tick: tick.series(overhead, 2.0),
        extra_receives: game.extra_receives,
        scheduling: Scheduling::now()?.since(scheduling),
    })
}

/// Plain: nobody waits on the client sockets.
fn plain(plan: FloorPlan, overhead: &Overhead) -> io::Result<Costs> {
    let mut game = FloorMatch::new(plan)?;
    let mut delivered = vec![0usize; plan.clients];
    let costs = run_match(&mut game, overhead, &mut |game| {
        for (count, client) in delivered.iter_mut().zip(&game.clients) {
            let n = drain(client, game.plan.server_bytes)?;
            if n != 1 {
                return Err(broken(format!("{n} datagrams to a client in one tick")));
            }
            *count += n;
        }
        Ok(())
    })?;
    if delivered.iter().any(|&n| n != plan.ticks()) {
        return Err(broken(format!("clients read {delivered:?}")));
    }
    Ok(costs)
}

/// The thread blocked in `epoll_wait` on the client sockets.
struct Reader {
    received: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    stat: File,
    /// The CPU the thread is pinned to (`None`: not pinned).
    cpu: Option<usize>,
    handle: thread::JoinHandle<io::Result<()>>,
}

impl Reader {
    fn start(clients: &[UdpSocket], bytes: usize, cpu: Option<usize>) -> io::Result<Self> {
        // SAFETY: plain system call; the result is checked.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `epoll` is a new descriptor nothing else owns.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        let mut sockets = Vec::with_capacity(clients.len());
        for (i, client) in clients.iter().enumerate() {
            let mut event = libc::epoll_event {
                events: (libc::EPOLLIN | libc::EPOLLET) as u32,
                u64: i as u64,
            };
            // SAFETY: both descriptors are open; `event` is valid for the call.
            let rc = unsafe {
                libc::epoll_ctl(
                    epoll.as_raw_fd(),
                    libc::EPOLL_CTL_ADD,
                    client.as_raw_fd(),
                    &mut event,
                )
            };
            if rc < 0 {
                return Err(io::Error::last_os_error());
            }
            sockets.push(client.try_clone()?);
        }
        let received = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let tid = Arc::new(AtomicI32::new(0));
        let pinned_cpu = Arc::new(AtomicUsize::new(usize::MAX));
        let handle = {
            let (received, stop, tid, pinned_cpu) = (
                received.clone(),
                stop.clone(),
                tid.clone(),
                pinned_cpu.clone(),
            );
            thread::Builder::new()
                .name("udp-floor-reader".into())
                .spawn(move || {
                    if cpu.is_some_and(pin_to_core) {
                        pinned_cpu.store(current_cpu().unwrap_or(usize::MAX), Ordering::Release);
                    }
                    // SAFETY: plain system call without arguments.
                    tid.store(unsafe { libc::gettid() }, Ordering::Release);
                    read_until_stopped(&epoll, &sockets, bytes, &received, &stop)
                })?
        };
        let started = Instant::now();
        while tid.load(Ordering::Acquire) == 0 {
            if started.elapsed() > PATIENCE {
                return Err(broken("the reader never started".into()));
            }
            thread::yield_now();
        }
        let stat = File::open(format!(
            "/proc/self/task/{}/stat",
            tid.load(Ordering::Acquire)
        ))?;
        Ok(Self {
            received,
            stop,
            stat,
            cpu: Some(pinned_cpu.load(Ordering::Acquire)).filter(|&cpu| cpu != usize::MAX),
            handle,
        })
    }

    /// Untimed, between ticks: waits until the reader has read `total`
    /// datagrams and is asleep in `epoll_wait` again.
    fn wait_until_asleep(&self, total: usize) -> io::Result<()> {
        let started = Instant::now();
        while self.received.load(Ordering::Acquire) < total {
            if started.elapsed() > PATIENCE {
                return Err(broken(format!(
                    "the reader got {} of {total}",
                    self.received.load(Ordering::Acquire)
                )));
            }
            std::hint::spin_loop();
        }
        let mut stat = [0u8; 512];
        loop {
            let len = self.stat.read_at(&mut stat, 0)?;
            if thread_state(&stat[..len]) == Some(b'S') {
                return Ok(());
            }
            if started.elapsed() > PATIENCE {
                return Err(broken("the reader never went back to sleep".into()));
            }
            std::hint::spin_loop();
        }
    }

    /// Stops the thread (a datagram of `bytes` to `wake` gets it out of
    /// `epoll_wait`); returns what it read.
    fn stop(self, wake: SocketAddr, bytes: usize) -> io::Result<usize> {
        self.stop.store(true, Ordering::Release);
        UdpSocket::bind("127.0.0.1:0")?.send_to(&vec![0u8; bytes], wake)?;
        self.handle
            .join()
            .map_err(|_| broken("the reader panicked".into()))??;
        Ok(self.received.load(Ordering::Acquire))
    }
}

/// The reader's loop: sleep in `epoll_wait`, drain every socket it reports.
fn read_until_stopped(
    epoll: &OwnedFd,
    sockets: &[UdpSocket],
    bytes: usize,
    received: &AtomicUsize,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; sockets.len()];
    while !stop.load(Ordering::Acquire) {
        // SAFETY: `events` is writable for its length.
        let n = unsafe {
            libc::epoll_wait(
                epoll.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                -1,
            )
        };
        if n < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        for event in &events[..n as usize] {
            let got = drain(&sockets[event.u64 as usize], bytes)?;
            received.fetch_add(got, Ordering::AcqRel);
        }
    }
    Ok(())
}

/// The state letter of a `/proc/<pid>/task/<tid>/stat` line (after the
/// parenthesised name, which may hold spaces and parentheses).
fn thread_state(stat: &[u8]) -> Option<u8> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 2).copied()
}

/// Woken: a second thread sleeps in `epoll_wait` on the client sockets of
/// `game` (started with [`Reader::start`] on them).
fn woken(overhead: &Overhead, mut game: FloorMatch, reader: Reader) -> io::Result<Costs> {
    let plan = game.plan;
    let mut expected = 0;
    let costs = run_match(&mut game, overhead, &mut |_| {
        expected += plan.clients;
        reader.wait_until_asleep(expected)
    })?;
    let total = reader.stop(game.client_addresses[0], plan.server_bytes)?;
    if total != plan.ticks() * plan.clients + 1 {
        return Err(broken(format!(
            "the reader read {total}, not every datagram and the wake-up"
        )));
    }
    Ok(costs)
}

/// The CPU this thread is running on (after pinning: the one it stays on).
fn current_cpu() -> Option<usize> {
    // SAFETY: plain system call without arguments.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

/// Measures both variants of `plan` (see the module docs) on threads of its
/// own: the server thread pinned to the first CPU and the reader to the
/// second when two are allowed. Blocks until done; an error means a
/// datagram went missing or a thread misbehaved, and there are no figures.
pub fn measure(plan: FloorPlan) -> io::Result<Floor> {
    plan.validate()?;
    let two_cores = thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let woken_game = FloorMatch::new(plan)?;
    let reader = Reader::start(
        &woken_game.clients,
        plan.server_bytes,
        two_cores.then_some(1),
    )?;
    let reader_cpu = reader.cpu;
    let server = thread::Builder::new()
        .name("udp-floor-server".into())
        .spawn(move || -> io::Result<_> {
            let cpu = (two_cores && pin_to_core(0)).then(current_cpu).flatten();
            let overhead = clock_overhead(&plan)?;
            let plain = plain(plan, &overhead)?;
            let woken = woken(&overhead, woken_game, reader)?;
            Ok(Floor {
                plan,
                plain,
                woken,
                overhead,
                server_cpu: cpu,
                reader_cpu,
            })
        })?;
    server
        .join()
        .map_err(|_| broken("the server thread panicked".into()))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_udp::BATCH;

    #[test]
    fn a_tiny_plan_moves_every_datagram_and_gives_figures() {
        let floor = measure(FloorPlan {
            ticks_per_sample: 5,
            samples: 3,
            warm_up_samples: 1,
            ..FloorPlan::FIVE_V_FIVE
        })
        .expect("the floor");
        assert_eq!(floor.plain.tick.cpu.samples_ns.len(), 3);
        assert_eq!(floor.woken.tick.cpu.samples_ns.len(), 3);
        assert!(floor.plain.tick.wall.median_ns().is_finite());
    }

    #[test]
    fn a_match_larger_than_a_batch_sends_in_several() {
        let floor = measure(FloorPlan {
            clients: BATCH + 36,
            ticks_per_sample: 2,
            samples: 2,
            warm_up_samples: 0,
            ..FloorPlan::FIVE_V_FIVE
        })
        .expect("the floor");
        assert_eq!(floor.plain.tick.cpu.samples_ns.len(), 2);
    }

    #[test]
    fn a_plan_too_large_is_refused_by_field() {
        let e = measure(FloorPlan {
            clients: MAX_CLIENTS + 1,
            ..FloorPlan::FIVE_V_FIVE
        })
        .unwrap_err();
        assert!(e.to_string().contains("clients"), "{e}");
    }

    #[test]
    fn the_state_letter_follows_the_name() {
        assert_eq!(thread_state(b"12 (a (b) c) S 1 2"), Some(b'S'));
        assert_eq!(thread_state(b"no name"), None);
    }
}
