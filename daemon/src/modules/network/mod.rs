//! `network`: the private network (spec 1.5 and 7.10, ADR 0018). A person's phone and laptop
//! join this vyred's WireGuard network, each with a key vyred issued; the HTTP API and the web
//! app are then served to them at the box's network address, inside the tunnel only, and a
//! request that comes through a device's tunnel is that device's: no cookie, no token.
//!
//! - `network.join {name, endpoint?}` makes a device on the network: a WireGuard key pair and
//!   an address for it, returned once as the configuration its WireGuard app imports (the text
//!   and its QR code). It brings the network up if it was down.
//! - `network.status` says whether it is up (or why not), its address and each device's link.
//! - Revoking the device (`devices.revoke`) takes it off the network at once: its packets are
//!   dropped and its open connections end.
//!
//! The parts: [`tunnel`] (WireGuard, on boringtun's Noise implementation), [`stack`] (the
//! TCP/IP stack in vyred's memory the API is served on), [`plan`] (addresses), [`keys`] and
//! [`phone`] (what a joining device is given).

mod keys;
mod phone;
mod plan;
mod stack;
mod tunnel;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::kernel::contracts::certificates::Certificates;
use crate::kernel::device_tokens::DeviceRecord;
use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::store::Migration;
use crate::kernel::tools::{ErrorKind, NoInput, ToolError};

pub use tunnel::PeerStatus;

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE network_devices (
        device TEXT PRIMARY KEY,
        public_key BLOB NOT NULL UNIQUE,
        address TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE network_settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );",
}];

/// The ports the API is served on inside the tunnel: HTTP, and HTTPS once `names` has a
/// certificate.
pub const HTTP_PORT: u16 = 80;
pub const HTTPS_PORT: u16 = 443;
/// Packets queued between the tunnel and the stack, each way.
const QUEUE: usize = 1024;

pub struct NetworkModule;

/// What `endpoint` looks like, as `phone::check_endpoint` takes it: a DNS name or an IPv4
/// address, or a bracketed IPv6 address, then a port from 1 to 65535.
const ENDPOINT: &str = r"^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:]+\]):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$";

/// The network while it is up.
struct Engine {
    peers: tunnel::Peers,
    subnet: Ipv4Addr,
    address: Ipv4Addr,
    listen: SocketAddr,
    stop: CancellationToken,
    /// The stack lives as long as this does.
    _net: Arc<tokio_smoltcp::Net>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[derive(Default)]
struct State {
    engine: Option<Engine>,
    /// Why the network is down, when it tried to come up and could not.
    why: Option<String>,
}

#[derive(Clone)]
struct Network {
    ctx: Ctx,
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinInput {
    /// What the device is, e.g. "phone".
    #[schemars(length(min = 1, max = 64), pattern(crate::kernel::tools::shape::LABEL))]
    name: String,
    /// Where devices reach this machine, host:port (its public name or address and the UDP
    /// port as seen from outside). Kept for the next device; default `network.endpoint`.
    #[serde(default)]
    #[schemars(length(min = 3, max = 260), pattern(ENDPOINT))]
    endpoint: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Joined {
    device: DeviceRecord,
    /// The device's address on the network.
    address: String,
    /// Its WireGuard configuration, shown this once (it holds the device's private key):
    /// import it in the WireGuard app, or scan `qr_svg`.
    config: String,
    /// The configuration as a QR code (SVG), for the WireGuard app's "scan from QR code".
    qr_svg: String,
    /// Where the web app opens once the tunnel is on: at this Vyre's name once it has a
    /// certificate (`names`), else at the network address.
    url: String,
    /// `url` as a QR code (SVG), for the device's camera to open.
    url_qr_svg: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Status {
    /// Whether the network is up: WireGuard listening and the API served inside it.
    up: bool,
    /// Why it is down, when it tried to come up and could not.
    why: Option<String>,
    /// This vyred's address on the network.
    address: Option<String>,
    /// The network, e.g. 100.71.12.0/24.
    subnet: Option<String>,
    /// The UDP address WireGuard listens on.
    listen: String,
    /// Where devices reach this machine (their configuration's Endpoint), once known.
    endpoint: Option<String>,
    /// This vyred's WireGuard public key.
    public_key: Option<String>,
    /// The web app's address on the network.
    url: Option<String>,
    devices: Vec<PeerStatus>,
}

impl Network {
    fn key_path(&self) -> std::path::PathBuf {
        self.ctx.home().root().join("network").join("wireguard.key")
    }

    /// Bring the network up, if it is not: the box's key, the devices that joined, WireGuard's
    /// socket, the stack and the API inside it.
    async fn up<'a>(&self, state: &'a mut State) -> Result<&'a Engine, ToolError> {
        if state.engine.is_none() {
            match self.start_engine().await {
                Ok(engine) => {
                    state.engine = Some(engine);
                    state.why = None;
                }
                Err(why) => {
                    tracing::warn!(%why, "the network cannot come up");
                    state.why = Some(why.clone());
                    return Err(ToolError::new(ErrorKind::Unavailable, "network_down", why));
                }
            }
        }
        Ok(state.engine.as_ref().expect("the engine is up"))
    }

    async fn start_engine(&self) -> Result<Engine, String> {
        let path = self.key_path();
        let key = tokio::task::spawn_blocking(move || keys::KeyPair::load_or_create(&path))
            .await
            .map_err(|e| e.to_string())??;
        let subnet = plan::subnet(key.public.as_bytes());
        let address = plan::box_address(subnet);
        let peers = tunnel::Peers::new(key);
        for row in self.rows().await.map_err(|e| e.message)? {
            match self.ctx.devices().active(&row.device) {
                Some(device) => peers.add(&row.device, &device.name, row.public_key, row.address),
                None => self.forget(&row.device).await,
            }
        }
        let listen = self.ctx.config().network.listen();
        let udp = tokio::net::UdpSocket::bind(listen)
            .await
            .map_err(|e| format!("cannot listen for WireGuard on UDP {listen}: {e}"))?;
        let listen = udp.local_addr().unwrap_or(listen);
        let (inbound_tx, inbound_rx) = mpsc::channel(QUEUE);
        let (outbound_tx, outbound_rx) = mpsc::channel(QUEUE);
        let net = stack::start(address, plan::PREFIX, inbound_rx, outbound_tx);
        let stop = self.ctx.shutdown().child_token();
        let (ctx, configured) = (self.ctx.clone(), self.ctx.config().network.address.clone());
        // The names a request may give: the address, the configured name, and the names there
        // are certificates for (`names`), read per connection.
        let hosts: stack::Hosts = Arc::new(move || {
            let mut hosts = vec![address.to_string()];
            hosts.extend(configured.clone());
            if let Some(certs) = ctx.get::<dyn Certificates>() {
                hosts.extend(certs.names());
            }
            hosts.into()
        });
        let ctx = self.ctx.clone();
        let tls: stack::TlsSource =
            Arc::new(move || ctx.get::<dyn Certificates>()?.server_config());
        let bind = |port, tls| {
            stack::NetListener::bind(
                &net,
                address,
                port,
                peers.clone(),
                hosts.clone(),
                tls,
                stop.clone(),
            )
        };
        let plain = bind(HTTP_PORT, None)
            .await
            .map_err(|e| format!("cannot listen inside the network: {e}"))?;
        let secure = bind(HTTPS_PORT, Some(tls))
            .await
            .map_err(|e| format!("cannot listen inside the network: {e}"))?;
        self.ctx.spawn(tunnel::run(
            Arc::new(udp),
            peers.clone(),
            inbound_tx,
            outbound_rx,
            stop.clone(),
        ));
        self.ctx.serve(plain, stop.clone())?;
        self.ctx.serve(secure, stop.clone())?;
        tracing::info!(%address, %listen, "the network is up");
        let _ = self
            .ctx
            .events()
            .emit(NewEvent::new(
                "network.up",
                json!({ "address": address.to_string(), "listen": listen.to_string() }),
            ))
            .await;
        Ok(Engine {
            peers,
            subnet,
            address,
            listen,
            stop,
            _net: Arc::new(net),
        })
    }

    async fn rows(&self) -> Result<Vec<Row>, ToolError> {
        Ok(self
            .ctx
            .store()
            .read(|conn| {
                let mut stmt =
                    conn.prepare("SELECT device, public_key, address FROM network_devices")?;
                let rows = stmt.query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Vec<u8>>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })?;
                let mut out = Vec::new();
                for row in rows {
                    let (device, key, address) = row?;
                    if let (Ok(public_key), Ok(address)) =
                        (<[u8; 32]>::try_from(key), address.parse::<Ipv4Addr>())
                    {
                        out.push(Row {
                            device,
                            public_key,
                            address,
                        });
                    }
                }
                Ok(out)
            })
            .await?)
    }

    /// Forget a device that left: its row goes, and the log says so.
    async fn forget(&self, device: &str) {
        let device = device.to_string();
        let written = self
            .ctx
            .store()
            .write(move |tx| {
                let n = tx
                    .conn()
                    .execute("DELETE FROM network_devices WHERE device = ?1", [&device])?;
                if n > 0 {
                    tx.emit(NewEvent::new("network.left", json!({ "device": device })))?;
                }
                Ok(())
            })
            .await;
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot forget a device that left the network");
        }
    }

    async fn setting(&self, key: &'static str) -> Option<String> {
        self.ctx
            .store()
            .read(move |conn| {
                use rusqlite::OptionalExtension;
                Ok(conn
                    .query_row(
                        "SELECT value FROM network_settings WHERE key = ?1",
                        [key],
                        |r| r.get::<_, String>(0),
                    )
                    .optional()?)
            })
            .await
            .ok()
            .flatten()
    }

    /// Where devices reach this machine: what the person said last, else the config's.
    async fn endpoint(&self) -> Option<String> {
        match self.setting("endpoint").await {
            Some(e) => Some(e),
            None => self.ctx.config().network.endpoint.clone(),
        }
    }

    async fn join(&self, input: JoinInput) -> Result<Joined, ToolError> {
        if self.ctx.config().network.enabled == Some(false) {
            return Err(ToolError::conflict("network_off", OFF));
        }
        let given = input.endpoint.as_deref().map(str::trim).map(str::to_string);
        let endpoint = match &given {
            Some(e) => e.clone(),
            // Not the input's fault: vyred does not know yet (409, as any state it lacks).
            None => self.endpoint().await.ok_or_else(|| {
                ToolError::conflict(
                    "endpoint_unknown",
                    "say where devices reach this machine: endpoint (host:port, e.g. vyre.example.com:51820), or network.endpoint in config.json",
                )
            })?,
        };
        phone::check_endpoint(&endpoint).map_err(ToolError::invalid)?;
        let mut state = self.state.lock().await;
        let engine = self.up(&mut state).await?;
        let mut taken = engine.peers.addresses();
        taken.push(engine.address);
        let address = plan::free_address(engine.subnet, &taken).ok_or_else(|| {
            ToolError::conflict(
                "network_full",
                "every address on the network is taken (253 devices): revoke one first",
            )
        })?;
        let pair = keys::KeyPair::generate();
        let public = *pair.public.as_bytes();
        let device = self.ctx.devices().add_network(&input.name, public).await?;
        let (id, at) = (device.id.clone(), crate::now_ms());
        let keep_endpoint = given.clone();
        let stored = self
            .ctx
            .store()
            .write(move |tx| {
                tx.conn().execute(
                    "INSERT INTO network_devices (device, public_key, address, created_at) VALUES (?1, ?2, ?3, ?4)",
                    params![id, public.to_vec(), address.to_string(), at],
                )?;
                if let Some(endpoint) = &keep_endpoint {
                    tx.conn().execute(
                        "INSERT INTO network_settings (key, value) VALUES ('endpoint', ?1)
                         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        [endpoint],
                    )?;
                }
                tx.emit(NewEvent::new(
                    "network.joined",
                    json!({ "device": id, "address": address.to_string() }),
                ))?;
                Ok(())
            })
            .await;
        if let Err(e) = stored {
            let _ = self.ctx.devices().revoke(&device.id).await;
            return Err(e.into());
        }
        engine.peers.add(&device.id, &device.name, public, address);
        let box_name = self
            .ctx
            .config()
            .name
            .clone()
            .unwrap_or_else(|| "Vyre".to_string());
        let config = phone::DeviceConfig {
            device_name: &device.name,
            box_name: &box_name,
            secret: &pair.secret_base64(),
            address,
            box_public: &engine.peers.key().public_base64(),
            box_address: engine.address,
            endpoint: &endpoint,
        }
        .text();
        let qr_svg = phone::qr_svg(&config).map_err(ToolError::internal)?;
        let url = self.url(engine.address);
        let url_qr_svg = phone::qr_svg(&url).map_err(ToolError::internal)?;
        Ok(Joined {
            device,
            address: address.to_string(),
            config,
            qr_svg,
            url,
            url_qr_svg,
        })
    }

    async fn status(&self) -> Status {
        let endpoint = self.endpoint().await;
        let state = self.state.lock().await;
        let listen = self.ctx.config().network.listen();
        match &state.engine {
            Some(e) => Status {
                up: true,
                why: None,
                address: Some(e.address.to_string()),
                subnet: Some(format!("{}/{}", e.subnet, plan::PREFIX)),
                listen: e.listen.to_string(),
                endpoint,
                public_key: Some(e.peers.key().public_base64()),
                url: Some(self.url(e.address)),
                devices: e.peers.status(),
            },
            None => Status {
                up: false,
                why: match self.ctx.config().network.enabled {
                    Some(false) => Some(OFF.to_string()),
                    _ => state.why.clone(),
                },
                address: None,
                subnet: None,
                listen: listen.to_string(),
                endpoint,
                public_key: None,
                url: None,
                devices: Vec::new(),
            },
        }
    }

    /// Take revoked devices off the network as they are revoked.
    async fn follow_revocations(self) {
        let mut revoked = self.ctx.devices().revocations();
        let stop = self.ctx.shutdown();
        loop {
            let id = tokio::select! {
                () = stop.cancelled() => return,
                id = revoked.recv() => id,
            };
            match id {
                Ok(id) => self.leave(&id).await,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    // Missed some: take off every device that is no longer active.
                    let gone: Vec<String> = {
                        let state = self.state.lock().await;
                        state.engine.as_ref().map_or_else(Vec::new, |e| {
                            e.peers
                                .status()
                                .into_iter()
                                .map(|p| p.device)
                                .filter(|d| !self.ctx.devices().is_active(d))
                                .collect()
                        })
                    };
                    for id in gone {
                        self.leave(&id).await;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    async fn leave(&self, device: &str) {
        let removed = {
            let state = self.state.lock().await;
            state
                .engine
                .as_ref()
                .is_some_and(|e| e.peers.remove(device))
        };
        if removed {
            tracing::info!(%device, "a device left the network");
        }
        self.forget(device).await;
    }
}

struct Row {
    device: String,
    public_key: [u8; 32],
    address: Ipv4Addr,
}

/// Why the network is down when the config turned it off.
const OFF: &str = "the network is turned off here (network.enabled is false in config.json)";

impl Network {
    /// Where the web app opens through the tunnel: at the name when one is served with its
    /// certificate, else at the address (plain HTTP: WireGuard encrypts it).
    fn url(&self, address: Ipv4Addr) -> String {
        let named = self
            .ctx
            .get::<dyn Certificates>()
            .filter(|c| c.server_config().is_some())
            .and_then(|c| c.names().into_iter().next());
        match named {
            Some(name) => format!("https://{name}/app/"),
            None => format!("http://{address}/app/"),
        }
    }
}

impl Module for NetworkModule {
    fn name(&self) -> &str {
        "network"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(MIGRATIONS).await?;
            let network = Network {
                ctx: ctx.clone(),
                state: Arc::default(),
            };
            ctx.tool_with(
                ToolDef::new(
                    "network.join",
                    "Put a device (a phone, a laptop) on the private network: a WireGuard key and an address for it, returned once as the configuration its WireGuard app imports (text and QR code). Brings the network up if it is down.",
                )
                .finishes()
                // Not in the onboarding: it mints a device (ADR 0009's fence); the onboarding's
                // last step adds the phone right after it finishes.
                .person_only(),
                &network,
                |n, input: JoinInput, _| async move { n.join(input).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "network.status",
                    "Whether the private network is up (or why not), this vyred's address on it, and each device's link.",
                )
                .onboarding(),
                &network,
                |n, _: NoInput, _| async move { Ok::<_, ToolError>(n.status().await) },
            )?;
            ctx.spawn(network.clone().follow_revocations());
            // Up at start when the config says so, or once a device has joined (unless it is
            // turned off).
            let wanted = match ctx.config().network.enabled {
                Some(on) => on,
                None => !network.rows().await.map(|r| r.is_empty()).unwrap_or(true),
            };
            if wanted {
                let mut state = network.state.lock().await;
                // A network that cannot come up leaves the module running: status says why.
                let _ = network.up(&mut state).await;
            }
            Ok(())
        })
    }
}
