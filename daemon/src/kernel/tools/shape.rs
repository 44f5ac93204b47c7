//! Shapes of tool inputs shared by the schemas that describe them: what a tool refuses, its
//! published schema says it refuses (a client validating against the OpenAPI document, and
//! schemathesis generating from it, meet the same rules as the tool). Used in
//! `#[schemars(pattern(...))]` beside `length` and `range`.

/// A label a person reads (a device's, a project's, a person's name): no control character
/// (`char::is_control`: C0, DEL, C1) and at least one character that is not white space.
pub const LABEL: &str = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$";

/// Text that is more than white space (a message, a credential).
pub const NOT_BLANK: &str = r"\S";

/// Holds a word: a letter, a digit or an underscore (recall splits words on anything else).
pub const A_WORD: &str = r"\w";

/// A vault item's name: no path separator or control character, no white space at either end
/// (its other rules, 1 to 128 characters and not `.` or `..`, are `length` and the tool's own).
pub const ITEM: &str = r"^[^\s/\\\u0000-\u001F\u007F-\u009F]([^/\\\u0000-\u001F\u007F-\u009F]*[^\s/\\\u0000-\u001F\u007F-\u009F])?$";

/// Whom a vault item is granted to: a module (`sessions`, `module:sessions`) or an agent
/// (`agent:<name>`).
pub const GRANTEE: &str = r"^((module|agent|watcher):)?[a-z][a-z0-9_-]{0,31}$";

/// An IP address and a port (`127.0.0.1:4477`, `[::1]:4477`, `http://127.0.0.1:4477/`): IPv4
/// and IPv6 (its hex forms, with `::`) exactly, as `SocketAddr` parses them.
pub const SOCKET_ADDRESS: &str = r"^(http://)?((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}|\[(([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,7}:|([0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,5}(:[0-9A-Fa-f]{1,4}){1,2}|([0-9A-Fa-f]{1,4}:){1,4}(:[0-9A-Fa-f]{1,4}){1,3}|([0-9A-Fa-f]{1,4}:){1,3}(:[0-9A-Fa-f]{1,4}){1,4}|([0-9A-Fa-f]{1,4}:){1,2}(:[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(:[0-9A-Fa-f]{1,4}){1,6}|:((:[0-9A-Fa-f]{1,4}){1,7}|:))\]):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])/?$";

/// A thread's (a session's) id, as Claude Code makes them (a uuid) and as transcripts name them.
pub const THREAD_ID: &str = r"^[A-Za-z0-9_-]{1,64}$";

/// A Claude setup token as `claude setup-token` prints it (what onboarding.claude takes).
pub const SETUP_TOKEN: &str = r"^\s*sk-ant-oat[A-Za-z0-9_-]{23,}\s*$";

/// An Anthropic API key (what onboarding.claude takes; an Admin key is not one).
pub const API_KEY: &str = r"^\s*sk-ant-api[A-Za-z0-9_-]{23,}\s*$";

/// A path a person gives: absolute or from `~` (the home), with no `.` or `..` among its
/// parts (`/a/b`, `~/a/.env`, `~`).
pub const FILE_PATH: &str = r"^(~|~?(/([^/.][^/]*|\.[^/.][^/]*|\.\.[^/]+)?)+)$";

/// A login's TOTP seed: base32, with spaces and dashes as people write it, or the
/// `otpauth://totp/` URI a site's setup QR code holds.
pub const TOTP: &str = r"^([A-Za-z2-7\s-]*|otpauth://totp/\S+)$";
/// A payment card's number: 12 to 19 digits, spaces or dashes between (kept as digits).
pub const CARD_NUMBER: &str = r"^[0-9][0-9 -]{10,30}[0-9]$";
/// A card's expiry, `MM/YY` or `MM/YYYY`.
pub const CARD_EXPIRY: &str = r"^(0[1-9]|1[0-2])/([0-9]{2}|[0-9]{4})$";
/// A card's security code.
pub const CARD_CODE: &str = r"^[0-9]{3,4}$";

/// A module's or an agent's name: lowercase letters, digits and dashes, not starting with a
/// dash.
pub const NAME: &str = r"^[a-z0-9][a-z0-9-]*$";

/// Base64 data (an image's bytes).
pub const BASE64: &str = r"^[A-Za-z0-9+/=]+$";

/// A tool's name, `module.tool`: lowercase words; the tool part may hold `.`, `-` and `_`
/// (`tools::valid_name` is the full rule).
pub const TOOL_NAME: &str = r"^[a-z][a-z0-9_-]{0,31}\.[a-z]([a-z0-9._-]{0,61}[a-z0-9_])?$";

/// A permission mode a person may pick: never `bypassPermissions`.
pub const PICKABLE_MODE: &str = r"^(default|acceptEdits|plan)$";

/// What a pattern asks, in words, for the refusal of a value that breaks it (the input layer
/// names the rule, not the regex); `None` for a pattern without words here.
pub fn describe(pattern: &str) -> Option<&'static str> {
    Some(match pattern {
        LABEL => "must be printable text that is not only white space (no control character)",
        NOT_BLANK => "must not be empty or only white space",
        A_WORD => "must hold at least one word (a letter or a digit)",
        ITEM => "must not contain / or \\ or a control character, or start or end with white space",
        GRANTEE => {
            "must name a module (`sessions`, `module:sessions`), an agent (`agent:<name>`) or a watcher (`watcher:<name>`)"
        }
        SOCKET_ADDRESS => "must be an IP address and a port (`127.0.0.1:4477`, `[::1]:4477`)",
        THREAD_ID => "must be a thread id (letters, digits, - and _, up to 64)",
        SETUP_TOKEN => {
            "must be a setup token alone: the sk-ant-oat… line `claude setup-token` prints (an API key, sk-ant-api…, goes with mode api-key)"
        }
        API_KEY => {
            "must be an Anthropic API key alone: sk-ant-api… from console.anthropic.com (a setup token, sk-ant-oat…, goes with mode setup-token; a gateway's key goes in from a terminal: vyre vault put anthropic-api-key)"
        }
        FILE_PATH => "must be a path from / or from ~, with no . or .. in it",
        TOTP => {
            "must be a base32 TOTP seed (letters A to Z and digits 2 to 7) or an otpauth://totp/ URI"
        }
        CARD_NUMBER => "must be a card number (digits, with spaces or dashes between)",
        CARD_EXPIRY => "must be the expiry as MM/YY or MM/YYYY",
        CARD_CODE => "must be the card's 3 or 4 digit security code",
        NAME => "must be lowercase letters, digits and dashes, not starting with a dash",
        BASE64 => "must be base64 data (letters, digits, +, / and =)",
        TOOL_NAME => "must be a tool's name, module.tool (e.g. threads.list)",
        PICKABLE_MODE => {
            "must be default, acceptEdits or plan (bypassPermissions is never offered)"
        }
        _ => return None,
    })
}

/// Addresses [`SOCKET_ADDRESS`] accepts; the pairing module checks that each also parses.
#[cfg(test)]
pub(crate) const ADDRESS_EXAMPLES: &[&str] = &[
    "127.0.0.1:4477",
    "10.0.0.255:1",
    "[::1]:65535",
    "[fe80::1:2]:80",
    "[1:2:3:4:5:6:7:8]:1",
    "[::]:9",
    "http://127.0.0.1:4477/",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The patterns are valid for the regex engines that read them (ECMA-262 and Python's, by
    /// way of Rust's `regex`, whose syntax covers what they use here) and say what the tools
    /// check.
    #[test]
    fn the_patterns_accept_and_refuse_what_the_tools_do() {
        let re = |p: &str| regex::Regex::new(p).unwrap();
        let label = re(LABEL);
        for ok in ["phone", " my laptop ", "café", "a"] {
            assert!(label.is_match(ok), "{ok:?}");
        }
        for bad in ["", "   ", "a\u{7}b", "tab\there", "\u{85}"] {
            assert!(!label.is_match(bad), "{bad:?}");
        }
        let tool = re(TOOL_NAME);
        for ok in ["threads.list", "files.search", "a.b.c"] {
            assert!(tool.is_match(ok), "{ok:?}");
            assert!(crate::kernel::tools::valid_name(ok), "{ok:?}");
        }
        for bad in [
            "threads",
            ".list",
            "Threads.list",
            "a/b.c",
            "threads.list\n",
        ] {
            assert!(!tool.is_match(bad), "{bad:?}");
        }
        let name = re(NAME);
        assert!(name.is_match("juno-2"));
        for bad in ["", "-x", "Juno", "a_b"] {
            assert!(!name.is_match(bad), "{bad:?}");
        }
        let item = re(ITEM);
        for ok in ["github-token", "my key", "é"] {
            assert!(item.is_match(ok), "{ok:?}");
        }
        for bad in ["", " lead", "trail ", "a/b", "a\\b", "a\u{1}b"] {
            assert!(!item.is_match(bad), "{bad:?}");
        }
        let grantee = re(GRANTEE);
        for ok in ["sessions", "module:sessions", "agent:juno"] {
            assert!(grantee.is_match(ok), "{ok:?}");
        }
        for bad in ["", "person:me", "agent:", "Sessions"] {
            assert!(!grantee.is_match(bad), "{bad:?}");
        }
        let addr = re(SOCKET_ADDRESS);
        let addr_ok = ADDRESS_EXAMPLES;
        for ok in addr_ok {
            assert!(addr.is_match(ok), "{ok:?}");
        }
        for bad in [
            "",
            "[3c]:65530",
            "[1:2:3]:1",
            "[::1::]:1",
            "box:4477",
            "256.0.0.1:1",
            "1.2.3.4:0",
            "1.2.3.4:65536",
            "1.2.3.4",
        ] {
            assert!(!addr.is_match(bad), "{bad:?}");
        }
        let word = re(A_WORD);
        assert!(word.is_match("  zebra "));
        assert!(!word.is_match(" -- ' "));
        assert!(re(NOT_BLANK).is_match(" x "));
        assert!(!re(NOT_BLANK).is_match(" \n "));
    }
}
