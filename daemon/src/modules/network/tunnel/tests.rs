//! The tunnel against a real WireGuard peer (boringtun's, on the phone's side), on an
//! in-memory wire: what it accepts, from whom, and what it drops.

use super::*;
use boringtun::x25519::StaticSecret;

#[derive(Default)]
struct Recorder(Mutex<Vec<(Vec<u8>, SocketAddr)>>);

impl Wire for Recorder {
    fn send(&self, datagram: &[u8], to: SocketAddr) {
        self.0.lock().unwrap().push((datagram.to_vec(), to));
    }
}

impl Recorder {
    fn take(&self) -> Vec<(Vec<u8>, SocketAddr)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

const PHONE: Ipv4Addr = Ipv4Addr::new(100, 70, 1, 2);
const LAPTOP: Ipv4Addr = Ipv4Addr::new(100, 70, 1, 3);
const BOX: Ipv4Addr = Ipv4Addr::new(100, 70, 1, 1);

fn from() -> SocketAddr {
    "192.0.2.7:40000".parse().unwrap()
}

/// A minimal IPv4 packet (UDP, no checksum) from `src` to `dst`.
fn ip(src: Ipv4Addr, dst: Ipv4Addr, payload: &[u8]) -> Vec<u8> {
    let len = (20 + payload.len()) as u16;
    let mut p = vec![
        0x45,
        0,
        (len >> 8) as u8,
        len as u8,
        0,
        0,
        0,
        0,
        64,
        17,
        0,
        0,
    ];
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(payload);
    p
}

struct Rig {
    tunnel: Tunnel<Recorder>,
    inbound: mpsc::Receiver<Vec<u8>>,
    box_public: PublicKey,
    phone: KeyPair,
    laptop: KeyPair,
    out: Vec<u8>,
}

fn rig() -> Rig {
    let key = KeyPair::generate();
    let box_public = key.public;
    let peers = Peers::new(key);
    let (phone, laptop) = (KeyPair::generate(), KeyPair::generate());
    peers.add("dphone", "phone", *phone.public.as_bytes(), PHONE);
    peers.add("dlaptop", "laptop", *laptop.public.as_bytes(), LAPTOP);
    let (tx, inbound) = mpsc::channel(16);
    Rig {
        tunnel: Tunnel {
            peers,
            wire: Recorder::default(),
            inbound: tx,
        },
        inbound,
        box_public,
        phone,
        laptop,
        out: vec![0u8; MAX_DATAGRAM],
    }
}

/// A client's tunnel to the box, with its handshake done through `rig`.
fn connect(rig: &mut Rig, secret: StaticSecret) -> Option<Tunn> {
    let mut client = Tunn::new(secret, rig.box_public, None, None, 7, None);
    let mut buf = vec![0u8; 2048];
    let TunnResult::WriteToNetwork(init) = client.format_handshake_initiation(&mut buf, false)
    else {
        panic!("a handshake initiation");
    };
    let init = init.to_vec();
    rig.tunnel.datagram(from(), &init, &mut rig.out);
    let replies = rig.tunnel.wire.take();
    let (response, to) = replies.first()?;
    assert_eq!(*to, from(), "the answer goes where the handshake came from");
    let mut out = vec![0u8; 2048];
    match client.decapsulate(None, response, &mut out) {
        TunnResult::WriteToNetwork(keepalive) => {
            let keepalive = keepalive.to_vec();
            rig.tunnel.datagram(from(), &keepalive, &mut rig.out);
        }
        TunnResult::Done => {}
        other => panic!("handshake response: {other:?}"),
    }
    Some(client)
}

fn send(rig: &mut Rig, client: &mut Tunn, packet: &[u8]) {
    let mut buf = vec![0u8; 2048];
    let TunnResult::WriteToNetwork(datagram) = client.encapsulate(packet, &mut buf) else {
        panic!("encapsulate");
    };
    let datagram = datagram.to_vec();
    rig.tunnel.datagram(from(), &datagram, &mut rig.out);
}

#[test]
fn a_device_reaches_the_stack_only_from_its_own_address() {
    let mut rig = rig();
    let mut phone = {
        let key = rig.phone.secret.clone();
        connect(&mut rig, key)
    }
    .expect("an issued key is answered");
    send(&mut rig, &mut phone, &ip(PHONE, BOX, b"hello"));
    assert_eq!(rig.inbound.try_recv().unwrap(), ip(PHONE, BOX, b"hello"));
    // Posing as the laptop, through the phone's own tunnel: dropped.
    send(&mut rig, &mut phone, &ip(LAPTOP, BOX, b"as the laptop"));
    assert!(
        rig.inbound.try_recv().is_err(),
        "a packet from another device's address is dropped"
    );
    let status = rig.tunnel.peers.status();
    let me = status.iter().find(|p| p.device == "dphone").unwrap();
    assert!(me.connected);
    assert_eq!(me.endpoint.as_deref(), Some("192.0.2.7:40000"));
}

#[test]
fn a_key_vyred_did_not_issue_gets_no_answer() {
    let mut rig = rig();
    let stranger = KeyPair::generate();
    assert!(connect(&mut rig, stranger.secret).is_none());
    assert!(rig.tunnel.wire.take().is_empty());
    // Garbage, short or long, is dropped too.
    for junk in [&b""[..], &[1, 0, 0, 0][..], &[4u8; 200][..], &[9u8; 60][..]] {
        rig.tunnel.datagram(from(), junk, &mut rig.out);
    }
    assert!(rig.tunnel.wire.take().is_empty());
    assert!(rig.inbound.try_recv().is_err());
}

#[test]
fn a_removed_device_is_cut_and_its_tunnel_carries_nothing() {
    let mut rig = rig();
    let mut phone = {
        let key = rig.phone.secret.clone();
        connect(&mut rig, key)
    }
    .unwrap();
    let cut = rig.tunnel.peers.at(PHONE).unwrap().cut.clone();
    assert!(rig.tunnel.peers.remove("dphone"));
    assert!(cut.is_cancelled(), "its open connections end");
    send(&mut rig, &mut phone, &ip(PHONE, BOX, b"still there?"));
    assert!(rig.inbound.try_recv().is_err());
    assert!(
        {
            let key = rig.phone.secret.clone();
            connect(&mut rig, key)
        }
        .is_none(),
        "nor can it shake hands again"
    );
    assert!(!rig.tunnel.peers.remove("dphone"));
}

#[test]
fn answers_go_only_to_a_device_that_spoke_and_only_under_its_session() {
    let mut rig = rig();
    let mut phone = {
        let key = rig.phone.secret.clone();
        connect(&mut rig, key)
    }
    .unwrap();
    rig.tunnel.wire.take();
    rig.tunnel.packet(&ip(BOX, PHONE, b"answer"), &mut rig.out);
    let sent = rig.tunnel.wire.take();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1, from());
    let mut out = vec![0u8; 2048];
    match phone.decapsulate(None, &sent[0].0, &mut out) {
        TunnResult::WriteToTunnelV4(p, src) => {
            assert_eq!(src, BOX);
            assert_eq!(p, &ip(BOX, PHONE, b"answer")[..]);
        }
        other => panic!("{other:?}"),
    }
    // The laptop never spoke: vyred does not know where it is, and sends nothing.
    rig.tunnel.packet(&ip(BOX, LAPTOP, b"answer"), &mut rig.out);
    assert!(rig.tunnel.wire.take().is_empty());
    let _ = &rig.laptop;
}
