//! Addresses on the network: a /24 of the shared address space (100.64.0.0/10, RFC 6598, which
//! home and office networks do not use), chosen from the box's key so two people's networks
//! rarely share one; the box is `.1`, devices take `.2` to `.254`.

use std::net::Ipv4Addr;

/// The prefix length of a network.
pub const PREFIX: u8 = 24;

/// The network of the box whose WireGuard public key is `key`.
pub fn subnet(key: &[u8; 32]) -> Ipv4Addr {
    Ipv4Addr::new(100, 64 + key[0] % 64, key[1], 0)
}

/// The box's own address in `subnet`.
pub fn box_address(subnet: Ipv4Addr) -> Ipv4Addr {
    let [a, b, c, _] = subnet.octets();
    Ipv4Addr::new(a, b, c, 1)
}

/// The lowest address in `subnet` no device holds, if one is left.
pub fn free_address(subnet: Ipv4Addr, taken: &[Ipv4Addr]) -> Option<Ipv4Addr> {
    let [a, b, c, _] = subnet.octets();
    (2..=254)
        .map(|d| Ipv4Addr::new(a, b, c, d))
        .find(|ip| !taken.contains(ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_is_in_the_shared_space_and_devices_never_get_the_box_or_broadcast() {
        for first in [0u8, 63, 64, 127, 200, 255] {
            let net = subnet(&[first; 32]);
            let [a, b, _, d] = net.octets();
            assert_eq!(a, 100);
            assert!((64..128).contains(&b), "{net}");
            assert_eq!(d, 0);
        }
        let net = Ipv4Addr::new(100, 70, 9, 0);
        assert_eq!(box_address(net), Ipv4Addr::new(100, 70, 9, 1));
        assert_eq!(free_address(net, &[]), Some(Ipv4Addr::new(100, 70, 9, 2)));
        let taken: Vec<Ipv4Addr> = (2..=253).map(|d| Ipv4Addr::new(100, 70, 9, d)).collect();
        assert_eq!(
            free_address(net, &taken),
            Some(Ipv4Addr::new(100, 70, 9, 254))
        );
        let all: Vec<Ipv4Addr> = (2..=254).map(|d| Ipv4Addr::new(100, 70, 9, d)).collect();
        assert_eq!(free_address(net, &all), None);
    }
}
