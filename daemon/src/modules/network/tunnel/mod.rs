//! The WireGuard side of the network: one UDP socket, one Noise tunnel per device (boringtun's
//! `Tunn`), and the IP packets they carry, handed to and taken from the stack ([`super::stack`]).
//!
//! Cryptokey routing as WireGuard defines it, and the reason a request's device can be trusted:
//! a packet is accepted only when it decrypts under a device's session *and* its inner source
//! address is that device's own; a packet for a device goes out only under its session, to the
//! endpoint it last spoke from. A handshake from a key vyred did not issue is dropped without
//! an answer, after the cheap MAC check (and, under load, the cookie) that keeps an unknown
//! sender from making vyred do the Diffie-Hellman work for it.
//!
//! Time: boringtun keeps its timers in its own clock, which moves only when `update_timers`
//! runs. vyred runs it before every packet it hands a tunnel (so a peer that was quiet for an
//! hour is judged by the time now) and every [`TICK`] while a device has spoken in the last
//! [`ACTIVE`]; with no device connected, nothing here wakes up.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use boringtun::noise::errors::WireGuardError;
use boringtun::noise::handshake::parse_handshake_anon;
use boringtun::noise::rate_limiter::RateLimiter;
use boringtun::noise::{Packet, Tunn, TunnResult};
use boringtun::x25519::PublicKey;
use tokio::net::UdpSocket;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::keys::KeyPair;

/// How often the tunnels' timers run while a device is connected (keepalives, rekeys, expiry).
pub const TICK: Duration = Duration::from_secs(10);
/// How long after its last packet a device counts as connected (WireGuard's reject-after time:
/// past it, no session of the device's is usable anyway).
pub const ACTIVE: Duration = Duration::from_secs(180);
/// Handshakes a second, across all devices, before senders must answer a cookie.
const HANDSHAKES_PER_SECOND: u64 = 100;
/// The largest datagram handled (WireGuard's own bound on a packet plus its overhead).
const MAX_DATAGRAM: usize = 65_535 + 32;

/// One device on the network.
pub struct Peer {
    pub device: String,
    pub name: String,
    pub public: [u8; 32],
    pub address: Ipv4Addr,
    /// Cancelled when the device leaves the network: its open connections end at once.
    pub cut: CancellationToken,
    /// Its connections open to vyred now ([`Peer::hold`]).
    connections: std::sync::atomic::AtomicUsize,
    index: u32,
    tunn: Mutex<Tunn>,
    state: Mutex<PeerState>,
}

/// The connections one device may hold open to vyred at once: a browser's few per host, its
/// event streams and a worker's, over both ports, with room to spare; not so many that one
/// device could take every socket of the stack's memory.
pub const CONNECTIONS_PER_DEVICE: usize = 32;

/// One of a device's connections, counted while it is open.
pub struct Slot(Arc<Peer>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0
            .connections
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

impl Peer {
    /// Count one more connection of this device's, unless it holds
    /// [`CONNECTIONS_PER_DEVICE`] already.
    pub fn hold(self: &Arc<Self>) -> Option<Slot> {
        use std::sync::atomic::Ordering;
        self.connections
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < CONNECTIONS_PER_DEVICE).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(self.clone()))
    }
}

#[derive(Default)]
struct PeerState {
    /// Where the device last spoke from (it roams: the phone moves between networks).
    endpoint: Option<SocketAddr>,
    last_packet: Option<Instant>,
    /// When the timers last ran.
    ticked: Option<Instant>,
}

/// What `network.status` says about a device.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct PeerStatus {
    pub device: String,
    pub name: String,
    pub address: String,
    /// The device's WireGuard public key.
    pub public_key: String,
    /// Whether it has a live session (it spoke within the last three minutes).
    pub connected: bool,
    /// Seconds since its last packet, if it ever sent one since vyred started.
    pub last_packet_s: Option<u64>,
    /// Where it last spoke from.
    pub endpoint: Option<String>,
}

#[derive(Default)]
struct Table {
    by_key: HashMap<[u8; 32], Arc<Peer>>,
    by_index: HashMap<u32, Arc<Peer>>,
    by_addr: HashMap<Ipv4Addr, Arc<Peer>>,
    next_index: u32,
}

/// The devices on the network, shared by the tunnel, the stack's listener and the module.
#[derive(Clone)]
pub struct Peers {
    table: Arc<RwLock<Table>>,
    key: Arc<KeyPair>,
    limiter: Arc<RateLimiter>,
    limiter_reset: Arc<Mutex<Instant>>,
    /// Woken when a packet arrives, so the timers start ticking again.
    wake: Arc<Notify>,
}

impl Peers {
    pub fn new(key: KeyPair) -> Peers {
        let limiter = Arc::new(RateLimiter::new(&key.public, HANDSHAKES_PER_SECOND));
        Peers {
            table: Arc::default(),
            key: Arc::new(key),
            limiter,
            limiter_reset: Arc::new(Mutex::new(Instant::now())),
            wake: Arc::default(),
        }
    }

    pub fn key(&self) -> &KeyPair {
        &self.key
    }

    /// Put a device on the network (again: its old tunnel and connections end).
    pub fn add(&self, device: &str, name: &str, public: [u8; 32], address: Ipv4Addr) {
        self.remove(device);
        let mut table = self.table.write().expect("peers");
        // boringtun takes a 24-bit index and shifts it into the session ids it hands out.
        let index = loop {
            table.next_index = (table.next_index + 1) & 0x00ff_ffff;
            if table.next_index != 0 && !table.by_index.contains_key(&table.next_index) {
                break table.next_index;
            }
        };
        let tunn = Tunn::new(
            self.key.secret.clone(),
            PublicKey::from(public),
            None,
            None,
            index,
            Some(self.limiter.clone()),
        );
        let peer = Arc::new(Peer {
            device: device.to_string(),
            name: name.to_string(),
            public,
            address,
            cut: CancellationToken::new(),
            connections: Default::default(),
            index,
            tunn: Mutex::new(tunn),
            state: Mutex::default(),
        });
        table.by_key.insert(public, peer.clone());
        table.by_index.insert(index, peer.clone());
        table.by_addr.insert(address, peer);
    }

    /// Take a device off the network: its packets are dropped from now on and its open
    /// connections end. False when it was not on it.
    pub fn remove(&self, device: &str) -> bool {
        let mut table = self.table.write().expect("peers");
        let Some(peer) = table.by_addr.values().find(|p| p.device == device).cloned() else {
            return false;
        };
        table.by_key.remove(&peer.public);
        table.by_index.remove(&peer.index);
        table.by_addr.remove(&peer.address);
        peer.cut.cancel();
        true
    }

    /// The device that owns `address` on the network.
    pub fn at(&self, address: Ipv4Addr) -> Option<Arc<Peer>> {
        self.table
            .read()
            .expect("peers")
            .by_addr
            .get(&address)
            .cloned()
    }

    pub fn addresses(&self) -> Vec<Ipv4Addr> {
        self.table
            .read()
            .expect("peers")
            .by_addr
            .keys()
            .copied()
            .collect()
    }

    pub fn status(&self) -> Vec<PeerStatus> {
        let table = self.table.read().expect("peers");
        let mut out: Vec<PeerStatus> = table
            .by_addr
            .values()
            .map(|p| {
                let state = p.state.lock().expect("peer state");
                let since = state.last_packet.map(|t| t.elapsed());
                PeerStatus {
                    device: p.device.clone(),
                    name: p.name.clone(),
                    address: p.address.to_string(),
                    public_key: super::keys::encode(&p.public),
                    connected: since.is_some_and(|s| s < ACTIVE),
                    last_packet_s: since.map(|s| s.as_secs()),
                    endpoint: state.endpoint.map(|e| e.to_string()),
                }
            })
            .collect();
        out.sort_by(|a, b| a.device.cmp(&b.device));
        out
    }

    fn by_index(&self, receiver: u32) -> Option<Arc<Peer>> {
        self.table
            .read()
            .expect("peers")
            .by_index
            .get(&(receiver >> 8))
            .cloned()
    }

    fn by_key(&self, key: &[u8; 32]) -> Option<Arc<Peer>> {
        self.table.read().expect("peers").by_key.get(key).cloned()
    }

    fn all(&self) -> Vec<Arc<Peer>> {
        self.table
            .read()
            .expect("peers")
            .by_addr
            .values()
            .cloned()
            .collect()
    }

    /// The shared handshake limiter counts per second; it is reset as packets come, not by a timer.
    fn reset_limiter(&self) {
        let mut last = self.limiter_reset.lock().expect("limiter");
        if last.elapsed() >= Duration::from_secs(1) {
            self.limiter.reset_count();
            *last = Instant::now();
        }
    }
}

/// Where datagrams go out: the UDP socket in vyred, a recorder in tests.
pub trait Wire: Send + Sync {
    fn send(&self, datagram: &[u8], to: SocketAddr);
}

impl Wire for UdpSocket {
    fn send(&self, datagram: &[u8], to: SocketAddr) {
        // UDP is lossy by nature: a datagram the socket cannot take now is dropped, as a
        // full network would drop it, and WireGuard's timers and TCP recover.
        if let Err(e) = self.try_send_to(datagram, to) {
            tracing::debug!(%to, error = %e, "a WireGuard datagram was dropped");
        }
    }
}

/// The tunnel's work on each packet, without the loop around it (so tests drive it directly).
pub struct Tunnel<W: Wire> {
    pub peers: Peers,
    pub wire: W,
    /// Decrypted IP packets for the stack.
    pub inbound: mpsc::Sender<Vec<u8>>,
}

impl<W: Wire> Tunnel<W> {
    /// A datagram from `from`.
    pub fn datagram(&self, from: SocketAddr, datagram: &[u8], out: &mut [u8]) {
        self.peers.reset_limiter();
        let peer = match Tunn::parse_incoming_packet(datagram) {
            Ok(Packet::HandshakeInit(init)) => {
                let mut cookie = [0u8; 64];
                match self
                    .peers
                    .limiter
                    .verify_packet(Some(from.ip()), datagram, &mut cookie)
                {
                    Ok(_) => {}
                    Err(TunnResult::WriteToNetwork(reply)) => {
                        self.wire.send(reply, from);
                        return;
                    }
                    Err(_) => return,
                }
                let Ok(half) =
                    parse_handshake_anon(&self.peers.key.secret, &self.peers.key.public, &init)
                else {
                    return;
                };
                match self.peers.by_key(&half.peer_static_public) {
                    Some(peer) => peer,
                    None => {
                        tracing::debug!(%from, "a handshake from a key no device holds was dropped");
                        return;
                    }
                }
            }
            Ok(Packet::HandshakeResponse(p)) => match self.peers.by_index(p.receiver_idx) {
                Some(peer) => peer,
                None => return,
            },
            Ok(Packet::PacketCookieReply(p)) => match self.peers.by_index(p.receiver_idx) {
                Some(peer) => peer,
                None => return,
            },
            Ok(Packet::PacketData(p)) => match self.peers.by_index(p.receiver_idx) {
                Some(peer) => peer,
                None => return,
            },
            Err(_) => return,
        };
        let mut tunn = peer.tunn.lock().expect("tunnel");
        self.refresh(&peer, &mut tunn, out);
        let mut result = tunn.decapsulate(Some(from.ip()), datagram, out);
        if matches!(result, TunnResult::Err(_)) {
            if let TunnResult::Err(e) = result {
                tracing::debug!(device = %peer.device, error = ?e, "a WireGuard packet was refused");
            }
            return;
        }
        // It decrypted under the device's key: the device is at `from` now.
        {
            let mut state = peer.state.lock().expect("peer state");
            state.endpoint = Some(from);
            state.last_packet = Some(Instant::now());
        }
        self.peers.wake.notify_one();
        loop {
            match result {
                TunnResult::WriteToNetwork(packet) => {
                    self.wire.send(packet, from);
                    // Packets queued while the handshake ran go out now.
                    result = tunn.decapsulate(None, &[], out);
                }
                TunnResult::WriteToTunnelV4(packet, source) => {
                    if source != peer.address {
                        tracing::debug!(device = %peer.device, %source, "a packet from another device's address was dropped");
                    } else if !packet.is_empty() && self.inbound.try_send(packet.to_vec()).is_err()
                    {
                        tracing::debug!("the stack is behind; a packet was dropped");
                    }
                    return;
                }
                TunnResult::WriteToTunnelV6(..) | TunnResult::Done | TunnResult::Err(_) => return,
            }
        }
    }

    /// An IP packet from the stack, for the device at its destination.
    pub fn packet(&self, packet: &[u8], out: &mut [u8]) {
        let Some(IpAddr::V4(to)) = Tunn::dst_address(packet) else {
            return;
        };
        let Some(peer) = self.peers.at(to) else {
            return;
        };
        let Some(endpoint) = peer.state.lock().expect("peer state").endpoint else {
            // It never spoke: the box does not know where it is (phones start the handshake).
            return;
        };
        let mut tunn = peer.tunn.lock().expect("tunnel");
        self.refresh(&peer, &mut tunn, out);
        if let TunnResult::WriteToNetwork(datagram) = tunn.encapsulate(packet, out) {
            self.wire.send(datagram, endpoint);
        }
    }

    /// Run every device's timers; true while one is still connected (keep ticking).
    pub fn tick(&self, out: &mut [u8]) -> bool {
        let mut connected = false;
        for peer in self.peers.all() {
            let (endpoint, recent) = {
                let state = peer.state.lock().expect("peer state");
                (
                    state.endpoint,
                    state.last_packet.is_some_and(|t| t.elapsed() < ACTIVE),
                )
            };
            if !recent {
                continue;
            }
            connected = true;
            let mut tunn = peer.tunn.lock().expect("tunnel");
            peer.state.lock().expect("peer state").ticked = Some(Instant::now());
            if let (TunnResult::WriteToNetwork(datagram), Some(to)) =
                (tunn.update_timers(out), endpoint)
            {
                self.wire.send(datagram, to);
            }
        }
        connected
    }

    /// Bring a tunnel's clock to now before it judges a packet, when its timers have not run
    /// for a while (they stop while nobody is connected).
    fn refresh(&self, peer: &Peer, tunn: &mut Tunn, out: &mut [u8]) {
        let stale = {
            let mut state = peer.state.lock().expect("peer state");
            let stale = state
                .ticked
                .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
            if stale {
                state.ticked = Some(Instant::now());
            }
            (stale, state.endpoint)
        };
        if let (true, endpoint) = stale {
            match tunn.update_timers(out) {
                TunnResult::WriteToNetwork(datagram) => {
                    if let Some(to) = endpoint {
                        self.wire.send(datagram, to);
                    }
                }
                TunnResult::Err(WireGuardError::ConnectionExpired) | TunnResult::Done => {}
                other => tracing::debug!(device = %peer.device, result = ?other, "timers"),
            }
        }
    }
}

/// Run the tunnel until `stop`: datagrams in, packets out, timers while a device is connected.
pub async fn run(
    udp: Arc<UdpSocket>,
    peers: Peers,
    inbound: mpsc::Sender<Vec<u8>>,
    mut outbound: mpsc::Receiver<Vec<u8>>,
    stop: CancellationToken,
) {
    let tunnel = Tunnel {
        peers: peers.clone(),
        wire: UdpWire(udp.clone()),
        inbound,
    };
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut out = vec![0u8; MAX_DATAGRAM];
    let mut ticking = false;
    let mut next_tick = tokio::time::Instant::now() + TICK;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            received = udp.recv_from(&mut buf) => match received {
                Ok((n, from)) => {
                    tunnel.datagram(from, &buf[..n], &mut out);
                }
                Err(e) => {
                    tracing::debug!(error = %e, "the WireGuard socket");
                }
            },
            packet = outbound.recv() => match packet {
                Some(packet) => tunnel.packet(&packet, &mut out),
                None => return,
            },
            () = tokio::time::sleep_until(next_tick), if ticking => {
                ticking = tunnel.tick(&mut out);
                next_tick = tokio::time::Instant::now() + TICK;
            },
            () = peers.wake.notified(), if !ticking => {
                ticking = true;
                next_tick = tokio::time::Instant::now() + TICK;
            },
        }
    }
}

struct UdpWire(Arc<UdpSocket>);

impl Wire for UdpWire {
    fn send(&self, datagram: &[u8], to: SocketAddr) {
        Wire::send(&*self.0, datagram, to);
    }
}

#[cfg(test)]
mod tests;
