//! The TCP/IP stack the API is served on: smoltcp in vyred's own memory, fed the packets the
//! tunnel decrypted and handing it the packets to encrypt. Nothing here is a socket of the
//! operating system's, so the API on the network cannot be reached except through a device's
//! tunnel, and vyred needs no TUN device and no privilege for it (ADR 0018).
//!
//! A connection is tied to its device when it is accepted: its source address is one only that
//! device's tunnel can carry (the tunnel checks it), so [`NetListener`] names the device from
//! the address, and drops a connection whose device just left.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::{Sink, Stream};
use smoltcp::iface::Config;
use smoltcp::phy::{DeviceCapabilities, Medium};
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr};
use tokio::sync::mpsc;
use tokio_smoltcp::{BufferSize, Net, NetConfig, TcpStream};
use tokio_util::sync::{CancellationToken, PollSender};

use super::tunnel::Peers;
use crate::surfaces::api::Peer;

/// The largest IP packet a device's tunnel carries (WireGuard's usual interface MTU).
pub const MTU: usize = 1420;
/// Sockets listening on a port at once: each takes one connection as it opens, so this many
/// can open together (a browser opens six) before one is refused.
pub const BACKLOG: usize = 8;

/// The stack's side of the tunnel: packets in from it, packets out to it.
struct Pipe {
    inbound: mpsc::Receiver<Vec<u8>>,
    outbound: PollSender<Vec<u8>>,
    caps: DeviceCapabilities,
}

impl Stream for Pipe {
    type Item = io::Result<Vec<u8>>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inbound.poll_recv(cx).map(|p| p.map(Ok))
    }
}

impl Sink<Vec<u8>> for Pipe {
    type Error = io::Error;
    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.outbound.poll_reserve(cx).map_err(io::Error::other)
    }
    fn start_send(mut self: Pin<&mut Self>, item: Vec<u8>) -> io::Result<()> {
        self.outbound.send_item(item).map_err(io::Error::other)
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl tokio_smoltcp::device::AsyncDevice for Pipe {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.caps
    }
}

/// A stack at `address` (in a network of `prefix` bits), on the tunnel's two channels.
pub fn start(
    address: Ipv4Addr,
    prefix: u8,
    inbound: mpsc::Receiver<Vec<u8>>,
    outbound: mpsc::Sender<Vec<u8>>,
) -> Net {
    let mut caps = DeviceCapabilities::default();
    caps.medium = Medium::Ip;
    caps.max_transmission_unit = MTU;
    let pipe = Pipe {
        inbound,
        outbound: PollSender::new(outbound),
        caps,
    };
    let mut iface = Config::new(HardwareAddress::Ip);
    // TCP's initial sequence numbers come from this seed: never a constant.
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed).expect("the OS random source");
    iface.random_seed = u64::from_ne_bytes(seed);
    let mut config = NetConfig::new(
        iface,
        IpCidr::new(IpAddress::Ipv4(address), prefix),
        Vec::new(),
    );
    // Room for a page's worth of answer in flight per connection; a tunnel's round trip is short.
    config.buffer_size = BufferSize {
        tcp_rx_size: 64 * 1024,
        tcp_tx_size: 128 * 1024,
        ..BufferSize::default()
    };
    Net::new(pipe, config)
}

/// The connections to one port of the stack, each with the device it came from.
pub struct NetListener {
    accepted: mpsc::Receiver<(TcpStream, Peer)>,
    local: SocketAddr,
}

impl NetListener {
    /// Listen on `port` at the stack's address; connections from an address no device holds
    /// are closed unanswered.
    pub async fn bind(
        net: &Net,
        address: Ipv4Addr,
        port: u16,
        peers: Peers,
        hosts: std::sync::Arc<[String]>,
        stop: CancellationToken,
    ) -> io::Result<NetListener> {
        let local = SocketAddr::from((address, port));
        let (tx, accepted) = mpsc::channel(BACKLOG);
        for _ in 0..BACKLOG {
            let mut listener = net.tcp_bind(local).await?;
            let (tx, peers, hosts, stop) = (tx.clone(), peers.clone(), hosts.clone(), stop.clone());
            tokio::spawn(async move {
                loop {
                    let accepted = tokio::select! {
                        () = stop.cancelled() => return,
                        accepted = listener.accept() => accepted,
                    };
                    let (stream, from) = match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            tracing::debug!(error = %e, "network accept");
                            continue;
                        }
                    };
                    let SocketAddr::V4(from) = from else { continue };
                    let Some(peer) = peers.at(*from.ip()) else {
                        tracing::debug!(%from, "a connection from an address no device holds was closed");
                        continue;
                    };
                    let peer = Peer::Network {
                        device: peer.device.clone(),
                        addr: from.into(),
                        hosts: hosts.clone(),
                        cut: peer.cut.clone(),
                    };
                    if tx.send((stream, peer)).await.is_err() {
                        return;
                    }
                }
            });
        }
        Ok(NetListener { accepted, local })
    }
}

impl axum::serve::Listener for NetListener {
    type Io = TcpStream;
    type Addr = Peer;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(accepted) => accepted,
            // The accept tasks end only when the network stops; so does serving then.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(Peer::Tcp(self.local))
    }
}

impl crate::surfaces::api::serve::Serves for NetListener {
    fn peer(_: &Self::Io, addr: &Self::Addr) -> Peer {
        addr.clone()
    }
}
