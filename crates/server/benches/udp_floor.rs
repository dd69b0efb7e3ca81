//! The kernel's floor for one 5v5 match's UDP traffic on loopback: what the
//! server's thread spends in `recvmmsg` / `sendmmsg` per match tick when it
//! does nothing else, on the server's real I/O path (`batch_io::bind`,
//! `ReceiveBatch::receive`, `SendBatch::buffer` / `commit` / `flush`).
//!
//! One match tick, as the server sees it at 128 Hz with 10 clients:
//!
//! - untimed: each of 10 client sockets sends one 52-byte datagram to the
//!   server socket (client cost, not server cost);
//! - timed, *receive*: one `ReceiveBatch::receive` drains the 10 (plus the
//!   `datagram(i)` reads a server does to get each sender);
//! - timed, *send*: 10 datagrams of 60 bytes, one to each client, written
//!   into one `SendBatch` and flushed with one `sendmmsg`;
//! - untimed: the clients read their datagrams, so no buffer ever fills.
//!
//! On loopback the sender's `sendmmsg` also runs the receiver's delivery
//! (IP receive, UDP enqueue, waking whoever waits on the socket) in softirq
//! on the sender's CPU, so the send cost depends on the receiver:
//!
//! - variant *a* (`udp_floor_send_us_per_datagram`): the client sockets are
//!   plain non-blocking sockets, in no epoll, with no thread waiting on them;
//!   the server thread drains them after the tick, untimed. This is the floor.
//! - variant *b* (`udp_floor_send_woken_us_per_datagram`): the 10 client
//!   sockets are registered (`EPOLLIN | EPOLLET`) in one epoll instance and a
//!   second thread is blocked in `epoll_wait` on it, draining the sockets
//!   when woken: what a tokio-based bot process does. Between ticks the
//!   bench waits (untimed) until that thread has read all 10 and is asleep
//!   again (state `S` in its `/proc/self/task/<tid>/stat`), as it would be
//!   during the 7.8 ms between real ticks, so every tick pays a real wake-up.
//!
//! Each figure is the median over 200 samples of 100 ticks of the server
//! thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), minus the cost of reading
//! the clocks (measured the same way with no work between the readings).
//! Thread CPU time, not wall time, is the headline because the machines we
//! run on are shared: it does not count time the thread spends preempted.
//! It does count the loopback delivery softirq run in the thread's context
//! as long as the kernel is built without `CONFIG_IRQ_TIME_ACCOUNTING`
//! (true of the kernel this was written on); with it, softirq time is kept
//! apart and the wall-time column, printed beside it, is the one to trust.
//! The server thread is pinned to CPU 0 and the waiting reader to CPU 1
//! (when two are allowed; the table says where they ran), so a wake-up is a
//! cross-CPU one, as when bots run in another process. Both are spawned from
//! the unpinned main thread: a thread inherits its parent's CPU mask.
//!
//! `udp_floor_match_tick_us` is variant a's receive + send per match tick
//! and `udp_floor_gpc_ceiling` = 0.9 / (match_tick_us * 128 / 1e6): the games
//! per core if the server did nothing but these system calls. Nothing here
//! asserts a timing; the bench asserts that every datagram arrived.
//!
//! `cargo bench -p hightick-server --bench udp_floor`

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

use hightick_server::batch_io::{self, BATCH, ReceiveBatch, SendBatch};
use hightick_server::process::pin_to_core;
use hightick_telemetry::bench::{Stats, figure};

/// Players in a 5v5 match.
const CLIENTS: usize = 10;
/// A client's input datagram.
const CLIENT_BYTES: usize = 52;
/// The server's per-client snapshot datagram.
const SERVER_BYTES: usize = 60;
const TICKS_PER_SAMPLE: usize = 100;
const SAMPLES: usize = 200;
/// Samples run first and thrown away (caches, socket buffers, the scheduler).
const WARM_UP_SAMPLES: usize = 10;
const TICK_HZ: f64 = 128.0;
/// The GPC definition: matches x 0.9 / cores.
const GPC_FACTOR: f64 = 0.9;
/// The target, in games per core.
const TARGET_GPC: f64 = 100.0;

const _: () = assert!(CLIENTS <= BATCH, "one match tick fits one batch");

/// Wall clock and this thread's CPU clock, read together.
#[derive(Clone, Copy)]
struct Reading {
    wall: Instant,
    cpu_ns: u64,
}

impl Reading {
    fn now() -> Self {
        let wall = Instant::now();
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the clock id is a
        // constant the kernel knows.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(
            rc,
            0,
            "CLOCK_THREAD_CPUTIME_ID: {}",
            io::Error::last_os_error()
        );
        Self {
            wall,
            cpu_ns: ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
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

/// Nanoseconds per tick of one part of the tick, one entry per sample.
#[derive(Default)]
struct Series {
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

impl Series {
    fn push(&mut self, wall_ns: u64, cpu_ns: u64) {
        self.wall.push(wall_ns as f64 / TICKS_PER_SAMPLE as f64);
        self.cpu.push(cpu_ns as f64 / TICKS_PER_SAMPLE as f64);
    }

    /// Stats with the clock-reading cost `overhead` taken off every sample.
    fn stats(&self, overhead: &Overhead) -> (Stats, Stats) {
        let less = |v: &[f64], o: f64| Stats::from_samples(v.iter().map(|x| x - o).collect());
        (
            less(&self.wall, overhead.wall_ns),
            less(&self.cpu, overhead.cpu_ns),
        )
    }
}

/// The medians of one interval between two readings with nothing in between.
struct Overhead {
    wall_ns: f64,
    cpu_ns: f64,
}

/// Per-tick costs of one variant, after the clock overhead is taken off.
struct Costs {
    receive: (Stats, Stats),
    send: (Stats, Stats),
    tick: (Stats, Stats),
    /// `receive` calls beyond the one per tick (datagrams not yet queued).
    extra_receives: usize,
    /// The server thread's scheduling over the whole variant.
    scheduling: Scheduling,
}

/// How the scheduler treated this thread so far: context switches (from
/// `getrusage`) and time spent runnable but waiting for a CPU (schedstat).
#[derive(Clone, Copy, Default)]
struct Scheduling {
    voluntary: i64,
    involuntary: i64,
    wait_ns: u64,
}

impl Scheduling {
    fn now() -> Self {
        // SAFETY: all-zero is a valid rusage, which the call fills.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is writable; RUSAGE_THREAD is this thread.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        assert_eq!(rc, 0, "getrusage: {}", io::Error::last_os_error());
        // "<run ns> <wait ns> <slices>"; absent without CONFIG_SCHED_INFO.
        let wait_ns = std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0);
        Self {
            voluntary: usage.ru_nvcsw,
            involuntary: usage.ru_nivcsw,
            wait_ns,
        }
    }

    fn since(self, earlier: Self) -> Self {
        Self {
            voluntary: self.voluntary - earlier.voluntary,
            involuntary: self.involuntary - earlier.involuntary,
            wait_ns: self.wait_ns.saturating_sub(earlier.wait_ns),
        }
    }
}

/// One match's sockets and the server's batches.
struct Match {
    server: UdpSocket,
    server_address: SocketAddr,
    clients: Vec<UdpSocket>,
    client_addresses: Vec<SocketAddr>,
    receive: ReceiveBatch,
    send: SendBatch,
    /// Datagrams the server received / the kernel took from its sendmmsg.
    server_received: usize,
    server_sent: usize,
    extra_receives: usize,
    tick: u32,
}

impl Match {
    fn new() -> io::Result<Self> {
        let server = batch_io::bind("127.0.0.1:0".parse().expect("address"))?;
        let server_address = server.local_addr()?;
        let mut clients = Vec::with_capacity(CLIENTS);
        let mut client_addresses = Vec::with_capacity(CLIENTS);
        for _ in 0..CLIENTS {
            let client = UdpSocket::bind("127.0.0.1:0")?;
            client.set_nonblocking(true)?;
            client_addresses.push(client.local_addr()?);
            clients.push(client);
        }
        Ok(Self {
            server,
            server_address,
            clients,
            client_addresses,
            receive: ReceiveBatch::new(),
            send: SendBatch::new(),
            server_received: 0,
            server_sent: 0,
            extra_receives: 0,
            tick: 0,
        })
    }

    /// Untimed: every client sends its input for this tick.
    fn clients_send(&mut self) {
        self.tick = self.tick.wrapping_add(1);
        let mut datagram = [0u8; CLIENT_BYTES];
        datagram[..4].copy_from_slice(&self.tick.to_le_bytes());
        for (i, client) in self.clients.iter().enumerate() {
            datagram[4] = i as u8;
            let sent = client
                .send_to(&datagram, self.server_address)
                .expect("client send");
            assert_eq!(sent, CLIENT_BYTES);
        }
    }

    /// Timed: the server drains the match's 10 inputs.
    fn server_receive(&mut self) {
        let mut got = 0;
        let mut calls = 0u32;
        while got < CLIENTS {
            let n = self.receive.receive(&self.server).expect("recvmmsg");
            for i in 0..n {
                let (from, bytes) = self.receive.datagram(i).expect("an IPv4 sender");
                assert_eq!(bytes.len(), CLIENT_BYTES, "from {from}");
                black_box((from, bytes[4]));
            }
            got += n;
            calls += 1;
            assert!(calls < 1_000_000, "the inputs never arrived: {got}");
        }
        assert_eq!(got, CLIENTS, "one input per client");
        self.server_received += got;
        self.extra_receives += calls as usize - 1;
    }

    /// Timed: the server sends one snapshot to each client in one sendmmsg.
    fn server_send(&mut self) {
        for (i, &to) in self.client_addresses.iter().enumerate() {
            let buffer = self.send.buffer().expect("room for a match tick");
            buffer[..4].copy_from_slice(&self.tick.to_le_bytes());
            buffer[4] = i as u8;
            buffer[5..SERVER_BYTES].fill(0x5A);
            self.send.commit(SERVER_BYTES, to);
        }
        let flushed = self.send.flush(&self.server);
        assert_eq!(flushed.dropped, 0, "{flushed:?}");
        assert_eq!(flushed.bytes, CLIENTS * SERVER_BYTES, "{flushed:?}");
        self.server_sent += flushed.sent;
    }
}

/// Reads everything waiting on a non-blocking socket; returns how many
/// datagrams of `SERVER_BYTES` it read.
fn drain(socket: &UdpSocket) -> usize {
    let mut buffer = [0u8; 256];
    let mut n = 0;
    loop {
        match socket.recv(&mut buffer) {
            Ok(len) => {
                assert_eq!(len, SERVER_BYTES);
                n += 1;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => panic!("client receive: {e}"),
        }
    }
}

/// Runs warm-up and measured samples of `TICKS_PER_SAMPLE` ticks. Per tick:
/// `before` (untimed), then reading, `receive`, reading, `send`, reading,
/// then `after` (untimed).
fn run<S>(
    state: &mut S,
    mut before: impl FnMut(&mut S),
    mut receive: impl FnMut(&mut S),
    mut send: impl FnMut(&mut S),
    mut after: impl FnMut(&mut S),
) -> (Series, Series, Series) {
    let (mut receive_series, mut send_series, mut tick_series) = Default::default();
    for sample in 0..WARM_UP_SAMPLES + SAMPLES {
        let mut sums = [0u64; 4]; // receive wall, cpu; send wall, cpu
        for _ in 0..TICKS_PER_SAMPLE {
            before(state);
            let start = Reading::now();
            receive(state);
            let middle = Reading::now();
            send(state);
            let end = Reading::now();
            after(state);
            let (rw, rc) = start.until(middle);
            let (sw, sc) = middle.until(end);
            sums[0] += rw;
            sums[1] += rc;
            sums[2] += sw;
            sums[3] += sc;
        }
        if sample >= WARM_UP_SAMPLES {
            Series::push(&mut receive_series, sums[0], sums[1]);
            Series::push(&mut send_series, sums[2], sums[3]);
            Series::push(&mut tick_series, sums[0] + sums[2], sums[1] + sums[3]);
        }
    }
    (receive_series, send_series, tick_series)
}

/// The cost of one interval of `run` with nothing in it.
fn clock_overhead() -> Overhead {
    let (receive, _, _) = run(&mut (), |_| {}, |_| {}, |_| {}, |_| {});
    let wall = Stats::from_samples(receive.wall);
    let cpu = Stats::from_samples(receive.cpu);
    Overhead {
        wall_ns: wall.median_ns(),
        cpu_ns: cpu.median_ns(),
    }
}

/// Every timed tick of a run, warm-up included.
const TICKS: usize = (WARM_UP_SAMPLES + SAMPLES) * TICKS_PER_SAMPLE;

/// `run` over a match's ticks (clients send, the server receives, the server
/// sends, then `after`); checks the server moved every datagram both ways.
fn run_match(game: &mut Match, after: impl FnMut(&mut Match)) -> (Series, Series, Series) {
    let series = run(
        game,
        Match::clients_send,
        Match::server_receive,
        Match::server_send,
        after,
    );
    assert_eq!(game.server_received, TICKS * CLIENTS);
    assert_eq!(game.server_sent, TICKS * CLIENTS);
    series
}

fn costs(
    series: (Series, Series, Series),
    overhead: &Overhead,
    extra_receives: usize,
    scheduling: Scheduling,
) -> Costs {
    let (receive, send, tick) = series;
    let tick_overhead = Overhead {
        wall_ns: 2.0 * overhead.wall_ns,
        cpu_ns: 2.0 * overhead.cpu_ns,
    };
    Costs {
        receive: receive.stats(overhead),
        send: send.stats(overhead),
        tick: tick.stats(&tick_overhead),
        extra_receives,
        scheduling,
    }
}

/// Variant a: nobody waits on the client sockets.
fn unwatched(overhead: &Overhead) -> io::Result<Costs> {
    let mut game = Match::new()?;
    let mut delivered = [0usize; CLIENTS];
    let scheduling = Scheduling::now();
    let series = run_match(&mut game, |game| {
        for (count, client) in delivered.iter_mut().zip(&game.clients) {
            let n = drain(client);
            assert_eq!(n, 1, "one snapshot per client per tick");
            *count += n;
        }
    });
    assert!(delivered.iter().all(|&n| n == TICKS), "{delivered:?}");
    let scheduling = Scheduling::now().since(scheduling);
    Ok(costs(series, overhead, game.extra_receives, scheduling))
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
    fn start(clients: &[UdpSocket], cpu: Option<usize>) -> io::Result<Self> {
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
                    read_until_stopped(&epoll, &sockets, &received, &stop)
                })?
        };
        let started = Instant::now();
        while tid.load(Ordering::Acquire) == 0 {
            assert!(started.elapsed() < Duration::from_secs(10), "reader start");
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
    fn wait_until_asleep(&self, total: usize) {
        let started = Instant::now();
        while self.received.load(Ordering::Acquire) < total {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the reader got {} of {total}",
                self.received.load(Ordering::Acquire)
            );
            std::hint::spin_loop();
        }
        let mut stat = [0u8; 512];
        loop {
            let len = self.stat.read_at(&mut stat, 0).expect("reader stat");
            if thread_state(&stat[..len]) == Some(b'S') {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the reader never went back to sleep"
            );
            std::hint::spin_loop();
        }
    }

    /// Stops the thread (a datagram to `wake` gets it out of `epoll_wait`).
    fn stop(self, wake: SocketAddr) -> io::Result<usize> {
        self.stop.store(true, Ordering::Release);
        UdpSocket::bind("127.0.0.1:0")?.send_to(&[0u8; SERVER_BYTES], wake)?;
        self.handle.join().expect("reader thread")?;
        Ok(self.received.load(Ordering::Acquire))
    }
}

/// The reader's loop: sleep in `epoll_wait`, drain every socket it reports.
fn read_until_stopped(
    epoll: &OwnedFd,
    sockets: &[UdpSocket],
    received: &AtomicUsize,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; CLIENTS];
    while !stop.load(Ordering::Acquire) {
        // SAFETY: `events` is writable for CLIENTS entries.
        let n = unsafe {
            libc::epoll_wait(
                epoll.as_raw_fd(),
                events.as_mut_ptr(),
                CLIENTS as libc::c_int,
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
            let got = drain(&sockets[event.u64 as usize]);
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

/// Variant b: a second thread sleeps in `epoll_wait` on the client sockets
/// of `game` (started with [`Reader::start`] on them).
fn watched(overhead: &Overhead, mut game: Match, reader: Reader) -> io::Result<Costs> {
    let mut expected = 0;
    let scheduling = Scheduling::now();
    let series = run_match(&mut game, |_| {
        expected += CLIENTS;
        reader.wait_until_asleep(expected);
    });
    assert_eq!(reader.received.load(Ordering::Acquire), TICKS * CLIENTS);
    let total = reader.stop(game.client_addresses[0])?;
    assert_eq!(total, TICKS * CLIENTS + 1, "every snapshot and the wake-up");
    let scheduling = Scheduling::now().since(scheduling);
    Ok(costs(series, overhead, game.extra_receives, scheduling))
}

/// Games per core if a match tick cost the server `tick_us` and nothing else.
fn gpc_ceiling(tick_us: f64) -> f64 {
    GPC_FACTOR / (tick_us * TICK_HZ / 1e6)
}

/// The CPU this thread is running on (after pinning: the one it stays on).
fn current_cpu() -> Option<usize> {
    // SAFETY: plain system call without arguments.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

fn main() -> io::Result<()> {
    let two_cores = thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    // The reader pins itself to the process's second CPU, the server thread
    // (below) to its first.
    let watched_game = Match::new()?;
    let reader = Reader::start(&watched_game.clients, two_cores.then_some(1))?;
    let reader_cpu = reader.cpu;
    let server = thread::Builder::new()
        .name("udp-floor-server".into())
        .spawn(move || -> io::Result<_> {
            let cpu = (two_cores && pin_to_core(0)).then(current_cpu).flatten();
            let overhead = clock_overhead();
            let a = unwatched(&overhead)?;
            let b = watched(&overhead, watched_game, reader)?;
            Ok((overhead, a, b, cpu))
        })?;
    let (overhead, a, b, server_cpu) = server.join().expect("server thread")?;

    let per_datagram = |s: &Stats| s.median_us() / CLIENTS as f64;
    let tick_us = a.tick.1.median_us();
    figure(
        "udp_floor_recv_us_per_datagram",
        per_datagram(&a.receive.1),
        "us",
    );
    figure(
        "udp_floor_send_us_per_datagram",
        per_datagram(&a.send.1),
        "us",
    );
    figure(
        "udp_floor_send_woken_us_per_datagram",
        per_datagram(&b.send.1),
        "us",
    );
    figure("udp_floor_match_tick_us", tick_us, "us");
    figure("udp_floor_gpc_ceiling", gpc_ceiling(tick_us), "games/core");

    println!();
    println!(
        "per match tick ({CLIENTS} x {CLIENT_BYTES} B in, {CLIENTS} x {SERVER_BYTES} B out), \
         medians of {SAMPLES} samples x {TICKS_PER_SAMPLE} ticks, clock overhead taken off"
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9} {:>10}",
        "", "cpu p10", "cpu us", "cpu p90", "wall us"
    );
    for (name, (wall, cpu)) in [
        ("a unwatched: receive 10", &a.receive),
        ("a unwatched: send 10", &a.send),
        ("a unwatched: tick", &a.tick),
        ("b epoll + sleeper: receive 10", &b.receive),
        ("b epoll + sleeper: send 10", &b.send),
        ("b epoll + sleeper: tick", &b.tick),
    ] {
        println!(
            "{:<34} {:>9.2} {:>9.2} {:>9.2} {:>10.2}",
            name,
            cpu.quantile_ns(0.1) / 1e3,
            cpu.median_us(),
            cpu.quantile_ns(0.9) / 1e3,
            wall.median_us()
        );
    }
    let b_tick_us = b.tick.1.median_us();
    println!(
        "games/core ceiling: a {:.0}, b {:.0} (0.9 / (tick us x {TICK_HZ} / 1e6))",
        gpc_ceiling(tick_us),
        gpc_ceiling(b_tick_us),
    );
    let budget_us = GPC_FACTOR * 1e6 / (TARGET_GPC * TICK_HZ);
    println!(
        "share of the {budget_us:.1} us per-tick budget of {TARGET_GPC:.0} GPC: a {:.0}%, b {:.0}%",
        tick_us / budget_us * 100.0,
        b_tick_us / budget_us * 100.0
    );
    println!(
        "clock overhead per interval: {:.2} us cpu, {:.2} us wall; extra receive calls: a {}, b {}",
        overhead.cpu_ns / 1e3,
        overhead.wall_ns / 1e3,
        a.extra_receives,
        b.extra_receives
    );
    let ticks = TICKS as f64;
    for (name, costs) in [("a", &a), ("b", &b)] {
        let s = costs.scheduling;
        println!(
            "server thread over {name} (timed and untimed parts): {:.1} voluntary + {:.1} \
             involuntary switches per 1000 ticks, {:.2} us per tick runnable but off its cpu",
            s.voluntary as f64 * 1e3 / ticks,
            s.involuntary as f64 * 1e3 / ticks,
            s.wait_ns as f64 / 1e3 / ticks
        );
    }
    println!(
        "server thread on cpu {}, epoll reader on cpu {}",
        server_cpu.map_or("any".to_string(), |c| c.to_string()),
        reader_cpu.map_or("any".to_string(), |c| c.to_string())
    );
    Ok(())
}
