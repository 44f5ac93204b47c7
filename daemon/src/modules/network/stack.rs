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
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::rustls::ServerConfig;

use futures_util::{Sink, Stream};
use smoltcp::iface::Config;
use smoltcp::phy::{DeviceCapabilities, Medium};
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr};
use tokio::sync::mpsc;
use tokio_smoltcp::{BufferSize, Net, NetConfig, TcpStream};
use tokio_util::sync::{CancellationToken, PollSender};

use super::tunnel::{Peers, Slot};
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

/// The TLS configuration a port serves with, read per connection (a renewed certificate is
/// served at once); `None` closes the connection.
pub type TlsSource = Arc<dyn Fn() -> Option<Arc<ServerConfig>> + Send + Sync>;
/// The names a request may give as its `Host`, read per connection.
pub type Hosts = Arc<dyn Fn() -> Arc<[String]> + Send + Sync>;
/// How long a TLS handshake may take.
const HANDSHAKE: std::time::Duration = std::time::Duration::from_secs(10);

/// A connection on the network, counted against its device's cap while it is open.
pub struct NetIo {
    stream: Conn,
    _slot: Slot,
}

/// Plain HTTP, or HTTPS.
enum Conn {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl AsyncRead for NetIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for NetIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().stream {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The connections to one port of the stack, each with the device it came from.
pub struct NetListener {
    accepted: mpsc::Receiver<(NetIo, Peer)>,
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
        hosts: Hosts,
        tls: Option<TlsSource>,
        stop: CancellationToken,
    ) -> io::Result<NetListener> {
        let local = SocketAddr::from((address, port));
        let (tx, accepted) = mpsc::channel(BACKLOG);
        for _ in 0..BACKLOG {
            let mut listener = net.tcp_bind(local).await?;
            let (tx, peers, hosts, tls, stop) = (
                tx.clone(),
                peers.clone(),
                hosts.clone(),
                tls.clone(),
                stop.clone(),
            );
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
                    let Some(slot) = peer.hold() else {
                        tracing::debug!(device = %peer.device, "a device over its connection cap: a connection was closed");
                        continue;
                    };
                    let peer = Peer::Network {
                        device: peer.device.clone(),
                        addr: from.into(),
                        hosts: hosts(),
                        cut: peer.cut.clone(),
                    };
                    let Some(tls) = &tls else {
                        let io = NetIo {
                            stream: Conn::Plain(stream),
                            _slot: slot,
                        };
                        if tx.send((io, peer)).await.is_err() {
                            return;
                        }
                        continue;
                    };
                    let Some(config) = tls() else {
                        tracing::debug!("no certificate yet: an HTTPS connection was closed");
                        continue;
                    };
                    // The handshake runs on its own, so a slow one holds up no other.
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let acceptor = tokio_rustls::TlsAcceptor::from(config);
                        match tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await {
                            Ok(Ok(tls)) => {
                                let io = NetIo {
                                    stream: Conn::Tls(Box::new(tls)),
                                    _slot: slot,
                                };
                                let _ = tx.send((io, peer)).await;
                            }
                            Ok(Err(e)) => tracing::debug!(error = %e, "a TLS handshake failed"),
                            Err(_) => tracing::debug!("a TLS handshake took too long"),
                        }
                    });
                }
            });
        }
        Ok(NetListener { accepted, local })
    }
}

impl axum::serve::Listener for NetListener {
    type Io = NetIo;
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::serve::Listener;

    use super::*;
    use crate::modules::network::keys::KeyPair;
    use crate::modules::network::tunnel::CONNECTIONS_PER_DEVICE;

    /// A device that opens connection after connection gets [`CONNECTIONS_PER_DEVICE`] of them
    /// served at once, and another only when one of those closed. Two stacks wired back to
    /// back stand for the tunnel: the device's and vyred's.
    #[tokio::test]
    async fn a_device_holds_only_so_many_connections_at_once() {
        let (box_ip, phone_ip) = (Ipv4Addr::new(100, 71, 12, 1), Ipv4Addr::new(100, 71, 12, 2));
        let (to_box, box_in) = mpsc::channel(256);
        let (to_phone, phone_in) = mpsc::channel(256);
        let box_net = start(box_ip, 24, box_in, to_phone);
        let phone_net = start(phone_ip, 24, phone_in, to_box);
        let peers = Peers::new(KeyPair::generate());
        peers.add("d-phone", "phone", [7; 32], phone_ip);
        let hosts: Hosts = Arc::new(|| Arc::from(Vec::new()));
        let stop = CancellationToken::new();
        let mut listener =
            NetListener::bind(&box_net, box_ip, 80, peers, hosts, None, stop.clone())
                .await
                .unwrap();
        let to = SocketAddr::from((box_ip, 80));
        let mut held = Vec::new();
        let mut open = Vec::new();
        for _ in 0..CONNECTIONS_PER_DEVICE + 4 {
            open.push(phone_net.tcp_connect(to).await.unwrap());
            // What the listener hands on is what vyred serves.
            while let Ok((io, _)) =
                tokio::time::timeout(Duration::from_millis(100), listener.accept()).await
            {
                held.push(io);
            }
        }
        assert_eq!(held.len(), CONNECTIONS_PER_DEVICE);
        // One closes: the next one the device opens is served.
        drop(held.pop());
        open.push(phone_net.tcp_connect(to).await.unwrap());
        let next = tokio::time::timeout(Duration::from_secs(2), listener.accept()).await;
        assert!(next.is_ok(), "a freed slot serves the next connection");
        stop.cancel();
    }
}
