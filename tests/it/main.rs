//! Integration tests: a real vyred on a temp `VYRE_HOME`, driven through its socket, its HTTP
//! listener and the `vyre` binary. One test binary, so CI links once.

mod support;

mod api;
mod events;
mod lifecycle;
mod modules;
mod vault;
