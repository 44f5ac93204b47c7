//! A browser's credential is bound to Vyre's origin: what another loopback port receives is useless.
