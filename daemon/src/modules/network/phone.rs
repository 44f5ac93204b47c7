//! What a device is given when it joins: its WireGuard configuration, as the WireGuard apps
//! import it (a file, or the QR code of the same text, which the phone apps scan).

use std::net::Ipv4Addr;

use qrcode::QrCode;
use qrcode::render::svg;

/// The phone's side of its tunnel.
pub struct DeviceConfig<'a> {
    pub device_name: &'a str,
    pub box_name: &'a str,
    pub secret: &'a str,
    pub address: Ipv4Addr,
    pub box_public: &'a str,
    pub box_address: Ipv4Addr,
    pub endpoint: &'a str,
}

/// How often the device says it is there, through home routers that forget a quiet UDP flow.
pub const KEEPALIVE_S: u16 = 25;

impl DeviceConfig<'_> {
    /// The configuration in `wg-quick`'s format. Only the box's address goes through the
    /// tunnel: the device's other traffic goes as it always went.
    pub fn text(&self) -> String {
        format!(
            "[Interface]\n\
             # Vyre: {device} on {host}\n\
             PrivateKey = {secret}\n\
             Address = {address}/32\n\
             \n\
             [Peer]\n\
             PublicKey = {box_public}\n\
             AllowedIPs = {box_address}/32\n\
             Endpoint = {endpoint}\n\
             PersistentKeepalive = {KEEPALIVE_S}\n",
            device = one_line(self.device_name),
            host = one_line(self.box_name),
            secret = self.secret,
            address = self.address,
            box_public = self.box_public,
            box_address = self.box_address,
            endpoint = self.endpoint,
        )
    }
}

/// A name put in a comment stays on its line.
fn one_line(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).collect()
}

/// `text` as a QR code, an SVG image.
pub fn qr_svg(text: &str) -> Result<String, String> {
    let code = QrCode::new(text.as_bytes()).map_err(|e| format!("cannot make the QR code: {e}"))?;
    Ok(code
        .render::<svg::Color<'_>>()
        .min_dimensions(256, 256)
        .quiet_zone(true)
        .build())
}

/// Whether `endpoint` is `host:port`, as WireGuard takes it: a DNS name, an IPv4 address or
/// a bracketed IPv6 address, and a port.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    let bad = || {
        format!("{endpoint:?} is not host:port (e.g. vyre.example.com:51820 or 203.0.113.7:51820)")
    };
    let (host, port) = endpoint.rsplit_once(':').ok_or_else(bad)?;
    port.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(bad)?;
    let host_ok = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        v6.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        host.parse::<Ipv4Addr>().is_ok()
            || (!host.is_empty()
                && host.len() <= 253
                && host.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                }))
    };
    if host_ok { Ok(()) } else { Err(bad()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_routes_only_the_box_and_keeps_names_on_their_line() {
        let text = DeviceConfig {
            device_name: "phone\n[Peer]\nAllowedIPs = 0.0.0.0/0",
            box_name: "box",
            secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=",
            address: Ipv4Addr::new(100, 70, 1, 2),
            box_public: "cHVibGljcHVibGljcHVibGljcHVibGljcHVibGljMTI=",
            box_address: Ipv4Addr::new(100, 70, 1, 1),
            endpoint: "vyre.example.com:51820",
        }
        .text();
        let lines = |start: &str| text.lines().filter(|l| l.starts_with(start)).count();
        assert_eq!(lines("[Peer]"), 1, "{text}");
        assert_eq!(lines("AllowedIPs"), 1, "{text}");
        assert!(text.contains("AllowedIPs = 100.70.1.1/32\n"));
        assert!(text.contains("Address = 100.70.1.2/32\n"));
        assert!(text.contains("PersistentKeepalive = 25\n"));
        assert!(qr_svg(&text).unwrap().contains("<svg"));
    }

    #[test]
    fn an_endpoint_is_host_and_port() {
        for good in [
            "vyre.example.com:51820",
            "203.0.113.7:1",
            "[2001:db8::1]:51820",
            "box:51820",
        ] {
            assert!(check_endpoint(good).is_ok(), "{good}");
        }
        for bad in [
            "vyre.example.com",
            "203.0.113.7:0",
            ":51820",
            "a b:1",
            "x:65536",
            "[::1:1",
            "-bad.example.com:1",
            "bad\n[Peer]:1",
        ] {
            assert!(check_endpoint(bad).is_err(), "{bad}");
        }
    }
}
