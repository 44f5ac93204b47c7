//! Origin patterns, for the config's lists of places vyred may send to (`push.services`):
//! `https://fcm.googleapis.com`, `https://*.push.apple.com` (any name under it, not itself),
//! `http://127.0.0.1:9000` (a test's). Only the scheme, host and port; no path, no user.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPattern {
    scheme: String,
    /// The host, or with `wildcard` the name the host must be under.
    host: String,
    wildcard: bool,
    port: Option<u16>,
}

impl OriginPattern {
    pub fn parse(text: &str) -> Result<OriginPattern, String> {
        let bad = || {
            format!(
                "{text:?} is not an origin like https://push.example.com or https://*.example.com"
            )
        };
        let (scheme, rest) = text.split_once("://").ok_or_else(bad)?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "https" && scheme != "http" {
            return Err(bad());
        }
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '@', '?', '#', ' ']) {
            return Err(bad());
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) => (h, Some(p.parse::<u16>().map_err(|_| bad())?)),
            None => (rest, None),
        };
        let (wildcard, host) = match host.strip_prefix("*.") {
            Some(h) => (true, h),
            None => (false, host),
        };
        let host = host.to_ascii_lowercase();
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        if host.is_empty() || host.contains('*') || !host.split('.').all(label_ok) {
            return Err(bad());
        }
        Ok(OriginPattern {
            scheme,
            host,
            wildcard,
            port,
        })
    }

    /// Whether `origin` (`scheme://host[:port]`, lowercased) is one this pattern allows.
    pub fn matches(&self, origin: &str) -> bool {
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false;
        };
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) => match p.parse::<u16>() {
                Ok(p) => (h, Some(p)),
                Err(_) => return false,
            },
            None => (rest, None),
        };
        if scheme != self.scheme || port != self.port {
            return false;
        }
        if self.wildcard {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.host
        }
    }
}

impl std::fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}://{}{}",
            self.scheme,
            if self.wildcard { "*." } else { "" },
            self.host
        )?;
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

impl Serialize for OriginPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for OriginPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        OriginPattern::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(pattern: &str, origin: &str) -> bool {
        OriginPattern::parse(pattern).unwrap().matches(origin)
    }

    #[test]
    fn exact_and_wildcard_hosts_with_their_scheme_and_port() {
        assert!(allows(
            "https://fcm.googleapis.com",
            "https://fcm.googleapis.com"
        ));
        assert!(allows(
            "https://FCM.googleapis.com/",
            "https://fcm.googleapis.com"
        ));
        assert!(!allows(
            "https://fcm.googleapis.com",
            "http://fcm.googleapis.com"
        ));
        assert!(!allows(
            "https://fcm.googleapis.com",
            "https://fcm.googleapis.com:8443"
        ));
        assert!(!allows(
            "https://fcm.googleapis.com",
            "https://evilfcm.googleapis.com"
        ));
        assert!(allows(
            "https://*.push.apple.com",
            "https://web.push.apple.com"
        ));
        assert!(allows(
            "https://*.push.apple.com",
            "https://a.b.push.apple.com"
        ));
        assert!(!allows(
            "https://*.push.apple.com",
            "https://push.apple.com"
        ));
        assert!(!allows(
            "https://*.push.apple.com",
            "https://evilpush.apple.com"
        ));
        assert!(!allows(
            "https://*.push.apple.com",
            "https://push.apple.com.evil.example"
        ));
        assert!(allows("http://127.0.0.1:9000", "http://127.0.0.1:9000"));
        assert!(!allows("http://127.0.0.1:9000", "http://127.0.0.1:9001"));
    }

    #[test]
    fn what_is_not_an_origin_is_refused_in_words() {
        for bad in [
            "fcm.googleapis.com",
            "ftp://x.example",
            "https://x.example/path",
            "https://user@x.example",
            "https://*",
            "https://a.*.example",
            "https://x.example:port",
            "https://",
        ] {
            let err = OriginPattern::parse(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} passed"));
            assert!(err.contains("is not an origin"), "{err}");
        }
        assert_eq!(
            OriginPattern::parse("https://*.Push.Apple.com/")
                .unwrap()
                .to_string(),
            "https://*.push.apple.com"
        );
    }
}
