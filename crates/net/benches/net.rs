//! Per-packet cost of the connection layer, on a 200-byte game packet (the
//! plaintext payload inside the AEAD):
//!
//! - `net_seal_200b_us` / `net_open_200b_us`: the packet AEAD alone
//!   (ChaCha20-Poly1305 in place, header and tag included); open includes
//!   copying the sealed datagram into the work buffer, as a receive would.
//! - `net_send_path_us`: `Server::send_unreliable` + `Server::poll_transmit`:
//!   the packet layer encodes the message with acks and a sequence, the secure
//!   layer seals it.
//! - `net_recv_path_us`: `Client::handle_datagram` + `Client::poll_message`:
//!   address check, replay check, open, ack processing, message decode and copy-out.
//!
//! Send and receive run on a real connected `Server`/`Client` pair, in batches
//! of 64 packets; between batches (untimed) the other side reads the batch and
//! answers with its acks, so both stay in steady state.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hightick_net::crypto::PacketCipher;
use hightick_net::wire::{self, MAX_PACKET_BYTES, PacketKind};
use hightick_net::{Client, ClientConfig, ConnectToken, Key, Server, ServerConfig, TokenParams};
use hightick_telemetry::bench::{Stats, figure, measure};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const PROTOCOL: u64 = 0x6869_6768_7469_636B;
/// Payload of 200 bytes: 9-byte packet header, 3-byte block header, 188-byte message.
const MESSAGE_BYTES: usize = 188;
const BATCH: usize = 64;
const SAMPLES: usize = 200;

fn server_addr() -> SocketAddr {
    "10.0.0.1:40000".parse().unwrap()
}

fn client_addr() -> SocketAddr {
    "10.0.0.2:50000".parse().unwrap()
}

struct Connected {
    now: Instant,
    server: Server,
    client: Client,
    buf: Vec<u8>,
}

impl Connected {
    fn new() -> Self {
        let now = Instant::now();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let key = Key::generate(&mut rng);
        let token = ConnectToken::generate(
            &TokenParams {
                protocol_id: PROTOCOL,
                client_id: 1,
                create_unix: 1_000,
                expire_unix: 1_060,
                timeout_seconds: 3600,
                server_addresses: &[server_addr()],
                user_data: &[],
            },
            &key,
            &mut rng,
        )
        .unwrap();
        let config = ServerConfig::new(PROTOCOL, key, server_addr(), 16);
        let server = Server::new(config, now, 1_000, &mut rng).unwrap();
        let client = Client::new(token, ClientConfig::default(), now).unwrap();
        let mut c = Self {
            now,
            server,
            client,
            buf: vec![0; MAX_PACKET_BYTES],
        };
        for _ in 0..10 {
            c.exchange();
        }
        assert!(c.client.is_connected() && c.server.is_connected(0));
        c
    }

    /// Everything due each way, delivered at once.
    fn exchange(&mut self) {
        while let Some(t) = self.client.poll_transmit(self.now, &mut self.buf) {
            self.server
                .handle_datagram(self.now, client_addr(), &mut self.buf[..t.len]);
        }
        while let Some(t) = self.server.poll_transmit(self.now, &mut self.buf) {
            self.client
                .handle_datagram(self.now, server_addr(), &mut self.buf[..t.len]);
        }
        let mut out = [0u8; 1024];
        while self.client.poll_message(&mut out).is_some() {}
        while self.server.poll_message(0, &mut out).is_some() {}
        while self.client.poll_delivery().is_some() {}
        while self.server.poll_delivery(0).is_some() {}
    }
}

/// Times `batch` per sample, dividing by the packets it handled; `setup`
/// runs untimed before each sample.
fn batched<S>(
    state: &mut S,
    mut setup: impl FnMut(&mut S),
    mut batch: impl FnMut(&mut S) -> usize,
) -> Stats {
    let mut samples = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES + 10 {
        setup(state);
        let start = Instant::now();
        let n = batch(state);
        let ns = start.elapsed().as_nanos() as f64 / n.max(1) as f64;
        if i >= 10 {
            samples.push(ns); // the first ten warm up
        }
    }
    Stats::from_samples(samples)
}

/// A batch of datagrams the server sent, waiting to be received.
struct Batch {
    c: Connected,
    bytes: Vec<u8>,
    lens: [usize; BATCH],
}

impl Batch {
    /// The server sends one 200-byte packet per slot of the batch.
    fn send(&mut self, message: &[u8]) {
        for (i, len) in self.lens.iter_mut().enumerate() {
            self.c.server.send_unreliable(0, message).unwrap();
            let slot = &mut self.bytes[i * MAX_PACKET_BYTES..(i + 1) * MAX_PACKET_BYTES];
            *len = self
                .c
                .server
                .poll_transmit(self.c.now, slot)
                .map_or(0, |t| t.len);
        }
    }

    /// The client receives the batch; returns the messages it decoded.
    fn receive(&mut self, out: &mut [u8]) -> usize {
        let mut received = 0;
        for (i, len) in self
            .lens
            .iter_mut()
            .enumerate()
            .filter(|(_, len)| **len > 0)
        {
            let d = &mut self.bytes[i * MAX_PACKET_BYTES..i * MAX_PACKET_BYTES + *len];
            self.c.client.handle_datagram(self.c.now, server_addr(), d);
            while self.c.client.poll_message(out).is_some() {
                received += 1;
            }
            *len = 0;
        }
        received
    }

    /// Time passes (one tick) and both sides exchange what is due: acks.
    fn settle(&mut self) {
        self.c.now += Duration::from_millis(8);
        self.c.exchange();
    }
}

fn main() {
    let cipher = PacketCipher::new(&Key::from_bytes([7; 32]), PROTOCOL);
    let mut datagram = vec![0u8; MAX_PACKET_BYTES];
    let mut sequence = 1_000u64;
    let seal = measure(
        || {
            sequence += 1;
            wire::seal_packet(&mut datagram, PacketKind::Payload, sequence, 200, &cipher)
        },
        2_000,
        50,
    );

    let len = wire::seal_packet(&mut datagram, PacketKind::Payload, 5_000, 200, &cipher).unwrap();
    let sealed = datagram[..len].to_vec();
    let mut work = vec![0u8; MAX_PACKET_BYTES];
    let open = measure(
        || {
            let d = &mut work[..sealed.len()];
            d.copy_from_slice(&sealed);
            let header = wire::read_header(d).ok()?;
            wire::open_packet(d, &header, &cipher).ok()
        },
        2_000,
        50,
    );
    assert!(open.median_ns() > 0.0);

    let message = [0x5Au8; MESSAGE_BYTES];
    let mut out = [0u8; 1024];
    let mut batch = Batch {
        c: Connected::new(),
        bytes: vec![0u8; BATCH * MAX_PACKET_BYTES],
        lens: [0; BATCH],
    };

    // Send path: the server builds and seals BATCH packets; untimed, the client
    // reads them and both sides exchange acks.
    let send = batched(
        &mut batch,
        |b| {
            b.receive(&mut out);
            b.settle();
        },
        |b| {
            b.send(&message);
            BATCH
        },
    );
    assert!(
        batch.lens.iter().all(|&len| len == 1 + 2 + 200 + 16),
        "{:?}",
        batch.lens
    );

    // Receive path: untimed, the server builds BATCH packets (carrying acks of
    // the client's packets); the client opens, processes and decodes them.
    let mut decoded = 0;
    let recv = batched(
        &mut batch,
        |b| {
            b.settle();
            b.send(&message);
        },
        |b| {
            let n = b.receive(&mut out);
            decoded += n;
            n
        },
    );
    assert_eq!(decoded, (SAMPLES + 10) * BATCH, "every packet decoded");
    let c = &batch.c;
    assert!(c.server.is_connected(0) && c.client.is_connected());
    assert_eq!(c.client.counters().total(), 0, "{:?}", c.client.counters());
    assert_eq!(c.server.counters().total(), 0, "{:?}", c.server.counters());

    figure("net_seal_200b_us", seal.median_us(), "us");
    figure("net_open_200b_us", open.median_us(), "us");
    figure("net_send_path_us", send.median_us(), "us");
    figure("net_recv_path_us", recv.median_us(), "us");
    println!();
    println!(
        "{:<20} {:>10} {:>10} {:>10}",
        "per 200 B packet", "p10 us", "median us", "p90 us"
    );
    for (name, s) in [
        ("seal", &seal),
        ("open", &open),
        ("send path", &send),
        ("recv path", &recv),
    ] {
        println!(
            "{:<20} {:>10.3} {:>10.3} {:>10.3}",
            name,
            s.quantile_ns(0.1) / 1e3,
            s.median_us(),
            s.quantile_ns(0.9) / 1e3
        );
    }
    println!(
        "datagram: {} bytes on the wire for a 200-byte payload",
        sealed.len()
    );
}
